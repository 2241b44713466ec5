"""portgate: gangway access control and port-labour ledger.

The shared kernel lives here, the lowest layer, importing no other package of the project: the
exception tree (`portgate.errors`), the domain records read from the data files of DESIGN.md
(`portgate.records`), UID canonicalisation (`portgate.uid`), time, configuration loading and logs.
The layers above it: docs/architecture.md.
"""

__version__ = "0.1.0"
