"""The gate service as systemd runs it (``portgate edge run`` with a FIFO reader, standalone):
READY/WATCHDOG on a fake NOTIFY_SOCKET, the metrics endpoint, JSON logs with ids bound, the HMAC key
never logged, and an invalid config giving one line naming the key with exit status 2."""

from __future__ import annotations

import json
import os

from testkit.gate_process import write_gate_config
from tests.ops.conftest import free_port, run_cli, run_cli_or_here, run_here, scrape
from testkit.wait import wait_until

SECRET = b"gate-hmac-K3y-never-in-logs"


def metric_value(text: str, prefix: str) -> float:
    for line in text.splitlines():
        if line.startswith(prefix):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{prefix} not in scrape")


def gate_config(tmp_path, mport: int = 0):
    cfg = write_gate_config(tmp_path, key=SECRET)
    cfg.write_text(cfg.read_text().replace('log_json = true\n',
                                           f'log_json = true\nlog_level = "debug"\nmetrics_port = {mport}\n'))
    return cfg


def test_gate_ready_watchdog_metrics_and_logs(tmp_path, notify_socket, start_service):
    mport = free_port()
    cfg = gate_config(tmp_path, mport)
    fifo = os.open(tmp_path / "reads.fifo", os.O_RDWR)
    try:
        svc = start_service(["edge", "run", "--config", str(cfg)], notify=notify_socket,
                            watchdog_usec=600_000)
        wait_until(lambda: notify_socket.seen("READY=1") or not svc.alive(), timeout=90, what="READY=1")
        assert svc.alive(), svc.output()
        wait_until(lambda: notify_socket.seen("WATCHDOG=1") >= 3, what="three WATCHDOG=1 pings")
        # a known control card, an unknown card, a malformed read
        os.write(fifo, b"0A04A10001\nF1000001\nnot-a-uid\n")
        shown = tmp_path / "shown.jsonl"
        wait_until(lambda: shown.exists() and len(shown.read_text().splitlines()) >= 3, what="3 decisions")
        text = scrape(mport)
        decided = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                      if line.startswith("portgate_decisions_total{"))
        assert decided == 3
        assert 'rule="G1"' in text  # unknown / malformed UIDs fail G1 (card registry)
        assert metric_value(text, "portgate_tap_latency_seconds_count") == 3
        assert metric_value(text, "portgate_tap_latency_seconds_sum") > 0
        assert metric_value(text, 'portgate_outbox_depth{gate_id="g-aurora"}') >= 3  # standalone: nothing sent
        assert metric_value(text, 'portgate_outbox_oldest_age_seconds{gate_id="g-aurora"}') >= 0
        assert metric_value(text, 'portgate_clock_synchronised{gate_id="g-aurora"}') == 1  # clock_trust=always
        assert "# TYPE portgate_reader_up gauge" in text  # filled by the pcsc/serial drivers
        assert "portgate_ingest_open_gaps" not in text  # office-only gauges stay off the gate
        assert svc.stop() == 0
    finally:
        os.close(fifo)
    assert notify_socket.seen("STOPPING=1")
    out = svc.output()
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    decisions = [r for r in lines if r.get("event") == "gate_decision"]
    assert len(decisions) == 3
    for r in decisions:  # ids bound where the loop handles a read
        assert r["gate_id"] == "g-aurora" and r["reader_id"] == "r-control" and r["event_id"]
    assert SECRET.decode() not in out


def test_gate_bad_config_names_key_exit_2(tmp_path):
    cfg = gate_config(tmp_path)
    good = cfg.read_text()
    cfg.write_text(good.replace('indicator = "file"', 'indicator = "disco"'))
    for cmd in (["edge", "run", "--config", str(cfg)], ["edge", "check-config", str(cfg)]):
        res = run_cli_or_here(cmd)
        assert res.returncode == 2, res
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and "$.indicator" in lines[0] and "Traceback" not in res.stderr, res.stderr
    cfg.write_text(good.replace("[[readers]]", "readerz = 1\n[[readers]]"))
    res = run_here(["edge", "check-config", str(cfg)])
    assert res.returncode == 2 and "$.readerz" in res.stderr, res.stderr
    cfg.write_text(good + "\n[sync]\nunrouted_backoff_s = nan\n")  # nan/0 busy-looped the uplink
    res = run_here(["edge", "check-config", str(cfg)])
    assert res.returncode == 2 and "$.sync.unrouted_backoff_s" in res.stderr, res.stderr


def test_gate_check_config_ok_and_open_key(tmp_path):
    cfg = gate_config(tmp_path, 9555)
    res = run_cli(["edge", "check-config", str(cfg)])
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("ok: ") and "gate g-aurora" in res.stdout and "metrics 127.0.0.1:9555" in res.stdout
    (tmp_path / "gate.key").chmod(0o640)
    for cmd in (["edge", "check-config", str(cfg)], ["edge", "run", "--config", str(cfg)]):
        res = run_cli_or_here(cmd)
        assert res.returncode == 2 and "chmod 600" in res.stderr, res.stderr
        assert SECRET.decode() not in res.stderr + res.stdout
