"""Office MQTT ingest: events from every gate into the ledger, exactly once."""
