"""Storing a pay run's statements as versions (the rules in ``central.pay.versions``): each
statement planned against its shift's stored versions (kept, or a new version superseding the
current one, an adjustment for what was paid), then every change written in one transaction.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import gc
import types
from collections.abc import Callable, Mapping

from sqlalchemy import String, bindparam, func, select, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from central.db import store_failure
from central.ledger.bulk import bind_tuples, insert_tuples
from central.ledger.tables import statement_lines, statements
from central.pay.duplicates import pick_current, supersede_duplicates
from central.pay.versions import (
    ADJUSTMENT_FLAG,
    ADJUSTMENT_RULE,
    LINE_COLUMNS,
    PAY_CONFLICT,
    STATEMENT_COLUMNS,
    SaveResult,
    _cents,
    _reason,
    _unproven_reason,
    proven_total,
    digest_and_cents,
    statement_digest,
    statement_id,
    with_adjustment,
    with_hold,
)
from central.pay.watchmen import Statement

#: Shift ids per history query (one bound parameter each; PostgreSQL: all in one array parameter).
CHUNK = 2000


def save_statements(engine: Engine, found: list[Statement], *, now: dt.datetime,
                    by: str | None = None, reason: str | None = None,
                    lines_altered: frozenset[str] = frozenset(),
                    lost: dict[str, str] | None = None,
                    before_write: Callable[[], None] | None = None,
                    before_commit: Callable[[], None] | None = None,
                    before_lines: Callable[[tuple[tuple, ...], frozenset[str]], None] | None = None) -> SaveResult:
    """Store a pay run's statements as new versions where they differ from the current ones.
    ``by``: who ran the pay (stored as ``computed_by``); ``reason``: the operator's reason, prefixed
    to the automatic one on each superseded statement; ``lines_altered``: ids of current statements
    whose stored lines are known not to be what their digest stands for (superseded even when
    their digest and row match); ``lost``: ``{shift_id: hold reason}`` of shifts with a payment
    the statements no longer show (``central.pay.payments.lost_payments``): stored on hold. Raises ``StoreError`` on a database failure, ``StoreConflict``
    (exit 1: run again) when another run stored the same statements meanwhile (nothing is stored
    then: one transaction). The new statements and their lines go in as one bulk insert each
    (``central.ledger.bulk``: COPY on PostgreSQL) in the same transaction; on PostgreSQL the
    history of all the statements' shifts is read by one query (the ids as one array parameter),
    elsewhere by ``CHUNK``. ``before_write``: called once every statement is planned, before the
    first write (the month close lets its shift half write then). ``before_lines``: called
    with the new statement rows as bound (``STATEMENT_COLUMNS``) and the ids of the versions
    superseded once the statements are written, before their lines are (the month close digests
    them meanwhile). ``before_commit``: called once everything is written, before the commit (not
    when there is nothing to save); what it raises rolls the run back, nothing stored (the month
    close waits there for its shift half's commit, ``central.pay.close_behind``: the statements
    are written while the shifts are, and committed after them)."""
    if not found:
        return SaveResult(lost=tuple(sorted(lost or ())))
    run = _Run()
    enabled = gc.isenabled()
    gc.disable()  # ~10^5 long-lived rows built in a burst, none in a cycle
    try:
        with engine.begin() as conn:
            size = len(found) if conn.dialect.name == "postgresql" else CHUNK  # one array parameter
            for chunk in range(0, len(found), size):
                _plan_chunk(conn, found[chunk:chunk + size], run, now=now, by=by,
                            lines_altered=lines_altered, lost=lost)
            if before_write is not None:
                before_write()
            updated, bound, replaced = _write(conn, run, reason, now, before_lines)
            if before_commit is not None:
                before_commit()
    except SQLAlchemyError as exc:
        raise store_failure("saving statements failed", exc, PAY_CONFLICT) from exc
    finally:
        if enabled:
            gc.enable()
    return SaveResult(run.written, run.superseded, run.adjusted, run.unchanged, tuple(run.stored), run.on_hold,
                      tuple(sorted(lost or ())), bound, replaced, updated, len(run.lines))


def _write(conn, run: _Run, reason: str | None, now: dt.datetime,
           before_lines: Callable[[tuple[tuple, ...], frozenset[str]], None] | None) -> tuple:
    """Write ``run``: the superseded versions marked (the duplicates too), the new statement rows
    (``before_lines`` told them as bound and the ids superseded), then their lines. Returns
    ``(rows the supersede UPDATEs changed, the statement rows as bound, the ids superseded)``."""
    updated = _supersede_replaced(conn, run.replaced, reason, now)
    supersede_duplicates(conn, run.intruders, run.kept_ids, now)  # counted writes: the close reads back
    bound = tuple(bind_tuples(conn.dialect, statements, STATEMENT_COLUMNS, run.rows))
    insert_tuples(conn, statements, STATEMENT_COLUMNS, bound, bound=True)
    replaced = frozenset(cur["statement_id"] for cur, _st, _sid, _alt in run.replaced)
    if before_lines is not None:
        before_lines(bound, replaced)
    insert_tuples(conn, statement_lines, LINE_COLUMNS, run.lines)
    return updated, bound, replaced


@dataclasses.dataclass(slots=True)
class _Run:
    """What one ``save_statements`` run gathers before it writes: the new statement rows and their
    lines, the current statements they replace ``(current row, statement, new id, altered)``, extra
    current statements ``(row, shift id)``, the statement current per shift after the run, the
    statements stored, and the counts of ``SaveResult``."""

    rows: list[tuple] = dataclasses.field(default_factory=list)
    lines: list[tuple] = dataclasses.field(default_factory=list)
    replaced: list[tuple] = dataclasses.field(default_factory=list)
    intruders: list[tuple[dict, str]] = dataclasses.field(default_factory=list)
    kept_ids: dict[str, str] = dataclasses.field(default_factory=dict)
    stored: list[Statement] = dataclasses.field(default_factory=list)
    written: int = 0
    superseded: int = 0
    adjusted: int = 0
    unchanged: int = 0
    on_hold: int = 0


def _plan_chunk(conn, part: list[Statement], run: _Run, *, now: dt.datetime, by: str | None,
                lines_altered: frozenset[str], lost: dict[str, str] | None) -> None:
    """Add to ``run`` the new versions of ``part`` (``CHUNK`` statements at most; PostgreSQL: any
    number): a statement as
    stored and intact is counted unchanged; the others, once the paid versions of their shifts are
    proved (``_prove_paid``), are planned by ``_plan_statement``."""
    history = _history(conn, [s.shift_id for s in part])
    todo = []  # first as stored: an intact current statement needs no proof
    for st in part:
        if lost and st.shift_id in lost:  # on hold: a payment record was lost
            st = with_hold(st, lost[st.shift_id])
        past = history.get(st.shift_id)
        digest, *cents = digest_and_cents(st)
        if past and _unchanged(past, st, digest, lines_altered):
            run.unchanged += 1
        else:
            todo.append((st, digest, cents))
    if not history:  # no shift has a stored version (a first close): every one a first version
        _add_first_versions(todo, run, now=now, by=by)
        return
    _prove_paid(conn, [r for st, _d, _c in todo for r in history.get(st.shift_id, ())])
    for st, digest, cents in todo:
        past = history.get(st.shift_id)
        if past is None:  # the shift's first version (a first close): nothing paid, nothing replaced
            _add_version(st, digest, None, [], None, False, run, now=now, by=by, cents=cents)
        else:
            _plan_statement(st, digest, past, run, now=now, by=by, lines_altered=lines_altered, cents=cents)


def _plan_statement(st: Statement, digest: str, past: list[dict] | None, run: _Run, *, now: dt.datetime,
                    by: str | None, lines_altered: frozenset[str], cents: list | None = None) -> None:
    """Plan one statement against its shift's versions ``past``: on hold when nothing proves what
    was paid; kept when the current version says the same and is stored intact; else a new
    version (with the adjustment for what was paid) replacing the current one. ``cents``:
    ``[total cents, [line cents]]`` of ``st`` (``digest_and_cents``), if known."""
    paid_rows = [r for r in past if r["paid_at"] is not None] if past else []
    unproven = [r for r in paid_rows if r["proven_cents"] is None]
    if unproven:  # on hold: nothing proves what was paid
        st = with_hold(st, _unproven_reason(unproven))
        digest = statement_digest(st)
    current = None
    altered = False
    if past:
        current, extra = pick_current(past, digest)
        if extra:  # more than one current statement: only ``current`` stays
            run.intruders.extend((r, st.shift_id) for r in extra)
            run.superseded += len(extra)
        if current is not None and current["digest"] == digest:
            if (_as_stored(current, st, past)
                    and current["statement_id"] not in lines_altered):
                run.kept_ids[st.shift_id] = current["statement_id"]
                run.unchanged += 1
                return
            altered = True  # its row or its lines no longer say what its digest does
            current["row_intact"] = _as_stored(current, st, past)
    _add_version(st, digest, past, paid_rows, current, altered, run, now=now, by=by, cents=cents)


def _add_version(st: Statement, digest: str, past: list[dict] | None, paid_rows: list[dict],
                 current: dict | None, altered: bool, run: _Run, *, now: dt.datetime, by: str | None,
                 cents: list | None = None) -> None:
    """Add to ``run`` the next version of ``st``'s shift (with the adjustment for ``paid_rows``),
    its row and lines, replacing ``current`` (None: the shift's first version); ``cents``: as for
    ``_plan_statement`` (the amounts of ``st``, used when no adjustment changes them)."""
    paid_cents = sum(r["paid_cents"] for r in paid_rows) if paid_rows else 0
    out = with_adjustment(st, paid_cents) if paid_cents else st
    if paid_cents or cents is None:
        total_cents, line_cents = _cents(out.total), [_cents(ln.amount) for ln in out.lines]
    else:
        total_cents, line_cents = cents
    version = max(r["version"] for r in past) + 1 if past else 1
    sid = statement_id(st, version)
    run.kept_ids[st.shift_id] = sid
    if current is not None:
        run.replaced.append((current, st, sid, altered))
        run.superseded += 1
    if paid_cents:
        run.adjusted += 1
    kept = _kept_release(st, current)
    if st.hold_reason and kept["hold_released_at"] is None:
        run.on_hold += 1
    run.rows.append((sid, st.shift_id, st.registration, st.rulebook, st.work_day,
                     total_cents, ",".join(out.flags), st.service_end, st.due_at,
                     now, st.hold_reason, kept["hold_released_at"], kept["hold_note"],
                     version, digest, by))
    run.lines.extend([(sid, n, ln.rule, ln.article, ln.description, c)
                      for n, (ln, c) in enumerate(zip(out.lines, line_cents))])
    run.stored.append(out)
    run.written += 1


def _add_first_versions(todo: list[tuple], run: _Run, *, now: dt.datetime, by: str | None) -> None:
    """``_add_version(st, digest, None, [], None, False, run, now=now, by=by, cents=cents)`` for
    each ``(st, digest, cents)`` of ``todo``, in order, in one loop: the shifts' first versions
    (nothing paid, nothing replaced, no release to keep), the same rows, lines and counts."""
    rows, lines, stored, kept_ids = run.rows, run.lines, run.stored, run.kept_ids
    for st, digest, (total_cents, line_cents) in todo:
        shift_id = st.shift_id
        sid = f"{shift_id}@{st.rulebook}"  # ``statement_id(st, 1)``
        kept_ids[shift_id] = sid
        if st.hold_reason:
            run.on_hold += 1
        rows.append((sid, shift_id, st.registration, st.rulebook, st.work_day, total_cents,
                     ",".join(st.flags), st.service_end, st.due_at, now, st.hold_reason, None, None,
                     1, digest, by))
        lines.extend([(sid, n, ln.rule, ln.article, ln.description, c)
                      for n, (ln, c) in enumerate(zip(st.lines, line_cents))])
        stored.append(st)
    run.written += len(todo)


def _supersede_replaced(conn, replaced: list[tuple], reason: str | None, now: dt.datetime) -> int:
    """Mark each replaced current statement superseded by its new version, with the reason (the
    operator's ``reason`` first; an edited row or edited lines said so); returns the rows updated."""
    updated = 0
    # an edited row's lines, to tell an altered total; of the others only the adjustment
    own = _lines(conn, [cur["statement_id"] for cur, _st, _sid, alt in replaced if alt])
    adj = _adjustments(conn, [cur["statement_id"] for cur, _st, _sid, alt in replaced if not alt])
    for cur, st, sid, altered in replaced:
        cur_lines = own.get(cur["statement_id"], [])
        if altered:
            adj[cur["statement_id"]] = (cur_lines[-1][3] if cur_lines
                                        and cur_lines[-1][0] == ADJUSTMENT_RULE else 0)
        cur["computed_cents"] = cur["total_cents"] - adj.get(cur["statement_id"], 0)
        lines_only = altered and cur["row_intact"]  # the row as stored: its lines were edited
        total_altered = (altered and not lines_only
                         and proven_total(cur, cur_lines) != cur["total_cents"])
        why = _reason(cur, st, reason, total_altered)
        if lines_only:
            why = f"stored lines altered outside the ledger; {why}"
        elif altered:
            why = f"stored row altered outside the ledger (total, flags or hold reason); {why}"
        updated += conn.execute(update(statements)
                                .where(statements.c.statement_id == cur["statement_id"])
                                .values(superseded_at=now, superseded_by=sid,
                                        superseded_reason=why)).rowcount
    return updated


_HISTORY = ("statement_id", "shift_id", "rulebook", "version", "digest", "total_cents", "paid_at",
            "paid_ref", "superseded_at", "hold_reason", "hold_released_at", "hold_note", "flags")


def _unchanged(past: list[dict], st: Statement, digest: str, lines_altered: frozenset[str]) -> bool:
    """Whether the current version of ``past`` is ``st`` (``digest``) as stored (digest and row),
    and the only current one."""
    currents = [r for r in past if r["superseded_at"] is None]
    current = currents[0] if len(currents) == 1 else None
    return (current is not None and current["digest"] == digest
            and _as_stored(current, st, past) and current["statement_id"] not in lines_altered)


def _as_stored(current: dict, st: Statement, past: list[dict]) -> bool:
    """Whether the current version's row holds the total, flags and hold reason that storing ``st``
    over the earlier versions would write (an adjustment for what those were paid included)."""
    paid = sum(r["paid_cents"] for r in past if r is not current and r["paid_at"] is not None)
    flags = ",".join((*st.flags, ADJUSTMENT_FLAG) if paid else st.flags)
    return (current["total_cents"] == _cents(st.total) - paid and current["flags"] == flags
            and current["hold_reason"] == st.hold_reason)


def _history(conn, shift_ids: list[str]) -> dict[str, list[dict]]:
    """Every stored version of these shifts (``paid_cents``: the stored total until
    ``_prove_paid`` sets what was proven paid; ``computed_cents``, the total before adjustment, is
    added for the versions being superseded)."""
    out: dict[str, list[dict]] = {}
    for r in _by_ids(conn, _HISTORY_QUERY, shift_ids):
        row = dict(zip(_HISTORY, r))
        row["paid_cents"] = row["total_cents"]
        row["proven_cents"] = row["total_cents"]
        out.setdefault(row["shift_id"], []).append(row)
    return out


def _prove_paid(conn, versions: list[dict]) -> None:
    """Sets on each paid one of ``versions`` ``proven_cents`` (``proven_total``: ``None`` if nothing
    proves it) and ``paid_cents`` (what the adjustment takes off: the proven total, else the stored
    one)."""
    paid = [r for r in versions if r["paid_at"] is not None]
    if not paid:
        return
    own = _lines(conn, [r["statement_id"] for r in paid])
    for r in paid:
        r["proven_cents"] = proven_total(r, own.get(r["statement_id"], []))
        r["paid_cents"] = r["total_cents"] if r["proven_cents"] is None else r["proven_cents"]


def _adjustments(conn, statement_ids: list[str]) -> dict[str, int]:
    """Adjustment line cents per statement id."""
    found: dict[str, int] = {}
    for chunk in range(0, len(statement_ids), CHUNK):
        found.update(_by_ids(conn, _ADJUSTMENTS_QUERY, statement_ids[chunk:chunk + CHUNK]).all())
    return found


def _lines(conn, statement_ids: list[str]) -> dict[str, list[tuple]]:
    """``{statement_id: [(rule, article, description, amount_cents)]}`` in position order."""
    found: dict[str, list[tuple]] = {}
    for chunk in range(0, len(statement_ids), CHUNK):
        for sid, *line in _by_ids(conn, _LINES_QUERY, statement_ids[chunk:chunk + CHUNK]):
            found.setdefault(sid, []).append(tuple(line))
    return found


# One compiled statement each: the id list bound as one expanding parameter, and on PostgreSQL as
# one text parameter split by the server (``IN (SELECT unnest(string_to_array(:ids, :sep)))``:
# the statement text stays the same whatever the number of ids, where an expanding IN of 2,000
# ids is rendered and parsed again on each call; and one string costs the client nothing to
# send, where psycopg dumps an array of 25,000 ids element by element in Python), or as one array
# parameter when an id is empty or holds the separator.
_SEP = "\x1f"  # the unit separator


def _id_queries(column, *columns, where=None, order_by=()):
    """``(expanding IN query, PostgreSQL array query, PostgreSQL joined-text query)`` selecting
    ``columns`` where ``column`` is one of ``:ids`` (and ``where``)."""
    out = []
    split = func.string_to_array(bindparam("ids", type_=String), bindparam("sep", type_=String))
    for test in (column.in_(bindparam("ids", expanding=True)),
                 column.in_(select(func.unnest(bindparam("ids", type_=ARRAY(String))))),
                 column.in_(select(func.unnest(split)))):
        query = select(*columns).where(test)
        if where is not None:
            query = query.where(where)
        out.append(query.order_by(*order_by))
    return tuple(out)


def _by_ids(conn, queries: tuple, ids: list[str]):
    """The result of ``queries`` (``_id_queries``) for ``ids``, in the connection's dialect."""
    expanding, pg_array, pg_text = queries
    if conn.dialect.name != "postgresql":
        return conn.execute(expanding, {"ids": list(ids)})
    joined = _SEP.join(ids)
    if ids and "" not in ids and joined.count(_SEP) == len(ids) - 1:
        return conn.execute(pg_text, {"ids": joined, "sep": _SEP})
    return conn.execute(pg_array, {"ids": list(ids)})


_HISTORY_QUERY = _id_queries(statements.c.shift_id, *(statements.c[n] for n in _HISTORY))
_ADJUSTMENTS_QUERY = _id_queries(statement_lines.c.statement_id, statement_lines.c.statement_id,
                                 statement_lines.c.amount_cents,
                                 where=statement_lines.c.rule == ADJUSTMENT_RULE)
_LINES_QUERY = _id_queries(statement_lines.c.statement_id, statement_lines.c.statement_id,
                           statement_lines.c.rule, statement_lines.c.article,
                           statement_lines.c.description, statement_lines.c.amount_cents,
                           order_by=(statement_lines.c.statement_id, statement_lines.c.position))


_NO_RELEASE = types.MappingProxyType({"hold_released_at": None, "hold_note": None})


def _kept_release(st: Statement, old: dict | None) -> Mapping:
    """The release of the statement this one supersedes, kept if it released the same hold
    (read-only)."""
    if old is None:  # the shift's first version (every statement of a first close)
        return _NO_RELEASE
    if (old is not None and old["paid_at"] is None and st.hold_reason is not None
            and old["hold_released_at"] is not None and old["hold_reason"] == st.hold_reason):
        return {"hold_released_at": old["hold_released_at"], "hold_note": old["hold_note"]}
    return _NO_RELEASE
