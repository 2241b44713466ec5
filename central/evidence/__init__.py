"""Evidence for a labour court: office receipts of each gate's chain, bundles, offline checks."""
