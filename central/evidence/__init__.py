"""Evidence for a labour court: bundles and offline checks. The office receipts of each gate's chain
they carry are issued by the ingest (``central/ingest/receipts.py``)."""
