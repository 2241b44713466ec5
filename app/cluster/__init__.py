"""The scale-out tiers on one machine (issue 37): a 3-node NATS JetStream cluster
(``app.cluster.nats``) and a Patroni ledger on 3 etcd members (``app.cluster.patroni``), started on
loopback by ``portgate demo --cluster`` and by the tests and benchmarks (``testkit.nats`` and
``testkit.patroni`` re-export them). ``app.cluster.tools`` says which Debian package is missing."""
