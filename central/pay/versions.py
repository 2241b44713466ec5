"""Versioned pay statements: storing a pay run supersedes, never overwrites.

Each shift has at most one *current* statement (``superseded_at IS NULL``); only the current one is
payable (``central.pay.statements_store.mark_paid``) and listed as overdue. Storing a newly computed statement
of a shift:

- no statement yet: it is stored as version 1, id ``<shift_id>@<rulebook>``;
- the current statement has the same ``digest`` (SHA-256 of rulebook, lines, total, flags and hold
  reason) and its row holds the total, flags and hold reason that digest stands for: nothing
  changes (re-running pay is idempotent); a row edited outside the ledger is superseded as below;
- otherwise the new one is stored as version n+1, id ``<shift_id>@<rulebook>#v<n+1>``, and the
  current one is kept, marked ``superseded_at`` / ``superseded_by`` / ``superseded_reason`` (the
  reason says what changed and is prefixed with the operator's own reason, if given);
- when earlier versions were already paid, the new statement carries an adjustment line
  (``rule "ADJ"``, minus what was paid) so its total is the difference still owed (negative: paid
  in excess) and the flag ``ADJUSTMENT``: a paid statement is never superseded silently (Lei 9.719
  art. 2 §1: the pay is due in full; what was paid stays on record). What a paid version was paid
  is the total its stored ``digest`` proves (``proven_total``): its row's total when its row and
  lines hash to the digest, else the sum of its lines when they do with that total (the row's total
  edited outside the ledger). When nothing proves it (lines or flags edited too), the adjustment
  uses the stored total and the new statement is put on hold for review (``UNPROVEN_HOLD``): it
  cannot be marked paid until the office releases it.

A hold release (RULES.md P, G9) is carried over to the new version when it released the same hold.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import gc
from decimal import Decimal

import msgspec
from sqlalchemy import String, bindparam, func, select, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from central.db import store_failure
from central.ledger.bulk import bind_tuples, insert_tuples
from central.ledger.tables import statement_lines, statements
from central.pay.duplicates import pick_current, supersede_duplicates
from central.pay.lines import StatementLine, money_str
from central.pay.watchmen import Statement

ADJUSTMENT_RULE = "ADJ"
ADJUSTMENT_ARTICLE = "Lei 9.719 art. 2 §1"
ADJUSTMENT_FLAG = "ADJUSTMENT"
#: What a pay run's failed write says when another run stored the same statements meanwhile.
PAY_CONFLICT = "another pay run changed these statements meanwhile; run again"
#: Hold reason of a statement superseding a paid version whose paid amount nothing proves.
UNPROVEN_HOLD = "PAID_UNPROVEN"


@dataclasses.dataclass(frozen=True, slots=True)
class SaveResult:
    """What storing a pay run did: new versions written (of which ``on_hold`` stored on hold for
    review), earlier ones superseded (of which already paid: an adjustment line), and shifts whose
    current statement was unchanged."""

    written: int = 0
    superseded: int = 0
    adjusted: int = 0
    unchanged: int = 0
    stored: tuple[Statement, ...] = ()  # the statements as stored (adjustment lines included)
    on_hold: int = 0  # of the written, stored on hold for review (no release carried over)
    lost: tuple[str, ...] = ()  # shifts held for a payment the statements no longer show
    #: What was written, as the driver received it: the new statement rows (``STATEMENT_COLUMNS``),
    #: the ids of the versions superseded, the rows those UPDATEs changed and the lines inserted.
    rows: tuple[tuple, ...] = dataclasses.field(default=(), compare=False, repr=False)
    superseded_ids: frozenset[str] = dataclasses.field(default=frozenset(), compare=False, repr=False)
    updated: int = dataclasses.field(default=0, compare=False)
    lines_written: int = dataclasses.field(default=0, compare=False)


def statement_id(st: Statement, version: int = 1) -> str:
    """``<shift_id>@<rulebook>`` for version 1, ``...#v<n>`` for later versions."""
    base = f"{st.shift_id}@{st.rulebook}"
    return base if version == 1 else f"{base}#v{version}"


def _cents(amount: Decimal) -> int:
    return int(amount * 100)


def statement_digest(st: Statement) -> str:
    """SHA-256 (hex) of the computed content of a statement: rulebook, lines (rule, article,
    description, cents), total cents, flags and hold reason, as compact sorted-key JSON (UTF-8,
    non-ASCII unescaped: the bytes of ``json.dumps(body, sort_keys=True, separators=(",", ":"),
    ensure_ascii=False)``)."""
    body = {"rulebook": st.rulebook, "total_cents": _cents(st.total), "flags": st.flags,
            "hold_reason": st.hold_reason,
            "lines": [(ln.rule, ln.article, ln.description, _cents(ln.amount)) for ln in st.lines]}
    return hashlib.sha256(_digest_encoder.encode(body)).hexdigest()


_digest_encoder = msgspec.json.Encoder(order="sorted")


def stored_digest_matches(rulebook: str, total_cents: int, flags: str | None, hold_reason: str | None,
                          lines: list[tuple], digest: str) -> bool:
    """Whether a stored statement (row values; ``lines``: ``(rule, article, description,
    amount_cents)`` in position order) hashes to ``digest`` (``statement_digest``), an adjustment
    line and flag taken off first (the digest is of the statement before them)."""
    own = list(lines)
    flag_list = flags.split(",") if flags else []
    if flag_list and flag_list[-1] == ADJUSTMENT_FLAG and own and own[-1][0] == ADJUSTMENT_RULE:
        total_cents, flag_list, own = total_cents - own[-1][3], flag_list[:-1], own[:-1]
    body = {"rulebook": rulebook, "total_cents": total_cents, "flags": flag_list,
            "hold_reason": hold_reason, "lines": [tuple(ln) for ln in own]}
    return hashlib.sha256(_digest_encoder.encode(body)).hexdigest() == digest


def proven_total(row: dict, lines: list[tuple]) -> int | None:
    """The total (cents, adjustment included) that a stored statement's ``digest`` proves: the
    row's ``total_cents`` when row and lines hash to the digest; else the sum of the lines when
    they hash to it with that total (only the row's total was edited); else ``None`` (nothing
    proves it). A statement stored without a digest is taken as stored (nothing to check)."""
    if row["digest"] is None:
        return row["total_cents"]
    args = (row["rulebook"], row["flags"], row["hold_reason"], lines, row["digest"])
    if stored_digest_matches(row["rulebook"], row["total_cents"], *args[1:]):
        return row["total_cents"]
    lines_sum = sum(ln[3] for ln in lines)
    if lines_sum != row["total_cents"] and stored_digest_matches(row["rulebook"], lines_sum, *args[1:]):
        return lines_sum
    return None


def _unproven_reason(rows: list[dict]) -> str:
    names = ", ".join(f"{r['statement_id']} ({r['paid_ref'] or 'no ref'})" for r in rows)
    return (f"{UNPROVEN_HOLD}: paid version {names} was altered outside the ledger and its digest "
            "no longer proves what was paid; check the payment before paying this one "
            "(Lei 9.719 art. 2 §1) / valor pago não comprovado: conferir antes de pagar")


def with_hold(st: Statement, hold: str) -> Statement:
    """``st`` on hold for review with ``hold`` (after its own hold reason, if any)."""
    return msgspec.structs.replace(st, hold_reason=f"{st.hold_reason}; {hold}" if st.hold_reason else hold)


def with_adjustment(st: Statement, paid_cents: int) -> Statement:
    """``st`` with an ``ADJ`` line of minus ``paid_cents`` (what earlier versions were paid)."""
    paid = Decimal(paid_cents) / 100
    line = StatementLine(ADJUSTMENT_RULE, ADJUSTMENT_ARTICLE,
                         f"já pago em versão anterior / already paid: {money_str(paid)}", -paid)
    return msgspec.structs.replace(st, lines=(*st.lines, line), total=st.total - paid,
                               flags=(*st.flags, ADJUSTMENT_FLAG))


def _reason(old: dict, new: Statement, given: str | None, total_altered: bool = False) -> str:
    parts = []
    if old["rulebook"] != new.rulebook:
        parts.append(f"rulebook {old['rulebook']} -> {new.rulebook}")
    was = money_str(Decimal(old["computed_cents"]) / 100)
    if total_altered:  # the stored total is not the one its digest proves
        parts.append(f"stored total {was} (altered) -> computed {money_str(new.total)}")
    else:
        parts.append(f"computed total {was} -> {money_str(new.total)}")
    if old["paid_at"] is not None:
        parts.append(f"already paid ({old['paid_ref'] or 'no ref'}): adjustment line")
    text = "; ".join(parts)
    return f"{given.strip()}: {text}" if given and given.strip() else text


STATEMENT_COLUMNS = ("statement_id", "shift_id", "registration", "rulebook", "work_day",
                     "total_cents", "flags", "service_end", "due_at", "computed_at", "hold_reason",
                     "hold_released_at", "hold_note", "version", "digest", "computed_by")
LINE_COLUMNS = ("statement_id", "position", "rule", "article", "description", "amount_cents")
#: Shift ids per history query (one bound parameter each).
CHUNK = 2000


def save_statements(engine: Engine, found: list[Statement], *, now: dt.datetime,
                    by: str | None = None, reason: str | None = None,
                    lines_altered: frozenset[str] = frozenset(),
                    lost: dict[str, str] | None = None) -> SaveResult:
    """Store a pay run's statements as new versions where they differ from the current ones.
    ``by``: who ran the pay (stored as ``computed_by``); ``reason``: the operator's reason, prefixed
    to the automatic one on each superseded statement; ``lines_altered``: ids of current statements
    whose stored lines are known not to be what their digest stands for (superseded even when
    their digest and row match); ``lost``: ``{shift_id: hold reason}`` of shifts with a payment
    the statements no longer show (``central.pay.payments.lost_payments``): stored on hold. Raises ``StoreError`` on a database failure, ``StoreConflict``
    (exit 1: run again) when another run stored the same statements meanwhile (nothing is stored
    then: one transaction). The new statements and their lines go in as one bulk insert each
    (``central.ledger.bulk``: COPY on PostgreSQL) in the same transaction."""
    if not found:
        return SaveResult(lost=tuple(sorted(lost or ())))
    written = superseded = adjusted = unchanged = on_hold = updated = 0
    stored: list[Statement] = []
    enabled = gc.isenabled()
    gc.disable()  # ~10^5 long-lived rows built in a burst, none in a cycle
    try:
        with engine.begin() as conn:
            rows, lines, replaced = [], [], []
            intruders: list[tuple[dict, str]] = []  # (row, shift id): extra current statements
            kept_ids: dict[str, str] = {}  # shift id: the statement current after this run
            for chunk in range(0, len(found), CHUNK):
                part = found[chunk:chunk + CHUNK]
                history = _history(conn, [s.shift_id for s in part])
                todo = []  # first as stored: an intact current statement needs no proof
                for st in part:
                    if lost and st.shift_id in lost:  # on hold: a payment record was lost
                        st = with_hold(st, lost[st.shift_id])
                    past = history.get(st.shift_id)
                    digest = statement_digest(st)
                    if past and _unchanged(past, st, digest, lines_altered):
                        unchanged += 1
                    else:
                        todo.append((st, digest))
                _prove_paid(conn, [r for st, _d in todo for r in history.get(st.shift_id, ())])
                for st, digest in todo:
                    past = history.get(st.shift_id)
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
                            intruders.extend((r, st.shift_id) for r in extra)
                            superseded += len(extra)
                        if current is not None and current["digest"] == digest:
                            if (_as_stored(current, st, past)
                                    and current["statement_id"] not in lines_altered):
                                kept_ids[st.shift_id] = current["statement_id"]
                                unchanged += 1
                                continue
                            altered = True  # its row or its lines no longer say what its digest does
                            current["row_intact"] = _as_stored(current, st, past)
                    paid_cents = sum(r["paid_cents"] for r in paid_rows)
                    out = with_adjustment(st, paid_cents) if paid_cents else st
                    version = max(r["version"] for r in past) + 1 if past else 1
                    sid = statement_id(st, version)
                    kept_ids[st.shift_id] = sid
                    if current is not None:
                        replaced.append((current, st, sid, altered))
                        superseded += 1
                    if paid_cents:
                        adjusted += 1
                    kept = _kept_release(st, current)
                    if st.hold_reason and kept["hold_released_at"] is None:
                        on_hold += 1
                    rows.append((sid, st.shift_id, st.registration, st.rulebook, st.work_day,
                                 _cents(out.total), ",".join(out.flags), st.service_end, st.due_at,
                                 now, st.hold_reason, kept["hold_released_at"], kept["hold_note"],
                                 version, digest, by))
                    lines.extend((sid, n, ln.rule, ln.article, ln.description, _cents(ln.amount))
                                 for n, ln in enumerate(out.lines))
                    stored.append(out)
                    written += 1
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
            supersede_duplicates(conn, intruders, kept_ids, now)  # counted writes: the close reads back
            bound = bind_tuples(conn.dialect, statements, STATEMENT_COLUMNS, rows)
            insert_tuples(conn, statements, STATEMENT_COLUMNS, bound, bound=True)
            insert_tuples(conn, statement_lines, LINE_COLUMNS, lines)
    except SQLAlchemyError as exc:
        raise store_failure("saving statements failed", exc, PAY_CONFLICT) from exc
    finally:
        if enabled:
            gc.enable()
    return SaveResult(written, superseded, adjusted, unchanged, tuple(stored), on_hold,
                      tuple(sorted(lost or ())), tuple(bound),
                      frozenset(cur["statement_id"] for cur, _st, _sid, _alt in replaced), updated, len(lines))


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
# one array parameter (``IN (SELECT unnest(:ids))``: the statement text stays the same whatever
# the number of ids, where an expanding IN of 2,000 ids is rendered and parsed again on each call).
def _id_queries(column, *columns, where=None, order_by=()):
    """``(expanding IN query, PostgreSQL array query)`` selecting ``columns`` where ``column`` is
    one of ``:ids`` (and ``where``)."""
    out = []
    for test in (column.in_(bindparam("ids", expanding=True)),
                 column.in_(select(func.unnest(bindparam("ids", type_=ARRAY(String)))))):
        query = select(*columns).where(test)
        if where is not None:
            query = query.where(where)
        out.append(query.order_by(*order_by))
    return tuple(out)


def _by_ids(conn, queries: tuple, ids: list[str]):
    """The result of ``queries`` (``_id_queries``) for ``ids``, in the connection's dialect."""
    expanding, pg = queries
    return conn.execute(pg if conn.dialect.name == "postgresql" else expanding, {"ids": list(ids)})


_HISTORY_QUERY = _id_queries(statements.c.shift_id, *(statements.c[n] for n in _HISTORY))
_ADJUSTMENTS_QUERY = _id_queries(statement_lines.c.statement_id, statement_lines.c.statement_id,
                                 statement_lines.c.amount_cents,
                                 where=statement_lines.c.rule == ADJUSTMENT_RULE)
_LINES_QUERY = _id_queries(statement_lines.c.statement_id, statement_lines.c.statement_id,
                           statement_lines.c.rule, statement_lines.c.article,
                           statement_lines.c.description, statement_lines.c.amount_cents,
                           order_by=(statement_lines.c.statement_id, statement_lines.c.position))


def _kept_release(st: Statement, old: dict | None) -> dict:
    """The release of the statement this one supersedes, kept if it released the same hold."""
    if (old is not None and old["paid_at"] is None and st.hold_reason is not None
            and old["hold_released_at"] is not None and old["hold_reason"] == st.hold_reason):
        return {"hold_released_at": old["hold_released_at"], "hold_note": old["hold_note"]}
    return {"hold_released_at": None, "hold_note": None}
