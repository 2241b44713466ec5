"""``portgate demo``: play the scripted port day of ``config/demo/`` through the real parts.

What runs (each a real process or device, on loopback, in a run directory the demo creates):

- a private mosquitto (``app.demo.mosquitto``), persistence on;
- the office: ``portgate central run`` (ingest into a SQLite ledger, presence and blocklist relay,
  snapshot requests answered from the scenario's CSV files);
- the watchman's screen of the first gate (``portgate edge display``, its URL printed), with the
  workers' photos sent by the office through the photo downlink (``central.broadcast.photos``);
- one ``portgate edge run`` process per gate. ``g-aurora`` reads two EM4100/RDM6300 serial readers
  on pseudo-terminals (control card + badge); ``g-nordic`` reads a PC/SC reader through a private
  pcscd + vpcd with a virtual card (a serial reader instead when pcscd/vpcd are not installed).

The demo writes the tap's time into each gate's scripted clock file (``edge.scripted_clock``), then
presents the card: a frame on the pty, or the virtual card on vpcd. It reads what the watchman saw
from the gate's decision file, checks it against ``expected.csv``, stops the broker for the outage
window while taps go on, and at the end reconciles gate journals with the ledger and computes pay
with ``portgate pay``. Exit status 0 only if every decision, every event and every pay total is right.

The demo's parts: this module sets the day up and plays it; ``app.demo.gate`` is one gate and its
devices, ``app.demo.office`` the office's set-up (keys, snapshots, photos, web),
``app.demo.checks`` the checks after the day and ``app.demo.console`` the console's words.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from app.demo.checks import DayChecks
from app.demo.console import texts
from app.demo.gate import PORTGATE, DemoFailed, Gate
from app.demo.office import OfficeSide
from app.demo.scenario import Scenario, check_decision
from portgate.clitext import cli_lang, tr, use_lang
from portgate.l10n import day as day_text
from portgate.records import Tap

REFRESH = dt.timedelta(hours=6)  # the office republishes roster and escala every period
#: what the office web application (``app.demo.web.DemoWeb.start``) imports: ~2 s of CPU on an idle
#: core, ~5 s at load 20, read in a thread while the demo waits for the office to subscribe
WEB_MODULES = ("uvicorn", "central.web.app", "central.web.cli", "central.web.photo_publish",
               "central.web.gate_commands", "central.broadcast.publisher", "central.ingest.nats_users",
               "app.whatif")


def _import_web_modules() -> None:
    """Import ``WEB_MODULES`` (the demo's thread ``demo-web-import``). An import that fails here is
    left to fail again, with its message, where the web application starts."""
    import importlib

    for name in WEB_MODULES:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


class DemoRun(OfficeSide, DayChecks):
    """One run of the demo in ``run_dir``. ``play()`` returns the process exit status."""

    def __init__(self, run_dir: Path, scenario: Scenario, *, lang: str = "pt",
                 out: Callable[[str], None] = print, outage: bool = True) -> None:
        self.dir = run_dir
        self.scenario = scenario
        self.lang = lang
        self.out = out
        self.outage = outage and scenario.spec.outage is not None
        from zoneinfo import ZoneInfo

        self.tz = ZoneInfo(scenario.spec.timezone)
        self.day_start = dt.datetime.combine(scenario.spec.day, dt.time(0), self.tz)
        self.ledger_url = f"sqlite:///{self.dir / 'ledger.db'}"
        self.ledger_label = str(self.dir / "ledger.db")
        self.broker = None
        self.office: subprocess.Popen | None = None
        self.gates: dict[str, Gate] = {}
        self.problems: list[str] = []
        self.broker_up = True
        self.published_version = 0
        self.published_at: dt.datetime | None = None
        self.web = None
        self.web_url: str | None = None

    # -- set-up --------------------------------------------------------------------------------
    #: the office's log line that says its ingest is connected (and so subscribed)
    OFFICE_READY = "ingest.connected"

    def _start_broker(self) -> None:
        from app.demo.mosquitto import Mosquitto

        self.broker = Mosquitto(self.dir / "broker")
        self.broker.start()
        self.out(tr("cli.demo.broker", port=self.broker.port, folder=self.dir / "broker"))

    def _office_broker_toml(self) -> str:
        """central.toml's broker sections: ``[mqtt]`` of the private mosquitto."""
        return f'[mqtt]\nhost = "127.0.0.1"\nport = {self.broker.port}\nclient_id = "ledger-demo"\n\n'

    def gate_mqtt_toml(self, mqtt_port: int) -> str:
        """gate.toml's ``[mqtt]``: the private mosquitto (MQTT 5)."""
        return f'[mqtt]\nhost = "127.0.0.1"\nport = {mqtt_port}\n\n'

    def _prepare_ledger(self) -> None:
        from app.demo.web import prepare_ledger

        prepare_ledger(self.ledger_url, self.scenario, self.day_start)

    def start(self) -> None:
        from central.ingest.keys import add_gate

        self.dir.mkdir(parents=True, exist_ok=True)
        self._start_broker()
        keys = self.dir / "keys"
        keys.mkdir(exist_ok=True)
        sc = self.scenario
        central = self.dir / "central.toml"
        central.write_text(
            f'database_url = "{self.ledger_url}"\nport = "{sc.spec.port}"\nkeys_dir = "{keys}"\nworkers = 1\nlog_json = true\n\n'
            + self._office_broker_toml() +
            f'[ingest]\ngap_grace_s = 2.0\nreplay_every_s = 5.0\n\n'
            f'[publish]\nworkers_csv = "{sc.workers_csv}"\ncards_csv = "{sc.cards_csv}"\n'
            f'escala_csv = "{sc.escala_csv}"\n\n'
            f'[web]\ntz = "{sc.spec.timezone}"\nphotos_dir = "{self.dir / "office-photos"}"\n'
        )
        for spec in sc.spec.gates:
            self.gates[spec.gate_id] = Gate(self, spec)
        key_files = {gid: add_gate(keys, gid, overwrite=True) for gid in self.gates}
        self._register_signing_keys(keys)
        from central.ingest.receipts import office_key

        office_key(keys)  # made before the office starts: the gates check its receipts against signing.pub
        self._publish_snapshots()
        self._prepare_ledger()
        self.office = subprocess.Popen([*PORTGATE, "central", "run", "--config", str(central)],
                                       stdout=open(self.dir / "central.log", "ab"), stderr=subprocess.STDOUT)
        self.out(tr("cli.demo.office", ledger=self.ledger_label))
        web_modules = threading.Thread(target=_import_web_modules, name="demo-web-import", daemon=True)
        web_modules.start()  # while the office's Python starts, which the demo only waits for
        self._wait_office_subscribed()
        web_modules.join()  # nothing else imports while this thread does
        for gid, gate in self.gates.items():
            config = gate.write_config(key_files[gid], self.broker.port, keys / "office" / "signing.pub")
            gate.start(config)
            how = tr("cli.demo.reader_pcsc") if gate.kind == "pcsc" else tr("cli.demo.reader_serial")
            if gate.spec.readers == "pcsc" and gate.kind != "pcsc":
                how += tr("cli.demo.no_pcscd")
            self.out(tr("cli.demo.gate", gate=gid, ship=gate.spec.ship, how=how))
        self._start_web()
        self._wait_ready()
        sent = self._publish_photos()
        first = next(iter(self.gates.values()))
        url = first.start_display()
        self.out(tr("cli.demo.screen", url=url, gate=first.gate_id, photos=sent))

    def _wait_office_subscribed(self, timeout: float = 30.0) -> None:
        """Wait until the office's ingest is connected (and so subscribed), so the gates' first
        events are not answered "No matching subscribers" (they would only wait and go again)."""
        log = self.dir / "central.log"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_office()
            if log.exists() and self.OFFICE_READY in log.read_text(errors="replace"):
                return
            time.sleep(0.1)
        raise DemoFailed(tr("cli.demo.office_no_broker", seconds=f"{timeout:.0f}", log=log))

    def _wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until every gate has its roster and escala copies from the office."""
        deadline = time.monotonic() + timeout
        pending = set(self.gates)
        while pending and time.monotonic() < deadline:
            self._check_office()
            for gid in list(pending):
                gate = self.gates[gid]
                if gate.proc.poll() is not None:
                    raise DemoFailed(tr("cli.demo.gate_exited_at_start", gate=gid, log=f"{gate.dir}/gate.log"))
                if self._copies_ready(gate):
                    pending.discard(gid)
            time.sleep(0.2)
        if pending:
            raise DemoFailed(tr("cli.demo.gates_no_copies", gates=", ".join(sorted(pending)), seconds=f"{timeout:.0f}"))
        opening = [g for g in self.gates.values() if not g.readers_open()]
        while opening and time.monotonic() < deadline + timeout:  # a reader not open yet loses the first card
            time.sleep(0.1)
            opening = [g for g in opening if not g.readers_open()]
        # a gate whose readers stay out of order is named at its first tap (Gate.wait_decision)

    def _check_office(self) -> None:
        if self.office is not None and self.office.poll() is not None:
            raise DemoFailed(tr("cli.demo.office_exited", code=self.office.returncode, log=f"{self.dir}/central.log"))

    @staticmethod
    def _copies_ready(gate: Gate) -> bool:
        path = gate.dir / "state" / "store.db"
        if not path.exists():
            return False
        try:
            from edge.store_schema import versions

            with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
                rows = dict(db.execute(f"SELECT name, version FROM {versions.name}").fetchall())
        except sqlite3.Error:
            return False
        return bool(rows.get("roster")) and bool(rows.get("escala"))

    # -- the day -------------------------------------------------------------------------------
    def _ledger_ids(self, gate_id: str) -> set[str]:
        path = self.dir / "ledger.db"
        if not path.exists():
            return set()
        try:
            with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
                return {r[0] for r in db.execute("SELECT event_id FROM events WHERE gate_id = ?", (gate_id,))}
        except sqlite3.Error:
            return set()

    def _ledger_counts(self, db, gate_id: str) -> tuple[int, int]:
        """``(events of gate_id in the ledger, sequence numbers the office still waits for)``;
        ``db`` is what ``_ledger_reader()`` opened."""
        row = db.execute("SELECT highest_seq, contiguous_seq FROM gate_progress WHERE gate_id = ?",
                         (gate_id,)).fetchone()
        gaps = 0 if row is None else row[0] - row[1]
        return db.execute("SELECT count(*) FROM events WHERE gate_id = ?", (gate_id,)).fetchone()[0], gaps

    def _ledger_reader(self):
        """A read-only connection to the ledger for the reconciliation (a context manager)."""
        return contextlib.closing(sqlite3.connect(f"file:{self.dir / 'ledger.db'}?mode=ro", uri=True))

    def drained(self) -> bool:
        return all(g.journal_ids() <= self._ledger_ids(gid) for gid, g in self.gates.items())

    def wait_drained(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_office()
            if self.drained():
                return True
            time.sleep(0.1)
        return False

    def play(self) -> None:
        sc = self.scenario
        outage = sc.spec.outage if self.outage else None
        total = len(sc.taps)
        pause = 0.0
        previous: Tap | None = None
        for index, (line, tap) in enumerate(sc.taps, start=1):
            if outage and line == outage.from_line:
                self.wait_drained(30)
                self.broker.stop()
                self.broker_up = False
                pause = outage.seconds / max(1, outage.to_line - outage.from_line + 1)
                self.out(tr("cli.demo.broker_stopped", seconds=round(outage.seconds)))
                outage_started = time.monotonic()
            paired = tap.reader.value == "control" and previous is not None and \
                previous.reader.value == "badge" and previous.gate_id == tap.gate_id
            if self.broker_up and not paired:
                # Cross-gate facts (presence, blocklist) travel through the office: let them arrive.
                if self.published_at is not None and tap.at - self.published_at >= REFRESH:
                    self._publish_snapshots(tap.at)
                self.wait_drained(15)
                time.sleep(0.4)
            previous = tap
            gate = self.gates[tap.gate_id]
            gate.present(tap)
            if line in sc.expected:
                shown = gate.wait_decision()
                self._show(index, total, line, tap, shown)
            else:  # a badge, held for pairing with the control card: its line says so
                self.out(f"[{index:2}/{total}] {tap.at.astimezone(self.tz):%d/%m %H:%M} {tap.gate_id:9} · "
                         f"{texts(self.lang)['badge_shown']}")
                time.sleep(0.15)
            gate.lift()
            if pause:
                time.sleep(pause)
            if outage and line == outage.to_line:
                time.sleep(max(0.0, outage.seconds - (time.monotonic() - outage_started)))
                self.broker.start()
                self.broker_up = True
                pause = 0.0
                self.out(tr("cli.demo.broker_started"))

    def _show(self, index: int, total: int, line: int, tap: Tap, shown: dict | None) -> None:
        local = tap.at.astimezone(self.tz).strftime("%d/%m %H:%M")
        exp = self.scenario.expected[line]
        if shown is None:
            self.problems.append(f"taps.csv:{line}: no decision shown at {tap.gate_id}")
            self.out(f"[{index:2}/{total}] {local} {tap.gate_id:9} {texts(self.lang)['no_decision']}  ✗")
            return
        mark = {"green": "✔", "red": "✘", "amber": "!"}.get(shown.get("colour"), "·")
        problem = check_decision(exp, shown["outcome"], shown.get("rules", []), shown.get("flags", []))
        if problem:
            self.problems.append(problem)
        status = "" if problem is None else "   <-- " + tr("cli.demo.unexpected")
        self.out(f"[{index:2}/{total}] {local} {tap.gate_id:9} {mark} {shown['message']}{status}")

    def stop(self) -> None:
        for gate in self.gates.values():
            with contextlib.suppress(Exception):
                gate.stop()
        if self.office is not None and self.office.poll() is None:
            self.office.send_signal(signal.SIGTERM)
            try:
                self.office.wait(15)
            except subprocess.TimeoutExpired:
                self.office.kill()
        if self.broker is not None:
            with contextlib.suppress(Exception):
                self.broker.stop()


def run_demo(run_dir: Path, scenario: Scenario, *, lang: str = "pt", outage: bool = True,
             out: Callable[[str], None] = print, keep_serving: bool = False) -> int:
    """Play the day; print decisions, reconciliation and pay; return the exit status (0 = all right).
    ``keep_serving``: the web application stays up on the day's ledger until Ctrl-C.

    The run directory is made 0700 and everything in it is created 0600 (0700 for directories:
    the umask is 077 while the demo runs, inherited by its broker, office and gates): the ledger
    holds password hashes, personal data and pay, the gates' journals who boarded.

    SIGTERM is Ctrl-C (``KeyboardInterrupt``): every process started (broker, office, gates,
    pcscd, the screen) is stopped before the demo exits 130; before, ``kill -TERM`` ended the demo
    alone and left them running under PID 1."""
    old_umask = os.umask(0o077)
    old_term = signal.signal(signal.SIGTERM, _sigterm)
    run_dir.mkdir(parents=True, exist_ok=True)
    run_dir.chmod(0o700)
    use_lang(lang)  # the console speaks the run's language, as its gates
    demo = DemoRun(run_dir, scenario, lang=lang, out=out, outage=outage)
    try:
        status = _play(demo, run_dir, scenario, out)
        if keep_serving and demo.web is not None and status != 2:
            out("\n" + tr("cli.demo.keep_serving", url=demo.web_url))
            try:
                while demo.web.thread is not None and demo.web.thread.is_alive():
                    time.sleep(0.5)
            except KeyboardInterrupt:
                out(tr("cli.demo.stopped"))
        return status
    finally:
        if demo.web is not None:
            demo.web.stop()
        signal.signal(signal.SIGTERM, old_term)
        os.umask(old_umask)


def _sigterm(_signum, _frame) -> None:
    raise KeyboardInterrupt  # the same clean-up as Ctrl-C


def office_totals_line(totals: dict) -> str:
    """The console's line of an office's ingest counters (``DemoRun.office_totals``). The ingest
    logs only the counters it incremented: absent means 0 once its totals line is there; without
    that line (the office did not stop cleanly) the counts are unknown (``?``)."""
    absent = 0 if totals else "?"
    return "  " + tr("cli.demo.office_totals", inserted=totals.get("inserted", absent),
                     duplicates=totals.get("duplicates", absent), dead=totals.get("dead_letters", absent),
                     replays=totals.get("replay_requests", absent))


def _play(demo: DemoRun, run_dir: Path, scenario: Scenario, out: Callable[[str], None]) -> int:
    started = time.monotonic()
    try:
        demo.start()
        out("\n" + tr("cli.demo.playing", n=len(scenario.taps), day=day_text(scenario.spec.day, cli_lang()),
                      port=scenario.spec.port) + "\n")
        demo.play()
        # Gates stop after the drain so the graceful "offline" status is sent.
        balanced = demo.reconcile()
        demo.stop()  # gates send their graceful "offline"; the office prints its totals
        out(office_totals_line(demo.office_totals()))
        demo.pay()
        demo.billing()
        demo.evidence()
    except DemoFailed as exc:
        out(tr("cli.demo.failed", why=exc))
        demo.stop()
        return 2
    finally:
        demo.stop()
    out("\n" + tr("cli.demo.run_dir", path=run_dir, seconds=round(time.monotonic() - started)))
    if demo.problems:
        out("\n" + tr("cli.demo.problems"))
        for p in demo.problems:
            out(f"  - {p}")
        return 1
    checked = scenario.dir / "scenario.toml"  # the expected pay (P1-P7) and billing (P8) the last line names
    out(tr("cli.demo.balanced", scenario=checked) if balanced else tr("cli.demo.not_balanced"))
    return 0 if balanced else 1
