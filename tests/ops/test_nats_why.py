"""Why the office's JetStream ingest waits, said in its log (central/ingest/jetstream_why.py), through
``portgate central run`` on real nats-server processes: a single server that is not clustered with the
default ``[nats] replicas = 3`` (a configuration error: one line naming ``[nats] replicas``, the ingest
stops, the watchdog's worker check sees it), and a cluster with 2 of its 3 nodes down
(``jetstream.ingest_failed`` with ``cause`` and the no-quorum ``hint``, no traceback at info level)."""

from __future__ import annotations

import json

from testkit.nats import NatsCluster, find_exe
from testkit.nats_office import central_toml
from testkit.wait import wait_until


def _lines(svc, event: str) -> list[dict]:
    out = []
    for line in svc.err.read_text(errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("event") == event:
            out.append(rec)
    return out


def test_replicas_3_on_a_single_server_is_a_config_error_naming_nats_replicas(tmp_path, start_service, notify_socket):
    assert find_exe(), "nats-server is not installed: scripts/setup.sh installs it (as root)"
    solo = NatsCluster(tmp_path / "nats", size=1, clustered=False).start(60)
    try:
        cfg = central_toml(tmp_path, solo)  # [nats] replicas: the default 3
        svc = start_service(["central", "run", "--config", str(cfg)], notify=notify_socket)
        wait_until(lambda: _lines(svc, "ingest_worker_died") or not svc.alive(), timeout=120,
                   what="the ingest stopped on the configuration error")
        assert svc.alive(), svc.output()  # systemd's watchdog ends it (WatchdogSec=): no pings any more
        [wrong] = _lines(svc, "jetstream.config_error")
        assert wrong["setting"] == "nats.replicas" and wrong["error"].startswith("nats.replicas: "), wrong
        assert "set [nats] replicas = 1 for a single node, or run a cluster" in wrong["error"], wrong
        assert "non-clustered" in wrong["error"], wrong
        assert not _lines(svc, "jetstream.ingest_failed") and "Traceback" not in svc.output()
        assert svc.stop() == 0
    finally:
        solo.stop()


def test_a_cluster_without_quorum_says_why_the_ingest_waits(tmp_path, start_service, notify_socket):
    assert find_exe(), "nats-server is not installed: scripts/setup.sh installs it (as root)"
    cluster = NatsCluster(tmp_path / "nats")
    cluster.start_node(0)  # 1 of 3 nodes: JetStream has no meta leader
    try:
        cfg = central_toml(tmp_path, cluster, nats_extra="request_timeout_s = 2.0\n")
        svc = start_service(["central", "run", "--config", str(cfg)], notify=notify_socket)
        wait_until(lambda: _lines(svc, "jetstream.ingest_failed") or not svc.alive(), timeout=120,
                   what="the set-up's failure logged")
        assert svc.alive(), svc.output()
        first = _lines(svc, "jetstream.ingest_failed")[0]
        assert first["cause"] and "\n" not in first["cause"], first
        assert ("503" in first["cause"] or "timeout" in first["cause"].lower()), first
        assert "fewer than a majority of the cluster's nodes answer: start the stopped nodes" in first["hint"], first
        assert "exception" not in first and "Traceback" not in svc.output(), first
        assert not _lines(svc, "jetstream.config_error")
        assert svc.stop() == 0
    finally:
        cluster.stop()


def test_no_server_listening_is_one_line_naming_the_servers(tmp_path, start_service, notify_socket):
    """Every ``[nats] servers`` URL refuses the connection: ``jetstream.connect_failed`` with the
    refusal as ``cause`` and the URLs in ``hint`` (nats-py's default: a traceback per attempt)."""
    assert find_exe(), "nats-server is not installed: scripts/setup.sh installs it (as root)"
    cluster = NatsCluster(tmp_path / "nats", size=1, clustered=False)  # ports chosen, never started
    cfg = central_toml(tmp_path, cluster)
    svc = start_service(["central", "run", "--config", str(cfg)], notify=notify_socket)
    wait_until(lambda: _lines(svc, "jetstream.connect_failed") or not svc.alive(), timeout=120,
               what="the refused connection logged")
    assert svc.alive(), svc.output()
    [first, *_] = _lines(svc, "jetstream.connect_failed")
    assert "refused" in first["cause"].lower() or "Connect call failed" in first["cause"], first
    assert cluster.nats_urls[0] in first["hint"] and "check [nats] servers" in first["hint"], first
    assert "Traceback" not in svc.output() and "encountered error" not in svc.output()
    assert svc.stop() == 0


def test_a_503_from_jetstream_is_the_no_quorum_hint():
    """The 503 a node without a meta leader may answer (err_code 10008) maps to the same hint as
    the timeout the cluster test meets (which of the two comes is up to the server's timing)."""
    from central.config import NatsSettings
    from central.ingest.jetstream_why import MAJORITY_HINT, config_error, explain
    from nats.js.errors import APIError, ServiceUnavailableError

    exc = ServiceUnavailableError(code=503, err_code=10008, description="JetStream system temporarily unavailable")
    said = explain(exc, NatsSettings(servers=["nats://n1:4222"]))
    assert said == {"cause": "JetStream system temporarily unavailable (code 503, err_code 10008)",
                    "hint": MAJORITY_HINT}
    assert config_error(exc) is None
    refused = APIError(code=500, err_code=10074, description="replicas > 1 not supported in non-clustered mode")
    wrong = config_error(refused)
    assert wrong is not None and wrong.key == "nats.replicas"
