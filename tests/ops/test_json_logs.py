"""Every line ``portgate central run`` and ``portgate edge run`` write is one JSON object (python's
json and ``jq``), libraries' stdlib logging included (alembic on a new ledger, paho, sqlalchemy,
uvicorn, warnings), and every gate line carries ``gate_id``, ``port`` and ``service`` whichever
thread wrote it."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import warnings

import pytest
import structlog

from portgate.logs import configure_logging
from testkit.gate_process import write_gate_config
from testkit.wait import wait_until
from tests.ops.test_central_service import central_toml


def json_lines(text: str) -> list[dict]:
    """Each non-empty line parsed on its own (fails naming the first line that is not JSON)."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            raise AssertionError(f"line {n} is not JSON: {line!r}") from None
        assert isinstance(out[-1], dict), line
    if shutil.which("jq"):
        res = subprocess.run(["jq", "-c", "."], input=text, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        assert len(res.stdout.splitlines()) == len(out)
    return out


def test_central_run_on_a_new_ledger_writes_only_json(tmp_path, broker, notify_socket, start_service):
    """A ledger one revision behind: ``central run``'s migration logs through Alembic's stdlib
    loggers, as JSON lines (a ledger at head is checked without Alembic: no line of it)."""
    from central.ledger.migrate import upgrade

    upgrade(f"sqlite:///{tmp_path / 'ledger.db'}", "0036")  # central_toml keeps it: migrations run
    cfg = central_toml(tmp_path, broker, workers=2)
    svc = start_service(["central", "run", "--config", str(cfg)], notify=notify_socket)
    wait_until(lambda: notify_socket.seen("READY=1") or not svc.alive(), timeout=90, what="READY=1")
    assert svc.alive(), svc.output()
    assert svc.stop() == 0
    lines = json_lines(svc.output())
    assert any(r.get("logger", "").startswith("alembic") for r in lines), "alembic lines routed"
    assert any(r.get("event") == "central_started" for r in lines)
    for r in lines:
        assert r["service"] == "central" and r["port"] == "santos", r


def test_gate_run_writes_only_json_and_every_line_names_the_gate(tmp_path, broker, start_service):
    cfg = write_gate_config(tmp_path)
    cfg.write_text(cfg.read_text().replace("log_json = true", 'log_json = true\nlog_level = "debug"') + f"""
[mqtt]
host = "{broker.host}"
port = {broker.port}
""")
    fifo = os.open(tmp_path / "reads.fifo", os.O_RDWR)
    try:
        svc = start_service(["edge", "run", "--config", str(cfg)])
        os.write(fifo, b"0A04A10001\nF1000001\n")
        shown = tmp_path / "shown.jsonl"
        wait_until(lambda: shown.exists() and len(shown.read_text().splitlines()) >= 2 or not svc.alive(),
                   what="2 decisions")
        wait_until(lambda: "mqtt.connected" in svc.output() or not svc.alive(), timeout=90, what="connected")
        assert svc.alive(), svc.output()
        assert svc.stop() == 0
    finally:
        os.close(fifo)
    lines = json_lines(svc.output())
    events = {r["event"] for r in lines}
    assert {"gate_started", "gate_decision", "mqtt.connected"} <= events  # main, loop, paho threads
    for r in lines:
        assert (r.get("gate_id"), r.get("port"), r.get("service")) == ("g-aurora", "santos", "gate"), r


LIBRARY_LOGGERS = ("alembic.runtime.migration", "paho.mqtt.client", "sqlalchemy.engine.Engine", "uvicorn.error")


@pytest.fixture
def logging_restored():
    """Root logging as configure_logging leaves it, undone afterwards; the library loggers start as
    a fresh process has them (an in-process uvicorn of an earlier test gives ``uvicorn.error`` its
    own handler and stops it propagating)."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level, sys.excepthook, threading.excepthook)
    libs = {}
    for name in (*LIBRARY_LOGGERS, "uvicorn"):  # uvicorn's config stops propagation at "uvicorn"
        lg = logging.getLogger(name)
        libs[name] = (list(lg.handlers), lg.propagate, lg.level, lg.disabled)
        lg.handlers[:], lg.propagate, lg.disabled = [], True, False
        lg.setLevel(logging.NOTSET if name != "sqlalchemy.engine.Engine" else logging.WARNING)
    yield
    for name, (handlers, propagate, level, disabled) in libs.items():
        lg = logging.getLogger(name)
        lg.handlers[:], lg.propagate, lg.disabled = handlers, propagate, disabled
        lg.setLevel(level)
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])
    sys.excepthook, threading.excepthook = saved[2], saved[3]
    logging.captureWarnings(False)
    structlog.reset_defaults()


def test_library_logging_warnings_and_thread_crashes_render_as_json(capsys, logging_restored):
    configure_logging(json=True, level="info", fields={"service": "gate", "port": "santos", "gate_id": "g1"})
    for name in ("alembic.runtime.migration", "paho.mqtt.client", "sqlalchemy.engine.Engine", "uvicorn.error"):
        logging.getLogger(name).warning("hello %s", name)  # sqlalchemy sets its loggers to WARNING
    try:
        raise ValueError("boom\nsecond line")
    except ValueError:
        logging.getLogger("uvicorn.error").exception("request failed")
    warnings.warn("old api", DeprecationWarning, stacklevel=1)
    th = threading.Thread(target=lambda: 1 / 0, name="crasher")
    th.start()
    th.join()
    structlog.get_logger("x").info("from_structlog", password="s3cret")
    lines = json_lines(capsys.readouterr().err)
    by_logger = {r.get("logger"): r for r in lines}
    for name in ("alembic.runtime.migration", "paho.mqtt.client", "sqlalchemy.engine.Engine"):
        assert by_logger[name]["event"] == f"hello {name}" and by_logger[name]["level"] == "warning"
    failed = next(r for r in lines if r["event"] == "request failed")
    assert "ValueError: boom" in failed["exception"] and failed["level"] == "error"
    assert any(r.get("logger") == "py.warnings" and "old api" in r["event"] for r in lines)
    crash = next(r for r in lines if r["event"] == "uncaught_exception")
    assert crash["thread"] == "crasher" and "ZeroDivisionError" in crash["exception"]
    assert next(r for r in lines if r["event"] == "from_structlog")["password"] == "***"
    for r in lines:
        assert (r["gate_id"], r["port"], r["service"]) == ("g1", "santos", "gate"), r
        assert r["timestamp"].endswith("Z")

