"""A real port for the browser tests: a private mosquitto, ``portgate central run`` (registry
source: registry changes reach the gates as deltas), two ``portgate edge run`` gates fed by FIFO
readers, and ``portgate office serve``, all over one SQLite ledger holding the demo registry and
an escala for the period running now (real clock: a shortened day).

Gate ``g-a`` (ship 9300001) needs card + badge (G4); gate ``g-b`` (ship 9300002) reads the control
card only. Late-arrival tolerance is two periods (720 min) so a tap at any moment of the escala's
period admits, and so does one after the next period began (the fixture is module-scoped: a CI run
crossing 01/07/13/19 local made the escala's period end before the tests' taps, which G6 then
rightly called late).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy.orm import Session

from central.db import make_engine
from central.ingest.keys import add_gate
from central.ledger.migrate import upgrade_engine
from central.registry.store import import_files
from central.rotation.engine import RotationSettings
from central.rotation.service import _store_entry
from central.web.users import add_user
from portgate.records import Berth, EscalaEntry, Voyage
from app.demo.mosquitto import Mosquitto, free_port
from testkit.wait import wait_until  # noqa: F401  (the browser tests import it from here)

DEMO = Path(__file__).resolve().parents[3] / "config" / "demo"
TZ = ZoneInfo("America/Sao_Paulo")
PORTGATE = [sys.executable, "-m", "app.cli"]
PASSWORD = "inspector password"
SHIPS = {"g-a": ("9300001", "MSC Aurora", "anchored"), "g-b": ("9300002", "Nordic Star", "berthed")}
# who is dispatched to the gangway post now: V001 at g-a, V003 at g-b
DISPATCH = {"g-a": ["V001"], "g-b": ["V003"]}
UIDS = {"V001": ("0A04A10001", "0B0B01BADE"), "V003": ("0A04A10003", "0B0B03BADE"),
        "V008": ("0A04A10008", "0B0B08BADE"), "V009": ("0A04A10009", "0B0B09BADE")}


def current_period(now: dt.datetime) -> tuple[dt.date, str]:
    local = now.astimezone(TZ)
    h = local.hour
    if h < 1:
        return local.date() - dt.timedelta(days=1), "19-01"
    for start, label in ((19, "19-01"), (13, "13-19"), (7, "07-13"), (1, "01-07")):
        if h >= start:
            return local.date(), label
    raise AssertionError(h)


class Gate:
    def __init__(self, root: Path, gate_id: str, key: Path, mqtt_port: int, badge: bool) -> None:
        self.gate_id = gate_id
        self.dir = root / gate_id
        self.dir.mkdir(parents=True)
        self.decisions = self.dir / "decisions.jsonl"
        self.decisions.touch()
        self.fifos = {"control": self.dir / "control.fifo"}
        if badge:
            self.fifos["badge"] = self.dir / "badge.fifo"
        for f in self.fifos.values():
            os.mkfifo(f, 0o600)
        rules = self.dir / "rules.toml"
        rules.write_text('name = "web-test"\n[[version]]\neffective_from = 2026-01-01\n'
                         'port_timezone = "America/Sao_Paulo"\n'
                         f"[version.g4]\ncard_and_badge_required = {str(badge).lower()}\n"
                         "[version.g6]\nlate_tolerance_min = 720\n")
        readers = "".join(f'[[readers]]\nid = "r-{k}"\nkind = "{k}"\ndriver = "fifo"\ndevice = "{p}"\n\n'
                          for k, p in self.fifos.items())
        self.config = self.dir / "gate.toml"
        ship = SHIPS[gate_id][0]
        self.config.write_text(
            f'port = "santos"\ngate_id = "{gate_id}"\nship = "{ship}"\nstate_dir = "{self.dir / "state"}"\n'
            f'key_file = "{key}"\nrulebook = "{rules}"\nindicator = "file"\nindicator_file = "{self.decisions}"\n'
            f'clock_trust = "always"\nlog_json = true\n\n[mqtt]\nhost = "127.0.0.1"\nport = {mqtt_port}\n'
            f'client_id = "gate-{gate_id}"\n\n[sync]\nstatus_every_s = 1.0\n\n' + readers)
        self.proc: subprocess.Popen | None = None
        self._seen = 0

    def start(self) -> None:
        log = open(self.dir / "gate.log", "ab")
        self.proc = subprocess.Popen([*PORTGATE, "edge", "run", "--config", str(self.config)],
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def ready(self) -> bool:
        path = self.dir / "state" / "store.db"
        if not path.exists():
            return False
        try:
            with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
                rows = dict(db.execute("SELECT name, version FROM versions").fetchall())
        except sqlite3.Error:
            return False
        return bool(rows.get("roster")) and bool(rows.get("escala"))

    def worker_status(self, registration: str) -> str | None:
        path = self.dir / "state" / "store.db"
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT status FROM workers WHERE registration = ?", (registration,)).fetchone()
        return row[0] if row else None

    def read(self, kind: str, uid: str) -> None:
        with open(self.fifos[kind], "w") as fh:
            fh.write(uid + "\n")

    def tap(self, registration: str, *, badge_of: str | None = None, timeout: float = 20.0) -> dict:
        """Present ``registration``'s control card (after ``badge_of``'s badge when the gate needs
        card + badge); return the decision the watchman saw."""
        if "badge" in self.fifos:
            self.read("badge", UIDS[badge_of or registration][1])
            time.sleep(0.3)
        self.read("control", UIDS[registration][0])

        def shown():
            lines = self.decisions.read_text(encoding="utf-8").splitlines()
            if len(lines) > self._seen:
                fresh = [json.loads(line) for line in lines[self._seen:]]
                self._seen = len(lines)
                return [d for d in fresh if d.get("registration") == registration or d.get("outcome")][-1]
            return None

        return wait_until(shown, timeout, what=f"a decision at {self.gate_id}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Port:
    def __init__(self, root: Path, *, web_extra: str = "", publish_poll_s: float = 0.2) -> None:
        self.root = root
        self.publish_poll_s = publish_poll_s  # [publish] poll_s: how often registry changes are read (shipped: 1.0)
        self.web_extra = web_extra  # more [web] settings (e.g. enrol_timeout_s)
        self.url_db = f"sqlite:///{root / 'ledger.db'}"
        self.broker = Mosquitto(root / "broker")
        self.gates: dict[str, Gate] = {}
        self.procs: list[subprocess.Popen] = []
        self.web_port = free_port()
        self.url = f"http://127.0.0.1:{self.web_port}"

    def _prepare_ledger(self, now: dt.datetime) -> None:
        engine = make_engine(self.url_db)
        upgrade_engine(engine)
        day, period = current_period(now)
        with Session(engine) as s, s.begin():
            import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="test", now=now)
            for gate_id, regs in DISPATCH.items():
                ship, name, berth = SHIPS[gate_id]
                for reg in regs:
                    entry = EscalaEntry(date=day, period=period, ship=ship, ship_name=name, voyage=Voyage.LONG_HAUL,
                                        berth=Berth(berth), gate_id=gate_id, post="portalo", function="vigia",
                                        registration=reg)
                    _store_entry(s, entry, operator="Op A", requisition_id=None, settings=RotationSettings(),
                                 actor="test", now=now)
            add_user(s, "fiscal", role="inspector", password=PASSWORD, name="Fiscal <Ana>", actor="test")
        engine.dispose()

    def start(self) -> Port:
        now = dt.datetime.now(dt.UTC)
        self._prepare_ledger(now)
        self.broker.start()
        keys = self.root / "keys"
        keys.mkdir()
        key_files = {g: add_gate(keys, g) for g in SHIPS}
        central = self.root / "central.toml"
        central.write_text(
            f'database_url = "{self.url_db}"\nport = "santos"\nkeys_dir = "{keys}"\nworkers = 1\nlog_json = true\n\n'
            f'[mqtt]\nhost = "127.0.0.1"\nport = {self.broker.port}\nclient_id = "ledger-web"\n\n'
            '[ingest]\nbatch_time_s = 0.02\n\n'
            f'[publish]\nsource = "registry"\npoll_s = {self.publish_poll_s}\nsnapshot_min_s = 0.5\n\n'
            '[web]\ncoverage_grace_min = 0\npoll_s = 0.2\n' + self.web_extra)
        self.central_toml = central
        self.office = subprocess.Popen([*PORTGATE, "central", "run", "--config", str(central)],
                                       stdout=open(self.root / "central.log", "ab"), stderr=subprocess.STDOUT)
        self.procs.append(self.office)
        wait_until(lambda: "ingest.connected" in (self.root / "central.log").read_text(errors="replace"),
                   120, what="the office ingest connected")  # a Python start at load 20: ~30 s
        self.web = subprocess.Popen([*PORTGATE, "office", "serve", "--config", str(central), "--port",
                                     str(self.web_port)], stdout=open(self.root / "web.log", "ab"),
                                    stderr=subprocess.STDOUT)
        self.procs.append(self.web)
        for gate_id in SHIPS:
            gate = Gate(self.root, gate_id, key_files[gate_id], self.broker.port, badge=gate_id == "g-a")
            gate.start()
            self.gates[gate_id] = gate
        wait_until(lambda: all(g.ready() for g in self.gates.values()), 120, what="gates holding roster and escala")
        wait_until(self._web_up, 120, what="the web application answering")
        return self

    def _web_up(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/login", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        for gate in self.gates.values():
            with contextlib.suppress(Exception):
                gate.stop()
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        with contextlib.suppress(Exception):
            self.broker.stop()
