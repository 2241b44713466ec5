"""The office ledger: append-only events and what is derived from them (shifts, statements)."""
