"""The 3-node NATS JetStream cluster of the tests and benchmarks: ``app.cluster.nats`` (moved there so
``portgate demo --cluster`` runs it without the test kit)."""

from app.cluster.nats import CLUSTER_NAME, EXE_CANDIDATES, NatsCluster, NatsNode, find_exe, start_cluster

__all__ = ["CLUSTER_NAME", "EXE_CANDIDATES", "NatsCluster", "NatsNode", "find_exe", "start_cluster"]
