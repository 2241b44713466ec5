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
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from edge.scripted_clock import set_scripted_time
from app.demo.scenario import Scenario, check_decision, check_pay
from portgate.records import Tap

PORTGATE = [sys.executable, "-m", "app.cli"]
DEBOUNCE_S = 3.5  # the gate rulebook's G9 debounce (3 s) plus a margin
HOLD_S = 0.6  # a card held this long: its frame repeats every 65 ms, so the reader confirms it even on a busy machine
REFRESH = dt.timedelta(hours=6)  # the office republishes roster and escala every period


#: The reconciliation table: one word per column (the header is read by people and by scripts
#: alike; a script reads the English words of ``--lang en``): the gate, events in its journal,
#: decisions in its decisions file, events of it in the ledger, journal events missing from the
#: ledger, seqs the office still waits for.
RECONCILIATION_COLUMNS = ("gate", "journaled", "decisions", "ledger", "missing", "gaps")
_RECONCILIATION_WIDTHS = (10, 9, 9, 9, 7, 5)

#: The demo console's own titles and column headers in the run's language (``--lang``; the
#: watchman's messages come from the gates, configured with the same language).
TEXTS = {
    "pt": {
        "columns": ("portaló", "diário", "decisões", "livro", "faltam", "lacunas"),
        "reconciliation": "Conciliação (diário de cada portaló × livro do escritório)",
        "pay": "Demonstrativos de pagamento (RULES.md P1-P7), do livro do escritório",
        "billing": "Cobrança ao armador (P8), do livro do escritório",
        "evidence": "Pacote de provas de {registration} (portgate evidence verify {bundle})",
        "no_decision": "(nenhuma decisão)",
    },
    "en": {
        "columns": RECONCILIATION_COLUMNS,
        "reconciliation": "Reconciliation (gate journals vs office ledger)",
        "pay": "Pay statements (RULES.md P1-P7), from the ledger",
        "billing": "Billing to the shipowner (P8), from the ledger",
        "evidence": "Evidence bundle of {registration} (portgate evidence verify {bundle})",
        "no_decision": "(no decision)",
    },
}


def texts(lang: str) -> dict:
    """The console texts of ``lang`` (``pt`` or ``en``; anything else reads as ``pt``, the default)."""
    return TEXTS.get(lang, TEXTS["pt"])


def reconciliation_line(cells, lang: str = "en") -> str:
    """One line of the reconciliation table: the gate left-aligned, the counts right-aligned under
    their header word (``texts(lang)["columns"]``; a column is as wide as its header word)."""
    widths = [max(w, len(word)) for w, word in zip(_RECONCILIATION_WIDTHS, texts(lang)["columns"], strict=True)]
    gate, *counts = cells
    return "  " + " ".join([f"{gate:<{widths[0]}}"]
                           + [f"{c:>{w}}" for c, w in zip(counts, widths[1:], strict=True)])


def pcsc_available() -> bool:
    """True when pcscd and the vpcd driver are installed (the PC/SC gate can run for real)."""
    from app.demo.pcsc import VPCD_DRIVER

    return shutil.which("pcscd") is not None and Path(VPCD_DRIVER).exists()


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
            self.pcscd.start()
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
            f"log_json = true\n\n[mqtt]\nhost = \"127.0.0.1\"\nport = {mqtt_port}\n\n"
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
                raise DemoFailed(f"the screen of {self.gate_id} did not start; see {self.dir}/display.log")
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
            self.card.insert(tap.uid)
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

    def wait_decision(self, timeout: float = 20.0) -> dict | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            fresh = self.new_decisions()
            if fresh:
                return fresh[-1]
            if self.proc is not None and self.proc.poll() is not None:
                raise DemoFailed(f"gate {self.gate_id} exited ({self.proc.returncode}); see {self.dir}/gate.log")
            time.sleep(0.02)
        return None

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


class DemoRun:
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
    def _register_signing_keys(self, keys: Path) -> None:
        """Each gate's Ed25519 key pair is made in its state dir (as ``portgate edge key`` does on
        a gate), its public key registered and enrolled at the office (``central add-gate
        --public-key``) and the enrolment record countersigned by the demo's union inspector
        (``evidence inspector-key``, ``evidence countersign-gate``; docs/evidence.md)."""
        import datetime as dt

        from central.evidence.enrolment import countersign, enrol, inspector_key
        from central.office_key import office_key
        from central.ingest.keys import register_public_key
        from edge.signing import load_or_create
        from wire.chain import fingerprint, public_pem

        office = office_key(keys)
        inspector, _made = inspector_key(self.dir / "inspector")
        for gid, gate in self.gates.items():
            pub = load_or_create(gate.dir / "state").public_key()
            register_public_key(keys, gid, public_pem(pub))
            record, _written = enrol(keys, gid, pub, office, dt.datetime.now(dt.UTC))
            countersign(record, inspector, fingerprint(pub), fingerprint(office.public_key()))

    def start(self) -> None:
        from central.ingest.keys import add_gate
        from app.demo.mosquitto import Mosquitto

        self.dir.mkdir(parents=True, exist_ok=True)
        self.broker = Mosquitto(self.dir / "broker")
        self.broker.start()
        self.out(f"broker   mosquitto on 127.0.0.1:{self.broker.port} (persistence in {self.dir / 'broker'})")
        keys = self.dir / "keys"
        keys.mkdir(exist_ok=True)
        sc = self.scenario
        central = self.dir / "central.toml"
        central.write_text(
            f'database_url = "{self.ledger_url}"\nport = "{sc.spec.port}"\nkeys_dir = "{keys}"\nworkers = 1\nlog_json = true\n\n'
            f'[mqtt]\nhost = "127.0.0.1"\nport = {self.broker.port}\nclient_id = "ledger-demo"\n\n'
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
        from app.demo.web import prepare_ledger

        prepare_ledger(self.ledger_url, sc, self.day_start)
        self.office = subprocess.Popen([*PORTGATE, "central", "run", "--config", str(central)],
                                       stdout=open(self.dir / "central.log", "ab"), stderr=subprocess.STDOUT)
        self.out(f"office   portgate central run (ledger {self.dir / 'ledger.db'})")
        self._wait_office_subscribed()
        for gid, gate in self.gates.items():
            config = gate.write_config(key_files[gid], self.broker.port, keys / "office" / "signing.pub")
            gate.start(config)
            how = {"pcsc": "PC/SC reader via pcscd + vpcd, virtual card",
                   "serial": "EM4100 serial reader(s) on pseudo-terminals"}[gate.kind]
            if gate.spec.readers == "pcsc" and gate.kind != "pcsc":
                how += " (pcscd/vpcd not installed: serial instead of PC/SC)"
            self.out(f"gate     {gid} ship {gate.spec.ship}: {how}")
        self._start_web()
        self._wait_ready()
        sent = self._publish_photos()
        first = next(iter(self.gates.values()))
        url = first.start_display()
        self.out(f"screen   {url}  (the watchman's screen of {first.gate_id}: name, photo and reason of every "
                 f"read; {sent} photos sent by the office)")

    def _publish_photos(self) -> int:
        """The office sends the workers' photos (generated pictures; two workers have none, so the
        screen shows its placeholder) through the photo downlink. Returns how many files."""
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        from central.broadcast.photos import publish_photos
        from central.broadcast.publisher import office_signer
        from central.registry.photos import save_photo
        from portgate.records import Worker, load_csv
        from app.demo.photos import png

        photos = self.dir / "office-photos"  # the registry's photos, as the web app keeps them ([web] photos_dir)
        workers = load_csv(self.scenario.workers_csv, Worker)
        for n, w in enumerate(workers[:-2]):
            save_photo(photos, w.registration, png(n + 1, size=96))  # re-encoded: office and gate sizes
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="office-photos-demo", protocol=mqtt.MQTTv5)
        client.connect("127.0.0.1", self.broker.port)
        client.loop_start()
        try:
            return publish_photos(client, self.scenario.spec.port, photos,
                                  signer=office_signer(self.dir / "keys"))["files"]
        finally:
            client.disconnect()
            client.loop_stop()

    def _start_web(self) -> None:
        """The office web application on a free loopback port, on the scripted day's clock."""
        from app.demo.web import (DEMO_PASSWORD, DEMO_USER, OFFICE_USER, STEVEDORE_REGISTRATION,
                                  WORKER_REGISTRATION, DemoWeb)

        self.web = DemoWeb(self.ledger_url, [g.clock_file for g in self.gates.values()],
                           self.scenario.spec.timezone, self.dir / "central.toml")
        self.web_url = self.web.start()
        self.out(f"web      {self.web_url}  login {DEMO_USER} / {DEMO_PASSWORD} (inspector), "
                 f"{OFFICE_USER} / {DEMO_PASSWORD} (office), {WORKER_REGISTRATION} / {DEMO_PASSWORD} "
                 f"(worker, on the phone: {self.web_url}w/), {STEVEDORE_REGISTRATION} / {DEMO_PASSWORD} "
                 f"(stevedore) (portgate office serve)")

    def _publish_snapshots(self, at: dt.datetime | None = None) -> None:
        """The office publishes the roster, the blocklist base and the escala (retained
        snapshots, a new version each time). Later calls refresh roster and escala only, as the
        office does every period, so the gates' copies never go stale (G8)."""
        import msgspec
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        from central.broadcast.csv_source import CsvSnapshots, publish_snapshot
        from central.broadcast.publisher import office_signer

        signer = office_signer(self.dir / "keys")  # the office key the gates verify downlinks with

        sc = self.scenario
        at = at or self.day_start
        self.published_version += 1
        kinds = ("roster", "cards", "escala") if self.published_version == 1 else ("roster", "escala")
        source = CsvSnapshots(sc.workers_csv, sc.cards_csv, sc.escala_csv)
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="office-publisher-demo",
                             protocol=mqtt.MQTTv5)
        client.connect("127.0.0.1", self.broker.port)
        client.loop_start()
        try:
            for kind in kinds:
                msg = msgspec.structs.replace(source.snapshot(kind, at), version=self.published_version)
                publish_snapshot(client, sc.spec.port, kind, msg, signer=signer)
        finally:
            client.disconnect()
            client.loop_stop()
        self.published_at = at

    def _wait_office_subscribed(self, timeout: float = 30.0) -> None:
        """Wait until the office's ingest is connected (and so subscribed), so the gates' first
        events are not answered "No matching subscribers" (they would only wait and go again)."""
        log = self.dir / "central.log"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_office()
            if log.exists() and "ingest.connected" in log.read_text(errors="replace"):
                return
            time.sleep(0.1)
        raise DemoFailed(f"the office did not connect to the broker in {timeout:.0f} s; see {log}")

    def _wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until every gate has its roster and escala copies from the office."""
        deadline = time.monotonic() + timeout
        pending = set(self.gates)
        while pending and time.monotonic() < deadline:
            self._check_office()
            for gid in list(pending):
                gate = self.gates[gid]
                if gate.proc.poll() is not None:
                    raise DemoFailed(f"gate {gid} exited at start; see {gate.dir}/gate.log")
                if self._copies_ready(gate):
                    pending.discard(gid)
            time.sleep(0.2)
        if pending:
            raise DemoFailed(f"gates {sorted(pending)} got no roster/escala from the office in {timeout:.0f} s")
        time.sleep(0.5)  # readers open

    def _check_office(self) -> None:
        if self.office is not None and self.office.poll() is not None:
            raise DemoFailed(f"the office exited ({self.office.returncode}); see {self.dir}/central.log")

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
                self.out(f"--- broker stopped: taps go on, gates keep journaling ({outage.seconds:.0f} s) ---")
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
            else:
                time.sleep(0.15)  # a badge, held for pairing with the control card
            gate.lift()
            if pause:
                time.sleep(pause)
            if outage and line == outage.to_line:
                time.sleep(max(0.0, outage.seconds - (time.monotonic() - outage_started)))
                self.broker.start()
                self.broker_up = True
                pause = 0.0
                self.out("--- broker started again: outboxes drain ---")

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
        status = "" if problem is None else "   <-- UNEXPECTED"
        self.out(f"[{index:2}/{total}] {local} {tap.gate_id:9} {mark} {shown['message']}{status}")

    # -- after the day -------------------------------------------------------------------------
    def reconcile(self) -> bool:
        """Every event each gate journaled is in the ledger exactly once; no gaps remain."""
        ok = self.wait_drained(90)
        words = texts(self.lang)
        self.out(f"\n{words['reconciliation']}")
        self.out(reconciliation_line(words["columns"], self.lang))
        with contextlib.closing(sqlite3.connect(f"file:{self.dir / 'ledger.db'}?mode=ro", uri=True)) as db:
            for gid, gate in self.gates.items():
                journal = gate.journal_ids()
                ledger = self._ledger_ids(gid)
                missing = journal - ledger
                decided = sum(1 for _ in gate.decisions_file.open(encoding="utf-8"))
                row = db.execute("SELECT highest_seq, contiguous_seq FROM gate_progress WHERE gate_id = ?",
                                 (gid,)).fetchone()
                gaps = 0 if row is None else row[0] - row[1]
                rows = db.execute("SELECT count(*) FROM events WHERE gate_id = ?", (gid,)).fetchone()[0]
                self.out(reconciliation_line((gid, len(journal), decided, rows, len(missing), gaps), self.lang))
                if missing or gaps or rows != len(journal):
                    ok = False
                    self.problems.append(f"{gid}: {len(missing)} event(s) missing from the ledger, {gaps} gap(s)")
        return ok

    def office_totals(self) -> dict:
        """The ingest's own counts, printed by ``portgate central run`` when it stops."""
        log = self.dir / "central.log"
        totals: dict = {}
        if log.exists():
            for text in log.read_text(encoding="utf-8", errors="replace").splitlines():
                if text.startswith("{") and '"ingest.totals"' in text:  # central runs with log_json
                    with contextlib.suppress(ValueError):
                        totals = json.loads(text)
        return totals

    def port_config(self) -> Path:
        """The port TOML pay and billing run with: the example port, its rulebook copied into the
        run directory with the scenario's P8 fare (``anchorage_transport_fare``) when it sets one
        (the shipped rulebook leaves it unset: billing a trip is then refused)."""
        from central.pay.loading import DEFAULT_PORT_CONFIG, load_port_config

        rulebook = Path(load_port_config(DEFAULT_PORT_CONFIG).rulebook)
        text = rulebook.read_text(encoding="utf-8")
        fare = self.scenario.spec.anchorage_transport_fare
        if fare is not None:  # a top-level key: before the first table
            text = f'anchorage_transport_fare = "{fare}"  # portgate demo: the port\'s launch fare\n' + text
        own = self.dir / "rulebook.toml"
        own.write_text(text, encoding="utf-8")
        port = self.dir / "port.toml"
        port.write_text(DEFAULT_PORT_CONFIG.read_text(encoding="utf-8").replace(
            'rulebook = "rulebooks/decreto-83611-1979.toml"', f'rulebook = "{own}"'), encoding="utf-8")
        return port

    def pay(self) -> dict[str, Decimal]:
        """Run ``portgate pay`` on the ledger for the day and print the statements."""
        sc = self.scenario
        day = sc.spec.day
        cmd = [*PORTGATE, "pay", "--db", self.ledger_url, "--from", day.isoformat(),
               "--to", (day + dt.timedelta(days=1)).isoformat(), "--port-config", str(self.port_config())]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            self.problems.append(f"portgate pay failed ({done.returncode}): {done.stderr.strip()[:500]}")
            return {}
        totals: dict[str, Decimal] = {}
        self.out(f"\n{texts(self.lang)['pay']}")
        for text in done.stdout.splitlines():
            row = json.loads(text)
            reg = row.get("registration")
            if row.get("rule") == "TOTAL":
                totals[reg] = totals.get(reg, Decimal(0)) + Decimal(row["amount"])
                hold = f"  ON HOLD: {row['hold']}" if row.get("hold") else ""
                self.out(f"  {reg} {row.get('work_day')}  {'TOTAL':5} {'':22} R$ {row['amount']:>8}{hold}")
            elif row.get("rule") == "HELD":  # not paid until reviewed (NO_ENTRY, ...)
                self.out(f"  {reg} {row.get('work_day')}  HELD  {'; '.join(row.get('flags') or [])}")
            elif row.get("rule"):
                self.out(f"  {reg} {row.get('work_day')}  {row['rule']:5} {row.get('article', ''):22} "
                         f"R$ {row['amount']:>8}")
            else:
                self.out(f"  {reg} held: {row}")
        self.problems.extend(check_pay(sc.expected_pay, totals))
        return totals

    def billing(self) -> list[dict]:
        """Run ``portgate pay billing`` for the day: the shipowner's statement of the watchmen's
        trips to the anchored ship (P8, 83.611 art. 27 sole paragraph: one round trip per stay, at
        the scenario's fare). A problem if it fails, an anchored ship of the escala has no P8 line,
        or a ship's total is not the scenario's ``expected_billing``."""
        sc = self.scenario
        day = sc.spec.day
        cmd = [*PORTGATE, "pay", "billing", "--db", self.ledger_url, "--from", day.isoformat(),
               "--to", (day + dt.timedelta(days=1)).isoformat(), "--port-config", str(self.port_config())]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            self.problems.append(f"portgate pay billing failed ({done.returncode}): {done.stderr.strip()[:500]}")
            return []
        found = [json.loads(text) for text in done.stdout.splitlines()]
        self.out(f"\n{texts(self.lang)['billing']}")
        for st in found:
            for line in st["lines"]:
                self.out(f"  {st['shipowner']}  {line['rule']} {line['ref']}  R$ {line['amount']:>8}  "
                         f"{line['description']}")
            self.out(f"  {st['shipowner']}  TOTAL R$ {st['total']:>8}")
        anchored = {ship for ship in sc.anchored_ships()}
        billed = {line["ship"] for st in found for line in st["lines"] if line["rule"] == "P8"}
        if anchored - billed:
            self.problems.append(f"no P8 billing line for anchored ship(s) {sorted(anchored - billed)}")
        per_ship: dict[str, Decimal] = {}
        for st in found:
            for line in st["lines"]:
                per_ship[line["ship"]] = per_ship.get(line["ship"], Decimal(0)) + Decimal(line["amount"])
        for ship, amount in sorted(sc.spec.expected_billing.items()):
            if per_ship.get(ship) != Decimal(amount):
                self.problems.append(f"billing {ship}: {per_ship.get(ship)} != expected {amount}")
        return found

    def evidence(self, registration: str = "V017") -> Path | None:
        """Export the evidence bundle of ``registration`` for the day (``portgate evidence export``)
        into the run directory and check it offline (``portgate evidence verify``)."""
        if registration not in self.scenario.expected_pay:
            return None
        day = self.scenario.spec.day.isoformat()
        bundle = self.dir / f"evidence-{registration}.zip"
        cmd = [*PORTGATE, "evidence", "export", "--db", self.ledger_url, "--keys-dir", str(self.dir / "keys"),
               "--registration", registration, "--from", day, "--to", day, "--out", str(bundle)]
        for gate in self.gates.values():
            cmd += ["--gate-rulebook", str(gate.dir / "gate-rules.toml")]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            self.problems.append(f"portgate evidence export failed ({done.returncode}): {done.stderr.strip()[:500]}")
            return None
        from central.evidence.enrolment import inspector_key
        from central.office_key import office_key
        from wire.chain import fingerprint

        pins = ["--office-key", fingerprint(office_key(self.dir / "keys").public_key()),  # the office's own
                "--inspector-key", fingerprint(inspector_key(self.dir / "inspector")[0].public_key())]  # the union's
        check = subprocess.run([*PORTGATE, "evidence", "verify", str(bundle), *pins], capture_output=True,
                               text=True, timeout=120)
        self.out("\n" + texts(self.lang)["evidence"].format(registration=registration, bundle=bundle.name))
        for line in check.stdout.splitlines():
            self.out(f"  {line}")
        if check.returncode != 0:
            self.problems.append(f"evidence bundle of {registration} does not verify")
        return bundle

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
    holds password hashes, personal data and pay, the gates' journals who boarded."""
    old_umask = os.umask(0o077)
    run_dir.mkdir(parents=True, exist_ok=True)
    run_dir.chmod(0o700)
    demo = DemoRun(run_dir, scenario, lang=lang, out=out, outage=outage)
    try:
        status = _play(demo, run_dir, scenario, out)
        if keep_serving and demo.web is not None and status != 2:
            out(f"\nThe office web application stays up at {demo.web_url} (login printed above); Ctrl-C to stop.")
            try:
                while demo.web.thread is not None and demo.web.thread.is_alive():
                    time.sleep(0.5)
            except KeyboardInterrupt:
                out("stopped")
        return status
    finally:
        if demo.web is not None:
            demo.web.stop()
        os.umask(old_umask)


def _play(demo: DemoRun, run_dir: Path, scenario: Scenario, out: Callable[[str], None]) -> int:
    started = time.monotonic()
    try:
        demo.start()
        out(f"\nPlaying {len(scenario.taps)} taps of {scenario.spec.day} ({scenario.spec.port})\n")
        demo.play()
        # Gates stop after the drain so the graceful "offline" status is sent.
        balanced = demo.reconcile()
        demo.stop()  # gates send their graceful "offline"; the office prints its totals
        totals = demo.office_totals()
        # The ingest logs only the counters it incremented: absent means 0 once its totals line is
        # there; without that line (the office did not stop cleanly) the counts are unknown.
        absent = 0 if totals else "?"
        out(f"  office: {totals.get('inserted', absent)} events written, {totals.get('duplicates', absent)} "
            f"duplicates dropped, {totals.get('dead_letters', absent)} dead letters, "
            f"{totals.get('replay_requests', absent)} replay requests")
        demo.pay()
        demo.billing()
        demo.evidence()
    except DemoFailed as exc:
        out(f"demo failed: {exc}")
        demo.stop()
        return 2
    finally:
        demo.stop()
    out(f"\nRun directory: {run_dir}  ({time.monotonic() - started:.0f} s)")
    if demo.problems:
        out("\nPROBLEMS:")
        for p in demo.problems:
            out(f"  - {p}")
        return 1
    out("All decisions as expected; every event is in the ledger exactly once; pay matches RULES.md." if balanced
        else "Reconciliation did not balance.")
    return 0 if balanced else 1
