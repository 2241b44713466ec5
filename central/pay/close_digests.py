"""The pay half's digests of a month close (``central.pay.close``): of a worker's pay inputs (the
rulebook, the holiday calendar, the worker's stored-shift digest, which of its shifts are still
open, ``PAY_DIGEST_VERSION``) and of its outputs (its current statements' ``DIGESTED_COLUMNS``),
and of all the current statements of a scope. Pure: no database, no clock (``now`` is given).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import operator
from collections import defaultdict

import msgspec

from central.ledger.reclose import Rebuilt
from central.pay.calendar import HolidayCalendar
from central.pay.rulebook import Rulebook
from central.pay.statements_store import OPEN_GRACE
from central.pay.versions import STATEMENT_COLUMNS

#: Part of every pay input digest: bump it when the pay engine or the statement storage changes.
PAY_DIGEST_VERSION = b"pay/1"

#: The columns of a current statement that its worker's pay output digest covers, in this order
#: (not the office's payment and release marks, which pay leaves alone).
DIGESTED_COLUMNS = ("registration", "statement_id", "shift_id", "rulebook", "version", "digest",
                    "total_cents", "flags", "hold_reason", "service_end", "due_at")


def rulebook_digest(rulebook: Rulebook) -> bytes:
    """SHA-256 of every field of the rulebook (its TOML's parsed content)."""
    return hashlib.sha256(msgspec.json.encode(rulebook)).digest()


def calendar_digest(calendar: HolidayCalendar) -> bytes:
    """SHA-256 of the calendar's zone, years and holidays."""
    body = [calendar.timezone, calendar.years.start, calendar.years.stop,
            sorted((d.isoformat(), n) for d, n in calendar.days.items())]
    return hashlib.sha256(msgspec.json.encode(body)).digest()


def pay_inputs(ledger: Rebuilt, rulebook: Rulebook, calendar: HolidayCalendar,
               now: dt.datetime) -> dict[str, str]:
    """``{registration: SHA-256 hex}``: each worker's pay input digest (the module docstring of
    ``central.pay.close`` lists what it covers), from the shift half's ``ledger``."""
    common = PAY_DIGEST_VERSION + rulebook_digest(rulebook) + calendar_digest(calendar)
    out = {}
    for reg, shifts_digest in ledger.outputs.items():
        h = hashlib.sha256(common)
        h.update(shifts_digest.encode())
        h.update(bytes(now < end + OPEN_GRACE for end in sorted(ledger.unexited.get(reg, ()))))
        out[reg] = h.hexdigest()
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class Digested:
    """The current statements of the dates (``DIGESTED_COLUMNS``, by statement id), each worker's
    pay output digest of them and their whole digest."""

    rows: list[tuple]
    outputs: dict[str, str]
    whole: str


def digest_written(rows: list[tuple], written: tuple[tuple, ...], gone: frozenset[str], lo, hi) -> Digested:
    """``Digested`` of the current statements after a pay run, computed from the ``rows`` read
    before it (``DIGESTED_COLUMNS``, by statement id) and what it wrote: the rows but the ``gone`` (superseded) ones,
    and the ``written`` rows (``STATEMENT_COLUMNS``, as bound) of work days [lo, hi] (bound
    values), by statement id (pure: run beside the writes)."""
    out = [r for r in rows if r[1] not in gone] if gone else list(rows)
    out.extend(_WRITTEN(r) for r in written if lo <= r[_WORK_DAY] <= hi)
    out.sort(key=_STATEMENT_ID)
    return Digested(out, pay_outputs(out), whole_digest(out))


_WRITTEN = operator.itemgetter(*(STATEMENT_COLUMNS.index(n) for n in DIGESTED_COLUMNS))
_WORK_DAY = STATEMENT_COLUMNS.index("work_day")
_STATEMENT_ID = operator.itemgetter(DIGESTED_COLUMNS.index("statement_id"))


def whole_digest(rows: list[tuple]) -> str:
    """SHA-256 of all the rows, in their order (times as msgpack timestamps: any zone)."""
    return hashlib.sha256(msgspec.msgpack.encode(rows)).hexdigest()


def pay_outputs(rows: list[tuple]) -> dict[str, str]:
    """``{registration: SHA-256}`` of each worker's rows (by statement id; an aware time packed as
    its instant: PostgreSQL's rows in the session's zone digest as the same rows in UTC)."""
    by_reg: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        by_reg[row[0]].append(row[1:])
    return {reg: hashlib.sha256(msgspec.msgpack.encode(sorted(items))).hexdigest()
            for reg, items in by_reg.items()}
