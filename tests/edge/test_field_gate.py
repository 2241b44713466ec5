"""A real gate process (``portgate edge run``) with EM4100 serial readers on pseudo-terminals, its
scripted clock, a real mosquitto and the office ingest writing a SQLite ledger; then the ledger's
shifts and ``portgate pay``. G4 (card and badge in either order) and G13 (a gate clock at 1970; an
exit after a power cut)."""

from __future__ import annotations

import datetime as dt
import json
import signal
import sqlite3
import subprocess
import time
from contextlib import closing
from zoneinfo import ZoneInfo

import msgspec
import pytest

from central.config import CentralConfig, IngestSettings
from central.db import make_engine
from central.ingest.keys import add_gate
from central.ingest.service import Ingest
from edge.scripted_clock import set_scripted_time
from testkit.cli import run_here
from testkit.gate_process import kill_gate, start_gate, write_serial_gate_config
from app.demo.mosquitto import Mosquitto
from app.demo.pty_reader import PtyReader
from testkit.sqlite_copies import copy_made_once
from testkit.wait import wait_until
from tests.central.ingest.conftest import every_table
from wire.connection import MqttConfig
from wire.events import Event

TZ = ZoneInfo("America/Sao_Paulo")
GATE = "g-aurora"
V001_CARD, V001_BADGE, V002_CARD, V009_BADGE, V003_CARD = (
    "0A04A10001", "0B0B01BADE", "0A04A10002", "0B0B09BADE", "0A04A10003")
V008_CARD = "0A04A10008"
HOLD_S = 0.6  # a card held in front of an RDM6300: its frame repeats every ~65 ms


def local(hour: int, minute: int = 0, second: int = 0) -> dt.datetime:
    return dt.datetime(2026, 3, 15, hour, minute, second, tzinfo=TZ)


class FieldGate:
    """One gate process, its pty readers, its clock file and what it showed and journaled."""

    def __init__(self, root, key_file, broker, *, card_and_badge: bool) -> None:
        self.root = root
        self.config = write_serial_gate_config(root, key_file=key_file, mqtt_port=broker.port,
                                               card_and_badge=card_and_badge)
        self.ptys = {kind: PtyReader(root / f"tty-{kind}")
                     for kind in (("control", "badge") if card_and_badge else ("control",))}
        self.proc: subprocess.Popen | None = None
        self._seen = 0

    def start(self, at: dt.datetime) -> None:
        set_scripted_time(self.root / "clock.json", at)
        for pty in self.ptys.values():
            pty.plug()
        ready_before = self._count("reader")
        self.proc = start_gate(self.config)
        wait_until(lambda: self._count("reader") >= ready_before + len(self.ptys) or self._exited(),
                   what="the readers to be ready")
        assert self.proc.poll() is None, (self.root / "gate.log").read_text()[-3000:]

    def _exited(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None

    def set_time(self, at: dt.datetime) -> None:
        set_scripted_time(self.root / "clock.json", at)

    def show(self, kind: str, uid: str, at: dt.datetime | None = None) -> None:
        if at is not None:
            self.set_time(at)
        self.ptys[kind].hold(uid, HOLD_S)

    def decisions(self) -> list[dict]:
        path = self.root / "shown.jsonl"
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []

    def next_decision(self, timeout: float = 30.0) -> dict:
        got = wait_until(lambda: len(self.decisions()) > self._seen or None, timeout, what="a decision")
        assert got
        shown = self.decisions()[self._seen]
        self._seen += 1
        return shown

    def journal(self) -> list[Event]:
        path = self.root / "state" / "journal.db"
        if not path.exists():
            return []
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            rows = db.execute("SELECT body FROM journal ORDER BY seq").fetchall()
        return [msgspec.json.decode(r[0], type=Event) for r in rows]

    def _count(self, kind: str) -> int:
        path = self.root / "state" / "journal.db"
        if not path.exists():
            return 0
        try:
            with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
                return db.execute("SELECT count(*) FROM journal WHERE kind = ?", (kind,)).fetchone()[0]
        except sqlite3.Error:
            return 0

    def power_cut(self) -> int:
        """The gate loses power: the process is killed (SIGKILL, nothing flushed) and its readers go."""
        assert self.proc is not None
        code = kill_gate(self.proc)
        for pty in self.ptys.values():
            pty.unplug()
        return code

    def stop(self) -> int | None:
        code = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            code = self.proc.wait(180)  # generous: a loaded machine took over 30 s (a CI run, 2026-12-07)
        for pty in self.ptys.values():
            pty.unplug()
        return code


@pytest.fixture
def field(tmp_path):
    """Broker, office ingest (SQLite ledger) and a factory of gate processes; all stopped after."""
    broker = Mosquitto(tmp_path / "broker")
    broker.start()
    keys = tmp_path / "keys"
    keys.mkdir()
    key_file = add_gate(keys, GATE)
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    copy_made_once("office-tables", every_table, tmp_path / "ledger.db")  # every table, made once per process
    engine = make_engine(url)
    ingest = Ingest(CentralConfig(database_url=url, port="santos", keys_dir=str(keys), workers=1,
                                  mqtt=MqttConfig(host=broker.host, port=broker.port),
                                  ingest=IngestSettings(gap_grace_s=0.5, replay_every_s=2.0)),
                    engine=engine).start()
    assert ingest.wait_connected()
    gates: list[FieldGate] = []

    class Field:
        ledger_url = url
        ledger = tmp_path / "ledger.db"

        @staticmethod
        def gate(card_and_badge: bool = False) -> FieldGate:
            g = FieldGate(tmp_path / "gate", key_file, broker, card_and_badge=card_and_badge)
            gates.append(g)
            return g

        @staticmethod
        def ledger_ids() -> set[str]:
            with closing(sqlite3.connect(tmp_path / "ledger.db")) as db:
                return {r[0] for r in db.execute("SELECT event_id FROM events")}

        @staticmethod
        def wait_drained(gate: FieldGate) -> None:
            wait_until(lambda: {e.event_id for e in gate.journal()} <= Field.ledger_ids(),
                       timeout=60, what="every journaled event in the ledger")

        @staticmethod
        def pay_and_shifts() -> tuple[list[dict], list[dict]]:
            """``portgate pay`` and ``portgate ledger shifts --no-rebuild`` on the ledger, through
            ``app.cli.main`` in this process (``testkit.cli.run_here``: no Python start per run; the
            installed commands have their own tests)."""
            db = ["--db", url, "--from", "2026-03-15", "--to", "2026-03-15"]
            pay = run_here(["pay", *db])
            assert pay.returncode == 0, pay.stderr
            shifts = run_here(["ledger", "shifts", *db, "--no-rebuild"])
            assert shifts.returncode == 0, shifts.stderr
            return ([json.loads(x) for x in pay.stdout.splitlines()],
                    [json.loads(x) for x in shifts.stdout.splitlines()])

    yield Field
    for g in gates:
        g.stop()
    ingest.stop()
    engine.dispose()
    broker.kill()


def _total(pay: list[dict], registration: str) -> str | None:
    return next((r["amount"] for r in pay if r.get("registration") == registration
                 and r.get("rule") == "TOTAL"), None)


def test_G4_card_then_badge_at_a_real_gate_admits_and_a_borrowed_badge_is_flagged_and_paid_right(field):
    gate = field.gate(card_and_badge=True)
    gate.start(local(0, 40))
    gate.show("control", V001_CARD, local(0, 40))  # card first ...
    time.sleep(1.0)
    assert gate.decisions() == []  # ... held for the badge, nothing shown yet
    gate.show("badge", V001_BADGE, local(0, 40, 2))
    shown = gate.next_decision()
    assert shown["outcome"] == "admit", shown
    gate.show("control", V002_CARD, local(0, 45))  # card, then someone else's badge
    gate.show("badge", V009_BADGE, local(0, 45, 3))
    borrowed = gate.next_decision()
    assert borrowed["outcome"] == "deny" and "BORROWED_CARD" in borrowed["flags"], borrowed
    assert "V002" in borrowed["message"] and "V009" in borrowed["message"]
    time.sleep(3.5)  # past the debounce window of V001's card (G9, real monotonic time)
    gate.show("control", V001_CARD, local(6, 58))  # the exit is not held for a badge
    assert gate.next_decision(timeout=60)["outcome"] == "exit"
    taps = [e for e in gate.journal() if e.payload.__struct_config__.tag == "tap"]
    assert [(t.payload.uid, t.payload.badge_uid, t.payload.decision) for t in taps] == [
        (V001_CARD, V001_BADGE, "admit"), (V002_CARD, V009_BADGE, "deny"), (V001_CARD, None, "exit")]
    assert (taps[1].payload.registration, taps[1].payload.badge_registration) == ("V002", "V009")
    field.wait_drained(gate)
    pay, shifts = field.pay_and_shifts()
    [v001] = [s for s in shifts if s["registration"] == "V001"]
    assert (v001["admit_at"], v001["exit_at"], v001["held"]) == (
        local(0, 40, 2).astimezone(dt.UTC).isoformat(), local(6, 58).astimezone(dt.UTC).isoformat(), False)
    assert not [s for s in shifts if s["registration"] == "V002"]  # denied: no shift
    assert _total(pay, "V001") == "315.00"  # as in the demo day: 01-07 Sunday night, exit 06:58


def test_G4_a_badge_alone_at_a_real_gate_is_journaled_and_ledgered_at_its_read(field):
    """The badge is decided when its 15 s window runs out; its event is dated at the read (the
    scripted clock moves on meanwhile, as the wall clock would)."""
    gate = field.gate(card_and_badge=True)
    gate.start(local(0, 40))
    gate.show("badge", V001_BADGE, local(0, 40))
    time.sleep(1.0)  # the read taken and held for its control card
    assert gate.decisions() == []
    gate.set_time(local(0, 40, 14))
    shown = gate.next_decision(timeout=60)  # after the pairing window (15 s of monotonic time)
    assert shown["outcome"] == "deny", shown
    [tap] = [e for e in gate.journal() if e.payload.__struct_config__.tag == "tap"]
    assert (tap.payload.uid, tap.payload.reader_kind, tap.payload.rules_failed) == (V001_BADGE, "badge", ["G4"])
    assert tap.occurred_at == local(0, 40).astimezone(dt.UTC)
    field.wait_drained(gate)
    with closing(sqlite3.connect(field.ledger)) as db:
        [(occurred,)] = db.execute("SELECT occurred_at FROM events WHERE event_id = ?", (tap.event_id,))
    assert dt.datetime.fromisoformat(occurred).replace(tzinfo=dt.UTC) == local(0, 40).astimezone(dt.UTC)


def test_G13_a_gate_restarted_with_its_clock_at_1970_decides_journals_and_pay_uses_placed_times(field):
    gate = field.gate()
    gate.start(local(0, 40))
    gate.show("control", V001_CARD, local(0, 40))
    assert gate.next_decision()["outcome"] == "admit"
    gate.show("control", V003_CARD, local(6, 50))  # any read: the gate's last trusted time
    gate.next_decision()
    field.wait_drained(gate)
    assert gate.stop() == 0

    gate.start(dt.datetime(1970, 1, 1, 0, 0, 9, tzinfo=dt.UTC))  # a Pi without RTC boots at 1970
    time.sleep(1.0)
    assert gate.proc.poll() is None  # today: exit 2, "no gate rulebook version in force on 1969-12-31"
    gate.show("control", V001_CARD)  # V001 leaves while the clock says 1970
    out = gate.next_decision()
    assert out["outcome"] == "exit" and "CLOCK_UNTRUSTED" in out["flags"], out
    time.sleep(2.0)
    gate.set_time(local(6, 58))  # the clock syncs
    wait_until(lambda: any(getattr(e.payload, "code", "") == "CLOCK_TRUSTED" for e in gate.journal()),
               what="the CLOCK_TRUSTED alert")
    events = gate.journal()
    boot = events[-1].boot_id
    this_boot = [e for e in events if e.boot_id == boot]
    alerts = [e.payload.code for e in this_boot if e.payload.__struct_config__.tag == "alert"]
    assert alerts == ["CLOCK_UNTRUSTED", "CLOCK_TRUSTED"]
    assert any("read 1970-01-01T00:00:09" in getattr(e.payload, "detail", "") for e in this_boot)
    [exit_tap] = [e for e in this_boot if e.payload.__struct_config__.tag == "tap"]
    assert not exit_tap.clock_trusted and exit_tap.occurred_at.year == 2026  # the estimate, not 1970
    anchor = this_boot[-1]
    assert anchor.clock_trusted and anchor.seq > exit_tap.seq and anchor.mono_ns > exit_tap.mono_ns

    field.wait_drained(gate)
    pay, shifts = field.pay_and_shifts()
    [v001] = [s for s in shifts if s["registration"] == "V001"]
    placed = anchor.occurred_at + dt.timedelta(microseconds=(exit_tap.mono_ns - anchor.mono_ns) // 1000)
    assert v001["exit_at"] == placed.isoformat()  # placed by boot, seq and monotonic time
    assert local(6, 57) <= placed <= local(6, 58)
    assert [f["flag"] for f in v001["flags"]] == ["CLOCK_PLACED"] and not v001["held"]
    assert _total(pay, "V001") == "315.00"
    assert "1970" not in json.dumps(pay) and "1970" not in json.dumps(shifts)


def test_G13_an_exit_after_a_power_cut_at_1970_closes_the_shift_and_is_paid_with_its_placed_exit(field):
    """RULES.md G13 (operational) with G9 (83.611 arts. 9, 20 b, e), issue 31 item 1. V008 is
    dispatched 07-13 on Sunday 2026-03-15 (berthed) and admitted at 07:13:00. The gate loses power
    and boots with its clock at 1970: its estimate is the last trusted time (07:13:00, the admit)
    plus the monotonic time since the new boot started, a few seconds: 07:13:0x, inside
    min_stay_minutes (5 min) of the admit. Today the read is ALREADY ABOARD, changes nothing, and
    the shift is paid closed at the period end with no exit (MISSING_EXIT). G13: the shift was
    admitted in another boot, so the read is an EXIT flagged CLOCK_UNTRUSTED (no EARLY_EXIT from
    the estimate). The clock syncs at 13:02:00; the office places the exit from that anchor by
    monotonic time: 13:02:00 - (anchor mono - exit mono), a few seconds before 13:02.
    Pay (decreto-83611-1979, SD 180.00 from 2026-01-01): P1 base 180.00 + P4 Sunday 0.50 x 180.00
    = 90.00; exit at most 2 min after 13:00 is inside the 10 min tolerance (no P2); day shift (no
    P3); berthed (no P7): 270.00, paid (CLOCK_PLACED does not hold it)."""
    gate = field.gate()
    gate.start(local(7, 13))
    gate.show("control", V008_CARD, local(7, 13))
    assert gate.next_decision()["outcome"] == "admit"
    field.wait_drained(gate)
    assert gate.power_cut() == -signal.SIGKILL

    gate.start(dt.datetime(1970, 1, 1, 0, 0, 7, tzinfo=dt.UTC))  # no RTC: the clock restarts at 1970
    gate.show("control", V008_CARD)  # V008 taps out while the clock says 1970
    out = gate.next_decision()
    assert out["outcome"] == "exit", out  # today: "aboard" (JÁ A BORDO ... nada foi alterado)
    assert "CLOCK_UNTRUSTED" in out["flags"] and "EARLY_EXIT" not in out["flags"], out
    assert "antes do reinício do portaló" in out["message"], out
    time.sleep(1.0)
    gate.set_time(local(13, 2))  # the clock syncs
    wait_until(lambda: any(getattr(e.payload, "code", "") == "CLOCK_TRUSTED" for e in gate.journal()),
               what="the CLOCK_TRUSTED alert")
    events = gate.journal()
    taps = [e for e in events if e.payload.__struct_config__.tag == "tap"]
    admit_tap, exit_tap = taps
    assert admit_tap.boot_id != exit_tap.boot_id and admit_tap.clock_trusted
    assert (admit_tap.payload.decision, exit_tap.payload.decision) == ("admit", "exit")
    assert exit_tap.payload.flags == ["CLOCK_UNTRUSTED"] and not exit_tap.clock_trusted
    # the estimate the old rule measured the stay with: inside min_stay_minutes of the admit
    assert local(7, 13) <= exit_tap.occurred_at < local(7, 18)
    boot = [e for e in events if e.boot_id == exit_tap.boot_id]
    anchor = boot[-1]
    assert anchor.payload.code == "CLOCK_TRUSTED" and anchor.clock_trusted and anchor.seq > exit_tap.seq

    field.wait_drained(gate)
    pay, shifts = field.pay_and_shifts()
    [v008] = [s for s in shifts if s["registration"] == "V008"]
    placed = anchor.occurred_at + dt.timedelta(microseconds=(exit_tap.mono_ns - anchor.mono_ns) // 1000)
    assert local(13, 1) <= placed < local(13, 2)
    assert (v008["period"], v008["closed_by"], v008["exit_at"], v008["held"]) == (
        "07-13", "exit", placed.isoformat(), False)
    assert v008["admit_at"] == local(7, 13).astimezone(dt.UTC).isoformat()
    assert [f["flag"] for f in v008["flags"]] == ["CLOCK_PLACED"]
    assert _total(pay, "V008") == "270.00"
    assert not [r for r in pay if r.get("registration") == "V008" and r.get("hold")]
