"""The Patroni ledger (3 etcd members, 3 PostgreSQL nodes) of the tests and benchmarks:
``app.cluster.patroni`` (moved there so ``portgate demo --cluster`` runs it without the test kit)."""

from app.cluster.patroni import SCOPE, HaLedger, find_tools

__all__ = ["SCOPE", "HaLedger", "find_tools"]
