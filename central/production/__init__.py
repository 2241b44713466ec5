"""Production pay of stevedores (rules E1-E8, DL 2.032/1940) and dock workers (rules C1-C6,
DL 3.844/1941): the pure engine (``engine``), its rulebooks (``rulebook``), the office's CSV input
(``csvio``), the ledger tables (``schema``, ``store``), the bus ingest (``ingest``) and the
``portgate production`` commands (``cli``). See docs/production.md."""
