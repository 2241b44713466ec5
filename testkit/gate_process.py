"""Run a real gate process (``portgate edge run``) fed by a FIFO reader (or a serial reader on a
pseudo-terminal) and writing its decisions to a file indicator: used by the gate tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from portgate.config import write_secret
from testkit.wait import wait_until

DEMO = Path(__file__).resolve().parents[1] / "config" / "demo"


def write_gate_config(root: Path, *, gate_id: str = "g-aurora", ship: str = "9300001",
                      key: bytes = b"gate-test-key", demo: Path = DEMO,
                      serial_device: Path | None = None) -> Path:
    """A standalone gate.toml under ``root`` (state dir, 0600 key, FIFO control reader, file
    indicator, demo CSV seed, clock trusted). Returns its path. The FIFO is ``root/reads.fifo``, the
    indicator file ``root/shown.jsonl``. ``serial_device``: the control reader is an EM4100 serial
    reader on that path instead (a ``app.demo.pty_reader.PtyReader``)."""
    root.mkdir(parents=True, exist_ok=True)
    write_secret(root / "gate.key", key)
    fifo = root / "reads.fifo"
    if not fifo.exists():
        os.mkfifo(fifo, 0o600)
    cfg = root / "gate.toml"
    cfg.write_text(f"""
port = "santos"
gate_id = "{gate_id}"
ship = "{ship}"
state_dir = "state"
key_file = "gate.key"
indicator = "file"
indicator_file = "shown.jsonl"
clock_trust = "always"
log_json = true

[[readers]]
id = "r-control"
kind = "control"
driver = "{'serial' if serial_device else 'fifo'}"
device = "{serial_device or fifo}"

[seed]
workers = "{demo / 'workers.csv'}"
cards = "{demo / 'cards.csv'}"
escala = "{demo / 'escala.csv'}"
""")
    return cfg


def start_gate(config: Path, *, log_path: Path | None = None) -> subprocess.Popen:
    """Start ``portgate edge run --config <config>`` in its own process group."""
    log = open(log_path or config.with_name("gate.log"), "ab")
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", "edge", "run", "--config", str(config)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )


def start_gate_and_wait(config: Path, *, timeout: float = 90.0) -> subprocess.Popen:
    """``start_gate`` and wait for this run's ``gate_started`` log line (its signal handlers are
    installed, so a SIGTERM after it is a clean stop). Raises AssertionError on a timeout or if the
    gate exits first."""
    log = config.with_name("gate.log")
    offset = log.stat().st_size if log.exists() else 0
    proc = start_gate(config)

    def started() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"gate exited {proc.returncode} before it started")
        with open(log, "rb") as f:
            f.seek(offset)
            return b'"gate_started"' in f.read()

    wait_until(started, timeout=timeout, interval=0.05, what="gate_started")
    return proc


def kill_gate(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> int:
    proc.send_signal(sig)
    return proc.wait(timeout=60)


def write_serial_gate_config(root: Path, *, key_file: Path, mqtt_port: int, gate_id: str = "g-aurora",
                             ship: str = "9300001", card_and_badge: bool = False,
                             demo: Path = DEMO) -> Path:
    """A gate.toml under ``root`` as a gate in the field runs: EM4100 serial readers on
    pseudo-terminals (``root/tty-control``, and ``root/tty-badge`` when ``card_and_badge``), the
    scripted clock ``root/clock.json`` (write it with ``edge.scripted_clock.set_scripted_time``
    before the start), MQTT to ``127.0.0.1:mqtt_port``, a file indicator ``root/shown.jsonl``, the
    demo CSV seed and a rulebook from 2026-01-01 (card + badge as asked). Returns its path."""
    root.mkdir(parents=True, exist_ok=True)
    rulebook = root / "gate-rules.toml"
    rulebook.write_text('name = "test"\n[[version]]\neffective_from = 2026-01-01\n'
                        f"[version.g4]\ncard_and_badge_required = {str(card_and_badge).lower()}\n")
    readers = ""
    for kind in ("control", "badge") if card_and_badge else ("control",):
        readers += (f'[[readers]]\nid = "{gate_id}-{kind}"\nkind = "{kind}"\ndriver = "serial"\n'
                    f'device = "{root / f"tty-{kind}"}"\n\n')
    cfg = root / "gate.toml"
    cfg.write_text(
        f'port = "santos"\ngate_id = "{gate_id}"\nship = "{ship}"\nstate_dir = "state"\n'
        f'key_file = "{key_file}"\nrulebook = "{rulebook}"\nindicator = "file"\n'
        f'indicator_file = "shown.jsonl"\nclock = "scripted"\nclock_file = "clock.json"\n'
        f'log_json = true\n\n{readers}'
        f'[seed]\nworkers = "{demo / "workers.csv"}"\ncards = "{demo / "cards.csv"}"\n'
        f'escala = "{demo / "escala.csv"}"\n\n'
        f'[mqtt]\nhost = "127.0.0.1"\nport = {mqtt_port}\n'
    )
    return cfg
