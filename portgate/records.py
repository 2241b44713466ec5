"""Domain records read from the data files of DESIGN.md (workers, cards, escala, taps).

Frozen dataclasses validated when built (STYLE.md 3). Times are aware datetimes; dates are local
calendar dates of the port. ``load_csv`` reads a whole file and either returns every record or raises
one ``BadInput`` naming every bad row by file and line: nothing is half-read. The row builders it
uses (``build_rows``, ``build_each``, ``build_cells``, ``parse_rows``) are ``portgate.record_rows``,
exported here too.
"""

from __future__ import annotations

import dataclasses
import functools
import datetime as dt
import enum
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar
from zoneinfo import ZoneInfo

from portgate import cells, tables
from portgate.cells import parse_aware
from portgate.errors import BadInput
from portgate.record_rows import (  # noqa: F401  (imported from here by the readers of files)
    build_cells, build_each, build_rows, line_of, parse_rows, raise_bad_rows,
)
from portgate.registration import case_clashes, registration_problem
from portgate.timeutil import parse_period  # re-exported: the one spelling of a period ("19-01")
from portgate.uid import UidFormat, canonical_uid, enrol_uid


class WorkerStatus(enum.StrEnum):
    ACTIVE = "active"
    SUSPENDED = "suspended"
    CANCELLED = "cancelled"


class CardKind(enum.StrEnum):
    CONTROL = "control"  # cartão de controle
    BADGE = "badge"  # chapa
    INSPECTOR = "inspector"  # Fiscal do Sindicato


class CardStatus(enum.StrEnum):
    ACTIVE = "active"
    LOST = "lost"
    CONFISCATED = "confiscated"
    REPLACED = "replaced"


class Voyage(enum.StrEnum):
    LONG_HAUL = "long_haul"  # longo curso
    CABOTAGE = "cabotage"  # cabotagem


class Berth(enum.StrEnum):
    BERTHED = "berthed"  # atracado
    ANCHORED = "anchored"  # fundeado / ao largo


class ReaderKind(enum.StrEnum):
    CONTROL = "control"
    BADGE = "badge"


class ReaderDirection(enum.StrEnum):
    """A reader's declared direction (RULES.md G6, G9): entry only, exit only, or both."""

    IN = "in"
    OUT = "out"
    BOTH = "both"


NAME_LIMIT = 255  # characters of a worker name: the registry column (String(255))


@dataclasses.dataclass(frozen=True, slots=True)
class Worker:
    """A registered port worker (matrícula). ``rotation_number`` orders the rodízio."""

    registration: str
    name: str
    category: str
    status: WorkerStatus
    suspended_from: dt.date | None = None
    suspended_until: dt.date | None = None
    health_exam_date: dt.date | None = None
    booklet_revalidated_year: int | None = None
    rotation_number: int | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, str]) -> Worker:
        """Build from a workers.csv row; raises ``BadInput`` for a bad field, a suspension that
        ends before it starts, a negative rotation number, a name longer than ``NAME_LIMIT`` (255,
        the registry column) or holding U+FFFD (a byte the form or file decoder could not read)."""
        worker = cls._from_row(row)
        if worker.suspended_from and worker.suspended_until and worker.suspended_from > worker.suspended_until:
            raise BadInput(f"suspended_from {worker.suspended_from} is after suspended_until {worker.suspended_until}")
        if worker.rotation_number is not None and worker.rotation_number < 0:
            raise BadInput(f"rotation_number {worker.rotation_number} is negative")
        if len(worker.name) > NAME_LIMIT:
            raise BadInput(f"name is longer than {NAME_LIMIT} characters")
        if "\ufffd" in worker.name:
            raise BadInput("name has a byte that is not UTF-8 text")
        return worker

    @classmethod
    def _from_row(cls, row: Mapping[str, str]) -> Worker:
        return cls(
            registration=cells.text(row.get("registration"), "registration"),
            name=cells.text(row.get("name"), "name"),
            category=cells.term(row.get("category"), "category"),
            status=cells.choice(WorkerStatus, row.get("status"), "status"),
            suspended_from=cells.date(row.get("suspended_from"), "suspended_from", optional=True),
            suspended_until=cells.date(row.get("suspended_until"), "suspended_until", optional=True),
            health_exam_date=cells.date(row.get("health_exam_date"), "health_exam_date", optional=True),
            booklet_revalidated_year=cells.whole(
                row.get("booklet_revalidated_year"), "booklet_revalidated_year", optional=True
            ),
            rotation_number=cells.whole(row.get("rotation_number"), "rotation_number", optional=True),
        )

    @classmethod
    def from_csv_row(cls, row: Mapping[str, str]) -> Worker:
        """``from_row`` for a workers.csv row a person wrote, which may carry the payroll
        identifiers ``cpf`` and ``pis`` (``WorkerIds``: checked by their check digits here, so a
        mistyped one refuses the row by file and line; kept in the registry only)."""
        WorkerIds.from_row(row)
        return cls.from_row(row)


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerIds:
    """A worker's payroll identifiers: CPF and PIS/NIS/PASEP as bare digits (``portgate.docbr``),
    each None when not given. Kept in the office's registry for the payroll and the payslip, never
    in ``Worker`` (which travels to the gates in the roster: a gate has no use for them, LGPD art.
    6 III)."""

    cpf: str | None = None
    pis: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, str]) -> WorkerIds:
        """The ``cpf`` and ``pis`` cells of a workers.csv row or form (empty or absent: None).
        ``BadInput`` naming the column for a wrong length or wrong check digits."""
        from portgate import docbr  # lazy: validate-docbr, not needed by the gate's screen that reads ReaderKind

        return cls(docbr.cpf(row.get("cpf"), "cpf"), docbr.pis(row.get("pis"), "pis"))



@dataclasses.dataclass(frozen=True, slots=True)
class Card:
    """A card: control card, badge (chapa) or inspector card, with its canonical UID."""

    uid: str
    kind: CardKind
    registration: str
    status: CardStatus

    @classmethod
    def from_row(cls, row: Mapping[str, str]) -> Card:
        """Build from a record of the office's copy (``uid`` canonical). Raises ``BadInput``."""
        return cls._build(row, canonical_uid(cells.text(row.get("uid"), "uid")))

    @classmethod
    def from_csv_row(cls, row: Mapping[str, str]) -> Card:
        """Build from a cards.csv row written by a person: ``uid`` in the optional column
        ``uid_form`` (``portgate.uid.enrol_uid``: 10 decimal digits with no form are refused as
        ambiguous) and ``registration`` one by the registry's rule (``portgate.registration``:
        letters and digits with - . /, no formula lead). Raises ``BadInput``."""
        form = (row.get("uid_form") or "").strip() or None
        card = cls._build(row, enrol_uid(cells.text(row.get("uid"), "uid"), form))
        problem = registration_problem(card.registration)
        if problem is not None:
            raise BadInput(problem)
        return card

    @classmethod
    def _build(cls, row: Mapping[str, str], uid: str) -> Card:
        return cls(
            uid=uid,
            kind=cells.choice(CardKind, row.get("kind"), "kind"),
            registration=cells.text(row.get("registration"), "registration"),
            status=cells.choice(CardStatus, row.get("status"), "status"),
        )


@functools.lru_cache(maxsize=8192)
def period_bounds(day: dt.date, period: str, zone: ZoneInfo) -> tuple[dt.datetime, dt.datetime]:
    """(start, end) in UTC of ``period`` (``"19-01"``) on local date ``day`` in ``zone``; it crosses
    midnight if the end hour is not after the start hour. Raises ``BadInput`` for a malformed period.
    The one place a period becomes instants: the escala, the ledger and the pay CSV all use it.
    Cached (a month holds about 31 x 4 distinct periods, met once per shift)."""
    start_h, end_h = parse_period(period)
    start = dt.datetime.combine(day, dt.time(0), zone) + dt.timedelta(hours=start_h)
    end_day = day if end_h > start_h else day + dt.timedelta(days=1)
    end = dt.datetime.combine(end_day, dt.time(0), zone) + dt.timedelta(hours=end_h)
    return start.astimezone(dt.UTC), end.astimezone(dt.UTC)


@dataclasses.dataclass(frozen=True, slots=True)
class EscalaEntry:
    """One dispatch: a worker, a ship, a post and function, in one period of one local date."""

    date: dt.date
    period: str
    ship: str
    ship_name: str
    voyage: Voyage
    berth: Berth
    gate_id: str
    post: str
    function: str
    registration: str

    @classmethod
    def from_row(cls, row: Mapping[str, str]) -> EscalaEntry:
        period = cells.text(row.get("period"), "period")
        parse_period(period)
        date = cells.date(row.get("date"), "date")
        return cls(
            date=date,
            period=period,
            ship=cells.text(row.get("ship"), "ship"),
            ship_name=(row.get("ship_name") or "").strip(),
            voyage=cells.choice(Voyage, row.get("voyage"), "voyage"),
            berth=cells.choice(Berth, row.get("berth"), "berth"),
            gate_id=cells.text(row.get("gate_id"), "gate_id"),
            post=cells.text(row.get("post"), "post"),
            function=cells.term(row.get("function"), "function"),
            registration=cells.text(row.get("registration"), "registration"),
        )

    def bounds(self, tz: ZoneInfo | str) -> tuple[dt.datetime, dt.datetime]:
        """Return the period's (start, end) as aware UTC datetimes, in the port's time zone ``tz``.

        A period whose end hour is not after its start hour ends on the next local day (19-01).
        """
        return period_bounds(self.date, self.period, ZoneInfo(tz) if isinstance(tz, str) else tz)


@dataclasses.dataclass(frozen=True, slots=True)
class Tap:
    """A recorded or scripted read (taps.csv): when, at which gate, on which reader, which UID, and
    the reader's declared direction (optional column ``direction``: ``in|out|both``, default
    ``both``; G6, G9)."""

    at: dt.datetime
    gate_id: str
    reader: ReaderKind
    uid: str
    uid_form: UidFormat = UidFormat.HEX  # the form the reader produced (portgate.uid)
    direction: ReaderDirection = ReaderDirection.BOTH

    @classmethod
    def from_row(cls, row: Mapping[str, str]) -> Tap:
        direction = (row.get("direction") or "").strip()
        return cls(
            at=parse_aware(row.get("at")),
            gate_id=cells.text(row.get("gate_id"), "gate_id"),
            reader=cells.choice(ReaderKind, row.get("reader"), "reader"),
            uid=(row.get("uid") or "").strip(),  # validated by the gate: a bad UID is a DENY, not a crash
            uid_form=cells.choice(UidFormat, row.get("uid_form") or "hex", "uid_form"),
            direction=cells.choice(ReaderDirection, direction, "direction") if direction else ReaderDirection.BOTH,
        )


R = TypeVar("R")

COLUMNS: dict[type, tuple[str, ...]] = {
    Worker: (
        "registration", "name", "category", "status", "suspended_from", "suspended_until",
        "health_exam_date", "booklet_revalidated_year", "rotation_number",
    ),
    Card: ("uid", "kind", "registration", "status"),
    EscalaEntry: (
        "date", "period", "ship", "ship_name", "voyage", "berth", "gate_id", "post", "function",
        "registration",
    ),
    Tap: ("at", "gate_id", "reader", "uid", "uid_form", "direction"),
}


# columns a person's file may add to ``COLUMNS`` (read by the record's ``from_csv_row``, not stored)
# (a workers.csv's ``port``: the office's registry only, ``central.registry.worker_ports``)
CSV_ONLY_COLUMNS: dict[type, tuple[str, ...]] = {Card: ("uid_form",), Worker: ("cpf", "pis", "port")}


def load_csv(path: str | Path, record: type[R]) -> list[R]:
    """``load_csv_rows`` without the places."""
    return [r for _where, r in load_csv_rows(path, record)]


def load_csv_rows(path: str | Path, record: type[R]) -> list[tuple[str, R]]:
    """Read a UTF-8 CSV file with a header row (``portgate.tables``) into ``(where, record)``
    pairs, ``where`` = ``file.csv:LINE``.

    Raises ``BadInput`` if the file is missing, a required column is absent from the header, the
    header names a column outside ``COLUMNS[record]`` and ``CSV_ONLY_COLUMNS`` (``file.csv:1``,
    naming it), or any row is invalid (every bad row is listed with its line number; no partial result is returned).
    When rows are invalid, the good rows' repeated keys (``UNIQUE_KEYS``: ``workers.csv:5:
    registration V001 repeats line 2``) are listed with them, in line order, so one run names
    every row to fix; a file whose rows all parse is returned, repeats and all, for the caller's
    own checks (``central.registry.store.import_files``, ``load_unique_csv``) to name them with
    the rest.
    """
    placed, errors = load_csv_parts(path, record)
    if errors:
        errors = sorted(errors + repeated_keys(placed, record), key=line_of)
    raise_bad_rows(errors)
    return placed


def load_csv_parts(path: str | Path, record: type[R]) -> tuple[list[tuple[str, R]], list[str]]:
    """``load_csv_rows`` without the raise for bad rows: the good rows' ``(where, record)`` pairs
    and every bad row's ``file.csv:LINE: reason`` (in line order), for a caller that checks the
    good rows further and names every bad row of the file in one refusal
    (``central.registry.store.import_files``). ``BadInput`` for what makes the file unreadable
    (missing, a required column absent from the header, an unknown column)."""
    required = [c for c in COLUMNS[record] if _is_required(record, c)]
    build = getattr(record, "from_csv_row", record.from_row)  # a person's file: stricter

    def checked(row: Mapping[str, str], where: str) -> tuple[str, R]:
        missing = [c for c in required if row.get(c) is None]
        if missing:
            raise BadInput(f"missing column(s) {', '.join(missing)}")
        return where, build(row)

    known = COLUMNS[record] + CSV_ONLY_COLUMNS.get(record, ())
    return build_each(tables.read_rows(path, required, known=known), checked)


# The key a roster file must not repeat (a later row would silently replace the earlier one).
UNIQUE_KEYS: dict[type, tuple[str, Callable[[object], str]]] = {}


def load_unique_csv(path: str | Path, record: type[R]) -> list[R]:
    """``load_csv`` that also refuses a repeated key (``UNIQUE_KEYS``: a worker's registration,
    a card's canonical UID, so ``04a1`` and ``04A1`` are one card): ``BadInput`` naming every bad
    row, ``cards.csv:5: uid 04A1 repeats line 2``."""
    placed = load_csv_rows(path, record)
    errors = repeated_keys(placed, record)
    if errors:
        raise BadInput("\n".join(errors))
    return [r for _where, r in placed]


def load_roster_csv(workers_csv: str | Path, cards_csv: str | Path) -> tuple[list[Worker], list[Card]]:
    """``load_unique_csv`` of a workers.csv and its cards.csv (the gate's seed, the office's CSV
    roster), and a card whose registration differs only in letter case from a worker's or an
    earlier card's (``portgate.registration.case_clashes``: ``v001`` would never meet ``V001``)
    refused too: ``BadInput`` naming every such row, ``cards.csv:3: registration v001 ...``."""
    workers = load_unique_csv(workers_csv, Worker)
    placed = load_csv_rows(cards_csv, Card)
    errors = sorted(repeated_keys(placed, Card) + case_clashes(
        [(where, c.registration) for where, c in placed], {w.registration for w in workers}), key=line_of)
    if errors:
        raise BadInput("\n".join(errors))
    return workers, [c for _where, c in placed]


def repeated_keys(placed: Sequence[tuple[str, R]], record: type[R]) -> list[str]:
    """The ``file:line: <key> <value> repeats line N`` errors of ``placed`` rows (``UNIQUE_KEYS``)."""
    if record not in UNIQUE_KEYS:
        return []
    label, key = UNIQUE_KEYS[record]
    seen: dict[str, str] = {}
    errors = []
    for where, row in placed:
        value = key(row)
        if value in seen:
            errors.append(f"{where}: {label} {value} repeats line {seen[value].rsplit(':', 1)[1]}")
        else:
            seen[value] = where
    return errors


def _is_required(record: type, column: str) -> bool:
    for f in dataclasses.fields(record):
        if f.name == column:
            return f.default is dataclasses.MISSING
    return False


UNIQUE_KEYS.update({
    Worker: ("registration", lambda w: w.registration),
    Card: ("uid", lambda c: c.uid),
})
