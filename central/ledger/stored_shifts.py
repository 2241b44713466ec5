"""The stored shifts of a month close's dates as the database hands them back, and their digests:
what the incremental close (``central.ledger.reclose``) compares with the last close's outputs
(RULES.md G5, G8, G9, P6). Changes when the ``shifts``/``shift_flags`` columns or the way a stored
row is digested change (bump ``reclose.DIGEST_VERSION`` then); ``reclose`` decides what to rebuild."""

from __future__ import annotations

import datetime as dt
import hashlib
import operator
from collections import defaultdict

import msgspec
from sqlalchemy import and_, bindparam, func, select
from sqlalchemy.engine import Connection

from central.ledger.bulk import bind_tuples
from central.ledger.close_record import utc_times
from central.ledger.store import SHIFT_COLUMNS, _raw_rows
from central.ledger.shifts import Shift
from central.ledger.tables import shift_flags, shifts

_encode = msgspec.msgpack.encode
_FIRST = operator.itemgetter(0)


def _stored_rows(conn: Connection, date_from: dt.date, date_to: dt.date) -> tuple[list, list]:
    """The stored shifts of the dates as the driver hands them back (PostgreSQL: times in UTC,
    ``utc_times``), in the database's shift id order: rows (``SHIFT_COLUMNS`` but ``rebuilt_at``)
    and flags ``(registration, shift_id, flag, detail)`` (by shift id, then as stored)."""
    c, f = shifts.c, shift_flags.c
    lo, hi = bind_tuples(conn.dialect, shifts, ("work_date", "work_date"), [(date_from, date_to)])[0]
    values = {"d_lo": lo, "d_hi": hi}
    in_dates = and_(c.work_date >= bindparam("d_lo"), c.work_date <= bindparam("d_hi"))
    with utc_times(conn):  # compared and digested as instants only
        rows = _raw_rows(conn, select(*(c[n] for n in SHIFT_COLUMNS[:-1])).where(in_dates)
                         .order_by(c.shift_id), values)
    flags = _raw_rows(conn, select(c.registration, f.shift_id, f.flag, f.detail)
                      .join(shifts, c.shift_id == f.shift_id).where(in_dates)
                      .order_by(f.shift_id, f.id), values)
    return rows, flags


def _unexited_rows(conn: Connection, date_from: dt.date, date_to: dt.date) -> list[tuple]:
    """``(registration, period_end)`` of the stored shifts of the dates not closed by an exit."""
    c = shifts.c
    lo, hi = bind_tuples(conn.dialect, shifts, ("work_date", "work_date"), [(date_from, date_to)])[0]
    return _raw_rows(conn, select(c.registration, c.period_end).where(
        c.work_date >= bindparam("d_lo"), c.work_date <= bindparam("d_hi"), c.closed_by != bindparam("ex")),
        {"d_lo": lo, "d_hi": hi, "ex": "exit"})


def _count_stored(conn: Connection, date_from: dt.date, date_to: dt.date) -> int:
    """How many shifts of the dates are stored."""
    c = shifts.c
    return conn.execute(select(func.count()).select_from(shifts).where(
        c.work_date >= date_from, c.work_date <= date_to)).scalar_one()


def _by_worker(rows: list, flags: list) -> tuple[dict, dict]:
    """``({registration: [row]}, {registration: [(shift_id, flag, detail)]})``."""
    by_reg: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        by_reg[row[1]].append(row)
    flags_by: dict[str, list[tuple]] = defaultdict(list)
    for reg, sid, code, detail in flags:
        flags_by[reg].append((sid, code, detail))
    return by_reg, flags_by


def _whole_digest(*parts) -> str:
    """SHA-256 of every stored row of the dates, in the database's order (equal for equal rows read
    the same way: a check for "nothing changed", not compared across databases)."""
    return hashlib.sha256(_encode(parts)).hexdigest()


def _output_digest(rows: list[tuple], flags) -> str:
    """SHA-256 of a worker's shift rows (by shift id) and flags (by shift id, then as stored). An
    aware time is packed as its instant (msgpack's timestamp): the rows PostgreSQL hands back in
    the session's zone and the same rows as bound (UTC) give the same digest, with no conversion."""
    return hashlib.sha256(_encode([sorted(rows), sorted(flags, key=_FIRST)])).hexdigest()


def _by_shift_id(found: list[Shift], bound: list[tuple]) -> tuple[dict, dict, dict]:
    """``(shifts, rows, flags)`` per worker, each by shift id: ``found``, their rows as bound but
    ``rebuilt_at`` and their flags ``(shift_id, code, detail)``; the workers in the order of
    their first shift id (as one sort of all the shifts by id would meet them)."""
    groups: dict[str, list[tuple]] = defaultdict(list)
    for s, row in zip(found, bound):
        groups[s.registration].append((s.shift_id, s, row))
    for items in groups.values():
        items.sort(key=_FIRST)  # shift ids are unique
    rebuilt: dict[str, list[Shift]] = {}
    new_rows: dict[str, list[tuple]] = {}
    new_flags: dict[str, list[tuple]] = {}
    for reg, items in sorted(groups.items(), key=_first_id):
        rebuilt[reg] = [s for _sid, s, _row in items]
        new_rows[reg] = [row[:-1] for _sid, _s, row in items]
        new_flags[reg] = [(sid, f.code, f.detail) for sid, s, _row in items if s.flags for f in s.flags]
    return rebuilt, new_rows, new_flags


def _first_id(group: tuple[str, list[tuple]]) -> str:
    """A worker's first shift id (``_by_shift_id``'s groups, each sorted)."""
    return group[1][0][0]
