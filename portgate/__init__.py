"""portgate: gangway access control and port-labour ledger.

The shared kernel lives here: the exception tree (`portgate.errors`), the domain records read from
the data files of DESIGN.md (`portgate.records`), UID canonicalisation (`portgate.uid`), the CLI
(`portgate.cli`) and the test kit that starts real components (`portgate.testkit`).
"""

__version__ = "0.1.0"
