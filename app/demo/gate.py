"""One gate of the demo (``app.demo.run``): its ``portgate edge run`` process, its screen, and the
devices the demo presents the cards on (serial readers on pseudo-terminals, or a virtual card on
a private pcscd + vpcd).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from edge.heartbeat import FILE as HEARTBEAT_FILE
from edge.heartbeat import read_heartbeat
from edge.scripted_clock import set_scripted_time
from portgate.clitext import tr
from portgate.records import Tap

if TYPE_CHECKING:
    from app.demo.run import DemoRun

PORTGATE = [sys.executable, "-m", "app.cli"]
DEBOUNCE_S = 3.5  # the gate rulebook's G9 debounce (3 s) plus a margin
HOLD_S = 0.6  # a card held this long: its frame repeats every 65 ms, so the reader confirms it even on a busy machine


def pcsc_available() -> bool:
    """True when pcscd and the vpcd driver are installed (the PC/SC gate can run for real)."""
    from app.demo.pcsc import VPCD_DRIVER

    return shutil.which("pcscd") is not None and Path(VPCD_DRIVER).exists()


#: seconds a presented card waits for a decision before the gate's readers are looked at
READER_GRACE_S = 3.0


class DemoFailed(Exception):
    """The demo could not run (a component did not start); the message says which."""


class Gate:
    """One gate process and the devices the demo drives for it."""

    def __init__(self, run: DemoRun, spec) -> None:
        self.run = run
        self.spec = spec
        self.gate_id = spec.gate_id
        self.dir = run.dir / self.gate_id
        self.dir.mkdir(parents=True, exist_ok=True)
        self.clock_file = self.dir / "clock.json"
        self.decisions_file = self.dir / "decisions.jsonl"
        self.decisions_file.touch()
        self._seen = 0
        self._last_shown: dict[str, float] = {}  # uid -> monotonic time it was last presented
        self.proc: subprocess.Popen | None = None
        self.display: subprocess.Popen | None = None
        self.config: Path | None = None
        self.ptys: dict[str, object] = {}
        self.card = None
        self.pcscd = None
        self.env = dict(os.environ)
        self.kind = spec.readers if (spec.readers != "pcsc" or pcsc_available()) else "serial"

    # -- devices -------------------------------------------------------------------------------
    def _reader_config(self) -> str:
        if self.kind == "pcsc":
            from app.demo.pcsc import PcscDaemon
            from app.demo.vicc import VirtualCard

            self.pcscd = PcscDaemon(self.dir / "pcscd")
            try:
                self.pcscd.start()
            except RuntimeError as exc:  # pcscd did not start (its log says why)
                raise DemoFailed(tr("cli.demo.pcscd_not_started", gate=self.gate_id,
                                    log=self.pcscd.log_path)) from exc
            self.env.update(self.pcscd.client_env())
            self.card = VirtualCard(port=self.pcscd.port)
            name = self.pcscd.entries[0].name
            return (f'[[readers]]\nid = "{self.gate_id}-pcsc"\nkind = "control"\ndriver = "pcsc"\n'
                    f'device = "{name}*"\n')
        from app.demo.pty_reader import PtyReader

        text = ""
        kinds = ["control", "badge"] if self.spec.card_and_badge_required else ["control"]
        for kind in kinds:
            pty = PtyReader(self.dir / f"tty-{kind}")
            pty.plug()
            self.ptys[kind] = pty
            text += (f'[[readers]]\nid = "{self.gate_id}-{kind}"\nkind = "{kind}"\ndriver = "serial"\n'
                     f'device = "{pty.path}"\n')
        if self.spec.exit_reader:  # G9: an exit-only control reader
            pty = PtyReader(self.dir / "tty-out")
            pty.plug()
            self.ptys["out"] = pty
            text += (f'[[readers]]\nid = "{self.gate_id}-out"\nkind = "control"\ndriver = "serial"\n'
                     f'device = "{pty.path}"\ndirection = "out"\n')
        return text

    def write_config(self, key_file: Path, mqtt_port: int, office_pub: Path) -> Path:
        rulebook = self.dir / "gate-rules.toml"
        rulebook.write_text(
            'name = "demo"\n[[version]]\neffective_from = 2026-01-01\n'
            f'port_timezone = "{self.run.scenario.spec.timezone}"\n'
            f"[version.g4]\ncard_and_badge_required = {str(self.spec.card_and_badge_required).lower()}\n"
        )
        set_scripted_time(self.clock_file, self.run.day_start)
        config = self.dir / "gate.toml"
        config.write_text(
            f'port = "{self.run.scenario.spec.port}"\ngate_id = "{self.gate_id}"\nship = "{self.spec.ship}"\n'
            f'state_dir = "{self.dir / "state"}"\nkey_file = "{key_file}"\nrulebook = "{rulebook}"\n'
            f'office_public_key_file = "{office_pub}"\n'
            f'indicator = "file"\nindicator_file = "{self.decisions_file}"\nlang = "{self.run.lang}"\n'
            f'clock = "scripted"\nclock_file = "{self.clock_file}"\nclock_trust = "always"\n'
            f"log_json = true\n\n{self.run.gate_mqtt_toml(mqtt_port)}"
            + self._reader_config()
        )
        return config

    def start_display(self, timeout: float = 30.0) -> str:
        """Start the watchman's screen of this gate on a free loopback port; returns its URL."""
        url_file = self.dir / "display.url"
        self.display = subprocess.Popen(
            [*PORTGATE, "edge", "display", "--config", str(self.config), "--port", "0", "--url-file", str(url_file)],
            stdout=open(self.dir / "display.log", "ab"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while not url_file.exists():
            if self.display.poll() is not None or time.monotonic() > deadline:
                raise DemoFailed(tr("cli.demo.screen_not_started", gate=self.gate_id, log=f"{self.dir}/display.log"))
            time.sleep(0.05)
        return url_file.read_text().strip()

    def start(self, config: Path) -> None:
        self.config = config
        (self.dir / "state").mkdir(exist_ok=True)
        log = open(self.dir / "gate.log", "ab")
        self.proc = subprocess.Popen([*PORTGATE, "edge", "run", "--config", str(config)],
                                     stdout=log, stderr=subprocess.STDOUT, env=self.env)

    # -- playing -------------------------------------------------------------------------------
    def present(self, tap: Tap) -> None:
        """Present ``tap``'s card to the right reader at the tap's scripted time.

        The gate drops a second read of the same card within the debounce window (G9, real
        monotonic time): a card shown again is held back until the window has passed."""
        last = self._last_shown.get(tap.uid)
        if last is not None:
            time.sleep(max(0.0, last + DEBOUNCE_S - time.monotonic()))
        self._last_shown[tap.uid] = time.monotonic()
        set_scripted_time(self.clock_file, tap.at)
        if self.kind == "pcsc":
            try:
                self.card.insert(tap.uid)
            except TimeoutError as exc:  # vpcd gone with its pcscd: no card can reach this gate
                raise DemoFailed(tr("cli.demo.card_not_accepted", gate=self.gate_id,
                                    log=self.pcscd.log_path if self.pcscd else self.dir)) from exc
        else:
            key = "out" if tap.direction.value == "out" and "out" in self.ptys else tap.reader.value
            pty = self.ptys.get(key) or self.ptys["control"]
            pty.hold(tap.uid, HOLD_S)  # a card shown: the reader repeats its frame (confirm-by-repeat)

    def lift(self) -> None:
        """Take the card away (PC/SC: remove it, and let pcscd notice before the next one)."""
        if self.kind == "pcsc" and self.card is not None:
            self.card.remove()
            time.sleep(0.5)

    def new_decisions(self) -> list[dict]:
        lines = self.decisions_file.read_text(encoding="utf-8").splitlines()
        fresh = [json.loads(line) for line in lines[self._seen:]]
        self._seen = len(lines)
        return fresh

    def wait_decision(self, timeout: float = 20.0, grace: float = READER_GRACE_S) -> dict | None:
        """The gate's last decision shown after the card was presented, or None after ``timeout``
        seconds. ``DemoFailed`` when the gate process exited, or when no decision came within
        ``grace`` seconds and the gate's heartbeat says every reader of it is out of order (a
        pcscd it cannot reach, a serial device gone): no tap at that gate can be decided, so the
        demo stops at once naming the readers and the gate's log instead of waiting ``timeout``
        seconds a tap."""
        start = time.monotonic()
        deadline, checked = start + timeout, start + grace
        while time.monotonic() < deadline:
            fresh = self.new_decisions()
            if fresh:
                return fresh[-1]
            if self.proc is not None and self.proc.poll() is not None:
                raise DemoFailed(tr("cli.demo.gate_exited", gate=self.gate_id, code=self.proc.returncode,
                                     log=f"{self.dir}/gate.log"))
            if time.monotonic() >= checked:
                self._need_a_reader()
                checked = time.monotonic() + 0.5
            time.sleep(0.02)
        return None

    def _need_a_reader(self) -> None:
        """``DemoFailed`` (``cli.demo.readers_down``) when the running gate's heartbeat file
        (``edge.heartbeat``) lists readers and every one of them is out of order."""
        alive = read_heartbeat(self.dir / "state" / HEARTBEAT_FILE)
        if alive.gate_running and alive.readers and all(r.state == "fault" for r in alive.readers):
            down = "; ".join(f"{r.reader_id}: {r.detail}" if r.detail else r.reader_id for r in alive.readers)
            raise DemoFailed(tr("cli.demo.readers_down", gate=self.gate_id, readers=down, log=f"{self.dir}/gate.log"))

    def readers_open(self) -> bool:
        """Does the running gate's heartbeat say every configured reader is open (``ok``)? A card
        shown before its reader opened the device is lost (the serial reader's frames go nowhere)."""
        alive = read_heartbeat(self.dir / "state" / HEARTBEAT_FILE)
        return alive.gate_running and bool(alive.readers) and all(r.state == "ok" for r in alive.readers)

    def journal_ids(self) -> set[str]:
        with contextlib.closing(sqlite3.connect(f"file:{self.dir}/state/journal.db?mode=ro", uri=True)) as db:
            return {row[0] for row in db.execute("SELECT event_id FROM journal")}

    def stop(self) -> None:
        if self.display is not None and self.display.poll() is None:
            self.display.send_signal(signal.SIGTERM)
            try:
                self.display.wait(15)
            except subprocess.TimeoutExpired:
                self.display.kill()
                self.display.wait()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for pty in self.ptys.values():
            pty.unplug()
        if self.card is not None:
            self.card.remove()
        if self.pcscd is not None:
            self.pcscd.stop()
