"""Versioned pay statements: storing a pay run supersedes, never overwrites (issue 20).

Each shift has at most one *current* statement (``superseded_at IS NULL``); only the current one is
payable (``central.pay.statements_store.mark_paid``) and listed as overdue. Storing a newly computed statement
of a shift:

- no statement yet: it is stored as version 1, id ``<shift_id>@<rulebook>``;
- the current statement has the same ``digest`` (SHA-256 of rulebook, lines, total, flags and hold
  reason): nothing changes (re-running pay is idempotent);
- otherwise the new one is stored as version n+1, id ``<shift_id>@<rulebook>#v<n+1>``, and the
  current one is kept, marked ``superseded_at`` / ``superseded_by`` / ``superseded_reason`` (the
  reason says what changed and is prefixed with the operator's own reason, if given);
- when earlier versions were already paid, the new statement carries an adjustment line
  (``rule "ADJ"``, minus what was paid) so its total is the difference still owed (negative: paid
  in excess) and the flag ``ADJUSTMENT``: a paid statement is never superseded silently (Lei 9.719
  art. 2 §1: the pay is due in full; what was paid stays on record).

A hold release (RULES.md P, G9) is carried over to the new version when it released the same hold.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from decimal import Decimal

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from central.ledger.tables import statement_lines, statements
from central.pay.lines import StatementLine, money_str
from central.pay.watchmen import Statement
from portgate.errors import StoreError

ADJUSTMENT_RULE = "ADJ"
ADJUSTMENT_ARTICLE = "Lei 9.719 art. 2 §1"
ADJUSTMENT_FLAG = "ADJUSTMENT"


@dataclasses.dataclass(frozen=True, slots=True)
class SaveResult:
    """What storing a pay run did: new versions written, earlier ones superseded (of which already
    paid: an adjustment line), and shifts whose current statement was unchanged."""

    written: int = 0
    superseded: int = 0
    adjusted: int = 0
    unchanged: int = 0
    stored: tuple[Statement, ...] = ()  # the statements as stored (adjustment lines included)


def statement_id(st: Statement, version: int = 1) -> str:
    """``<shift_id>@<rulebook>`` for version 1, ``...#v<n>`` for later versions."""
    base = f"{st.shift_id}@{st.rulebook}"
    return base if version == 1 else f"{base}#v{version}"


def _cents(amount: Decimal) -> int:
    return int(amount * 100)


def statement_digest(st: Statement) -> str:
    """SHA-256 (hex) of the computed content of a statement: rulebook, lines (rule, article,
    description, cents), total cents, flags and hold reason, as compact sorted-key JSON (UTF-8)."""
    body = {"rulebook": st.rulebook, "total_cents": _cents(st.total), "flags": list(st.flags),
            "hold_reason": st.hold_reason,
            "lines": [[ln.rule, ln.article, ln.description, _cents(ln.amount)] for ln in st.lines]}
    raw = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def with_adjustment(st: Statement, paid_cents: int) -> Statement:
    """``st`` with an ``ADJ`` line of minus ``paid_cents`` (what earlier versions were paid)."""
    paid = Decimal(paid_cents) / 100
    line = StatementLine(ADJUSTMENT_RULE, ADJUSTMENT_ARTICLE,
                         f"já pago em versão anterior / already paid: {money_str(paid)}", -paid)
    return dataclasses.replace(st, lines=(*st.lines, line), total=st.total - paid,
                               flags=(*st.flags, ADJUSTMENT_FLAG))


def _reason(old: dict, new: Statement, given: str | None) -> str:
    parts = []
    if old["rulebook"] != new.rulebook:
        parts.append(f"rulebook {old['rulebook']} -> {new.rulebook}")
    parts.append(f"computed total {money_str(Decimal(old['computed_cents']) / 100)} -> "
                 f"{money_str(new.total)}")
    if old["paid_at"] is not None:
        parts.append(f"already paid ({old['paid_ref'] or 'no ref'}): adjustment line")
    text = "; ".join(parts)
    return f"{given.strip()}: {text}" if given and given.strip() else text


def save_statements(engine: Engine, found: list[Statement], *, now: dt.datetime,
                    by: str | None = None, reason: str | None = None) -> SaveResult:
    """Store a pay run's statements as new versions where they differ from the current ones.
    ``by``: who ran the pay (stored as ``computed_by``); ``reason``: the operator's reason, prefixed
    to the automatic one on each superseded statement. Raises ``StoreError`` on a database failure
    (nothing is stored then)."""
    if not found:
        return SaveResult()
    written = superseded = adjusted = unchanged = 0
    stored: list[Statement] = []
    try:
        with engine.begin() as conn:
            for chunk in range(0, len(found), 500):
                part = found[chunk:chunk + 500]
                history = _history(conn, [s.shift_id for s in part])
                rows, lines = [], []
                for st in part:
                    past = history.get(st.shift_id, [])
                    digest = statement_digest(st)
                    current = next((r for r in past if r["superseded_at"] is None), None)
                    if current is not None and current["digest"] == digest:
                        unchanged += 1
                        continue
                    paid_cents = sum(r["paid_cents"] for r in past if r["paid_at"] is not None)
                    out = with_adjustment(st, paid_cents) if paid_cents else st
                    version = max((r["version"] for r in past), default=0) + 1
                    sid = statement_id(st, version)
                    if current is not None:
                        conn.execute(update(statements)
                                     .where(statements.c.statement_id == current["statement_id"])
                                     .values(superseded_at=now, superseded_by=sid,
                                             superseded_reason=_reason(current, st, reason)))
                        superseded += 1
                    if paid_cents:
                        adjusted += 1
                    rows.append({
                        "statement_id": sid, "shift_id": st.shift_id,
                        "registration": st.registration, "rulebook": st.rulebook,
                        "work_day": st.work_day, "total_cents": _cents(out.total),
                        "flags": ",".join(out.flags), "service_end": st.service_end,
                        "due_at": st.due_at, "computed_at": now, "hold_reason": st.hold_reason,
                        **_kept_release(st, current), "version": version, "digest": digest,
                        "computed_by": by})
                    lines.extend({"statement_id": sid, "position": n, "rule": ln.rule,
                                  "article": ln.article, "description": ln.description,
                                  "amount_cents": _cents(ln.amount)} for n, ln in enumerate(out.lines))
                    stored.append(out)
                    written += 1
                if rows:
                    conn.execute(insert(statements), rows)
                    conn.execute(insert(statement_lines), lines)
    except SQLAlchemyError as exc:
        raise StoreError(f"saving statements failed: {exc}") from exc
    return SaveResult(written, superseded, adjusted, unchanged, tuple(stored))


def _history(conn, shift_ids: list[str]) -> dict[str, list[dict]]:
    """Every stored version of these shifts, with the computed total (before adjustment)."""
    out: dict[str, list[dict]] = {}
    adj = _adjustments(conn, shift_ids)
    for r in conn.execute(select(
            statements.c.statement_id, statements.c.shift_id, statements.c.rulebook,
            statements.c.version, statements.c.digest, statements.c.total_cents,
            statements.c.paid_at, statements.c.paid_ref, statements.c.superseded_at,
            statements.c.hold_reason, statements.c.hold_released_at, statements.c.hold_note)
            .where(statements.c.shift_id.in_(shift_ids))).mappings():
        row = dict(r)
        row["paid_cents"] = row["total_cents"]
        row["computed_cents"] = row["total_cents"] - adj.get(row["statement_id"], 0)
        out.setdefault(row["shift_id"], []).append(row)
    return out


def _adjustments(conn, shift_ids: list[str]) -> dict[str, int]:
    """Adjustment line cents per statement id of these shifts."""
    found = conn.execute(
        select(statement_lines.c.statement_id, statement_lines.c.amount_cents)
        .join(statements, statements.c.statement_id == statement_lines.c.statement_id)
        .where(statements.c.shift_id.in_(shift_ids),
               statement_lines.c.rule == ADJUSTMENT_RULE)).all()
    return {sid: cents for sid, cents in found}


def _kept_release(st: Statement, old: dict | None) -> dict:
    """The release of the statement this one supersedes, kept if it released the same hold."""
    if (old is not None and old["paid_at"] is None and st.hold_reason is not None
            and old["hold_released_at"] is not None and old["hold_reason"] == st.hold_reason):
        return {"hold_released_at": old["hold_released_at"], "hold_note": old["hold_note"]}
    return {"hold_released_at": None, "hold_note": None}
