"""The end of every fault run of the scale-out tiers (issue 37, "What it must show"): the gates'
journals against the fault run's ledger.

- ``shift_tap(gate, i)``: the ``i``-th tap of a load gate, as its journal records it: entry and exit
  taps (admit, then exit) of the demo's registered workers (``config/demo/workers.csv``), one shift
  per pair, on scripted dispatches from ``BASE_DATE`` (four periods a day, a worker every sixth
  shift of his gate, the gates' workers apart), with the scripted trusted time of the tap (a minute
  after the period starts, a minute before it ends). The load taps at a real rate; only the times
  the taps carry are scripted, so the shifts and pay are the same whatever day the run is played.
- ``signing_gate(keys_dir, state_dir, gate_id)``: the gate's Ed25519 key (``edge.signing``), its
  public key registered in the office's keys folder (``central.ingest.keys``), as
  ``portgate central add-gate`` and the gate's enrolment do.
- ``ReplayLog``: when each gate first read an event back from its journal for the office's replay
  command (the gate's only reason to read its journal while it runs): an event stored at or after
  that moment "needed a replay"; the others arrived directly.
- ``check_fault_run(url, journals, keys_dir, work)``: every check a fault run ends with (each a
  function of its own, raising ``AssertionError`` naming what differs):
  ``assert_exactly_once`` (every journal event id in the ledger exactly once, no other event, no
  sequence gap, nothing dead-lettered), ``assert_same_pay`` (the fault-free reference: the same
  journals fed through the office's ordinary ingest path, ``LedgerWriter.process``, into a fresh
  SQLite ledger; both ledgers closed with the real month close, ``central.pay.close.close_month``;
  the stored shifts and current statements equal, amounts as ``Decimal``), ``audit_exit`` (the
  real ``portgate evidence audit`` on the fault run's ledger: exit 0). Returns a ``FaultCheck``.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import func, select

from central.config import CentralConfig, IngestSettings
from central.db import make_engine
from central.ingest.keys import KeyRing, register_public_key
from central.ingest.writer import LedgerWriter
from central.ledger.migrate import upgrade
from central.ledger.schema import dead_letters, events
from central.ledger.store import read_shifts
from central.pay.cli import load_setup
from central.pay.close import close_month
from central.pay.statements_read import read_statements
from edge.rules.model import Now
from edge.signing import load_or_create
from portgate.records import period_bounds
from testkit.shift_events import dispatch
from wire import chain
from wire.connection import MqttConfig
from wire.events import TapPayload, decode
from wire.topics import gate_events

ROOT = Path(__file__).resolve().parents[1]
ZONE = ZoneInfo("America/Sao_Paulo")
BASE_DATE = dt.date(2026, 3, 2)  # the first dispatch date of every load gate
PERIODS = ("01-07", "07-13", "13-19", "19-01")
WORKERS_PER_GATE = 6  # demo workers V001..V040: 6 gates keep apart
EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)  # the scripted monotonic clock's zero
CLOSED_AT = dt.datetime(2026, 12, 7, 12, tzinfo=dt.UTC)  # the month close's "now": after every shift
BATCH = 200  # events per batch of the reference ingest


def shift_tap(gate: int, i: int, *, ship: str | None = None) -> tuple[TapPayload, Now]:
    """The ``i``-th tap (0-based) of load gate ``gate`` (0..5) and the trusted time it happened at
    (see the module docstring): even ``i`` an admit, odd ``i`` the exit of the same shift."""
    k = i // 2  # the gate's k-th shift
    day, period = BASE_DATE + dt.timedelta(days=k // len(PERIODS)), PERIODS[k % len(PERIODS)]
    worker = gate * WORKERS_PER_GATE + k % WORKERS_PER_GATE + 1
    start, end = period_bounds(day, period, ZONE)
    admit = i % 2 == 0
    at = start + dt.timedelta(minutes=1) if admit else end - dt.timedelta(minutes=1)
    payload = TapPayload(uid=f"0A04A1{worker:04d}", reader_id="r-control", reader_kind="control",
                         decision="admit" if admit else "exit", registration=f"V{worker:03d}",
                         dispatch=dispatch(day, period, ship or f"93000{gate + 1:02d}"))
    return payload, Now(wall=at, mono_ns=int((at - EPOCH).total_seconds()) * 1_000_000_000, clock_trusted=True)


def signing_gate(keys_dir: str | Path, state_dir: str | Path, gate_id: str):
    """The Ed25519 signing key of ``gate_id`` (``<state_dir>/signing.key``, made if missing) with its
    public key registered in ``keys_dir`` (``<gate_id>.pub``). Returns the private key."""
    key = load_or_create(state_dir)
    register_public_key(keys_dir, gate_id, chain.public_pem(key.public_key()))
    return key


class ReplayLog:
    """(gate, seq) -> when the gate first read that event back for a replay command (aware UTC).
    ``watch(journal)`` wraps that journal's ``events_between`` (what the gate's sync calls to answer
    the office's ``ReplayCommand``); ``add(gate, seqs, at)`` records one from elsewhere (a gate
    process's log, ``read_jsonl``, ``read_gate_log``)."""

    def __init__(self) -> None:
        self.first: dict[tuple[str, int], dt.datetime] = {}
        self._lock = threading.Lock()

    def add(self, gate_id: str, seqs: Iterable[int], at: dt.datetime) -> None:
        with self._lock:
            for s in seqs:
                self.first.setdefault((gate_id, s), at)

    def watch(self, journal) -> None:
        read = journal.events_between

        def observed(seq_from: int, seq_to: int):
            out = read(seq_from, seq_to)
            self.add(journal.gate_id, (e.seq for e in out), dt.datetime.now(dt.UTC))
            return out

        journal.events_between = observed

    def read_gate_log(self, path: Path) -> None:
        """A ``portgate edge run``'s JSON log: each ``uplink.replay`` line (gate, seq range, its time:
        written as the rows were queued to be sent again)."""
        for line in path.read_text().splitlines() if path.exists() else ():
            d = json.loads(line) if line.startswith("{") else {}
            if d.get("event") == "uplink.replay":
                self.add(d["gate_id"], range(d["seq_from"], d["seq_to"] + 1), dt.datetime.fromisoformat(d["timestamp"]))

    def read_jsonl(self, path: Path) -> None:
        """Lines ``{"gate": G, "seqs": [...], "at": ISO-8601}`` (``testkit.fault_gate`` writes them)."""
        if path.exists():
            for line in path.read_text().splitlines():
                d = json.loads(line)
                self.add(d["gate"], d["seqs"], dt.datetime.fromisoformat(d["at"]))


@dataclasses.dataclass(frozen=True)
class FaultCheck:
    """What a fault run ended with: ``events`` in the ledger (each journal event once), of them
    ``replayed`` stored after their gate read them back for a replay and ``direct`` the others;
    ``shifts``, ``statements`` and their ``total`` (BRL) on both ledgers alike; ``audit`` the exit
    code of ``portgate evidence audit`` (0)."""

    events: int
    direct: int
    replayed: int
    shifts: int
    statements: int
    total: Decimal
    audit: int

    def line(self) -> str:
        return (f"{self.events} events: {self.direct} direct, {self.replayed} after a replay; exactly once, "
                f"no gap; {self.shifts} shifts and {self.statements} statements (R$ {self.total:.2f}) identical "
                f"to the fault-free run; evidence audit exit {self.audit}")


def journal_events(journals: Iterable[Path]) -> dict[str, list[tuple[int, str, bytes]]]:
    """gate -> its journal's ``(seq, event_id, body)`` in seq order (read-only: the gate may run)."""
    out: dict[str, list] = {}
    for path in journals:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as c:
            rows = c.execute("SELECT seq, event_id, body FROM journal ORDER BY seq").fetchall()
        assert rows, f"journal {path} is empty"
        out[decode(rows[0][2]).gate_id] = [(s, e, bytes(b)) for s, e, b in rows]
    return out


def ledger_events(url: str) -> tuple[list, int]:
    """The ledger's ``(gate_id, seq, event_id, received_at)`` rows and its dead-letter count."""
    engine = make_engine(url)
    try:
        with engine.connect() as c:
            rows = c.execute(select(events.c.gate_id, events.c.seq, events.c.event_id, events.c.received_at)).all()
            dead = c.execute(select(func.count()).select_from(dead_letters)).scalar_one()
    finally:
        engine.dispose()
    return rows, dead


def assert_exactly_once(url: str, journaled: Mapping[str, list]) -> list:
    """Every journal event id in the ledger exactly once, at its gate and seq; no event that no
    journal holds; each gate's seqs 1..N without a gap; no dead letter. Returns the ledger rows."""
    rows, dead = ledger_events(url)
    counts = collections.Counter(r.event_id for r in rows)
    want = {e: (g, s) for g, evs in journaled.items() for s, e, _ in evs}
    missing = sorted(want[e] for e in want if counts[e] == 0)
    twice = sorted(want[e] for e in want if counts[e] > 1)
    stray = sorted((r.gate_id, r.seq) for r in rows if r.event_id not in want)
    assert not (missing or twice or stray), (f"journal events missing from the ledger {missing[:10]} "
                                             f"({len(missing)}), stored more than once {twice[:10]} "
                                             f"({len(twice)}), in no journal {stray[:10]} ({len(stray)})")
    for g, evs in journaled.items():
        seqs = sorted(r.seq for r in rows if r.gate_id == g)
        assert seqs == list(range(1, len(seqs) + 1)) == [s for s, _, _ in evs], f"gate {g}: sequence gap"
    assert dead == 0, f"{dead} dead letters"
    return rows


def split_direct(rows: list, replays: ReplayLog) -> tuple[int, int]:
    """(direct, replayed) of the ledger rows: replayed when stored at or after its gate first read it
    back for a replay command."""
    replayed = 0
    for r in rows:
        asked = replays.first.get((r.gate_id, r.seq))
        got = r.received_at if r.received_at.tzinfo else r.received_at.replace(tzinfo=dt.UTC)
        replayed += asked is not None and got >= asked
    return len(rows) - replayed, replayed


def ingest_journals(url: str, journaled: Mapping[str, list], keys_dir: str | Path, port: str = "santos") -> None:
    """A fresh ledger at ``url`` holding the journals' events as the office's ingest stores them:
    their bodies, as each gate publishes them, through ``LedgerWriter.process`` in batches (no
    broker: the writer's publish-only client is never connected, replies are dropped)."""
    upgrade(url)
    engine = make_engine(url)
    config = CentralConfig(database_url=url, port=port, keys_dir=str(keys_dir), mqtt=MqttConfig(port=1),
                           ingest=IngestSettings(relay_presence=False, writer="thread"))
    writer = LedgerWriter(config, engine, KeyRing(str(keys_dir)))
    try:
        items = [(gate_events(port, g), body) for g, evs in journaled.items() for _, _, body in evs]
        for n, at in enumerate(range(0, len(items), BATCH)):
            out = writer.process(n, items[at:at + BATCH])
            assert not out.stats.get("dead_letters"), f"the reference ingest dead-lettered: {out.stats}"
    finally:
        engine.dispose()


def dispatch_dates(journaled: Mapping[str, list]) -> tuple[dt.date, dt.date]:
    """The first and last dispatch date of the journals' taps (``BASE_DATE`` twice if none)."""
    days = [ev.payload.dispatch.date for evs in journaled.values() for ev in (decode(b) for _, _, b in evs)
            if isinstance(ev.payload, TapPayload) and ev.payload.dispatch is not None]
    return (min(days), max(days)) if days else (BASE_DATE, BASE_DATE)


def closed(url: str, date_from: dt.date, date_to: dt.date) -> tuple[list, list]:
    """Close [date_from, date_to] on the ledger at ``url`` (the month close ``portgate pay close``
    runs, the example port's rulebook and calendar) and read back its shifts and current statements."""
    _port, rulebook, calendar = load_setup(None)
    engine = make_engine(url)
    try:
        close_month(engine, date_from, date_to, calendar.zone, rulebook, calendar, now=CLOSED_AT)
        with engine.connect() as c:  # shifts by id: the order of two starting together is the database's
            found = sorted(read_shifts(c, date_from, date_to), key=lambda s: s.shift_id)
            return found, read_statements(c, date_from, date_to)
    finally:
        engine.dispose()


def _first_difference(what: str, got: list, want: list) -> str:
    for a, b in zip(got, want):
        if a != b:
            return f"{what} differ from the fault-free run's: {a!r} != {b!r}"
    return f"{len(got)} {what} on the fault run's ledger, {len(want)} on the fault-free run's"


def assert_same_pay(url: str, reference_url: str, journaled: Mapping[str, list], *,
                    shifts_expected: bool = True) -> tuple[int, int, Decimal]:
    """Close both ledgers over the journals' dispatch dates; their shifts and statements must be
    equal (and some, unless ``shifts_expected`` is False). Returns (shifts, statements, total BRL)."""
    lo, hi = dispatch_dates(journaled)
    got_shifts, got_statements = closed(url, lo, hi)
    want_shifts, want_statements = closed(reference_url, lo, hi)
    assert got_shifts == want_shifts, _first_difference("shifts", got_shifts, want_shifts)
    assert got_statements == want_statements, _first_difference("statements", got_statements, want_statements)
    if shifts_expected:
        assert want_shifts and want_statements, "the journals made no shift: the check would be empty"
    return len(want_shifts), len(want_statements), sum((s.total for s in want_statements), Decimal(0))


def audit_exit(url: str, keys_dir: str | Path) -> tuple[int, str]:
    """``portgate evidence audit --db URL --keys-dir DIR`` (the real command, in a process of its
    own): its exit code and its output."""
    done = subprocess.run([sys.executable, "-m", "app.cli", "evidence", "audit", "--db", url,
                           "--keys-dir", str(keys_dir), "--nice", "0"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


def check_fault_run(url: str, journals: Iterable[Path], keys_dir: str | Path, work: Path, *,
                    replays: ReplayLog | None = None, shifts_expected: bool = True) -> FaultCheck:
    """Every check of the module docstring on the fault run's ledger ``url`` (the run over: nothing
    writes to it any more); the reference ledger is made in ``work`` (a fresh folder). Raises
    ``AssertionError`` naming the first check that fails."""
    journaled = journal_events(journals)
    rows = assert_exactly_once(url, journaled)
    work.mkdir(parents=True, exist_ok=True)
    reference = f"sqlite:///{work / 'reference.db'}"
    ingest_journals(reference, journaled, keys_dir)
    n_shifts, n_statements, total = assert_same_pay(url, reference, journaled, shifts_expected=shifts_expected)
    code, said = audit_exit(url, keys_dir)
    assert code == 0, f"portgate evidence audit exit {code}:\n{said}"
    direct, replayed = split_direct(rows, replays or ReplayLog())
    return FaultCheck(len(rows), direct, replayed, n_shifts, n_statements, total, code)
