"""Labour inspection support: the crew hours book (rules K1-K5, seed 004, Decreto-Lei of 29 June
1939) and the share of Brazilian crew on foreign vessels (rules N1-N6, seed 002, inspection
instruction art. 7 and art. 13). Pure cores: ``crew_hours`` (with ``work_periods``, its input, and
``hours_book``, its records), ``crew_share``, ``aboard``; I/O at the
edges: ``files`` (CSV in, atomic outputs), ``book_html``, ``aboard_db`` (ledger), ``cli``.
"""
