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

This module holds the statement's identity, digest, adjustment and hold; storing a run
(``save_statements``) is ``central.pay.versions_save``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from decimal import Decimal

import msgspec

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
    return digest_and_cents(st)[0]


def digest_and_cents(st: Statement) -> tuple[str, int, list[int]]:
    """``(statement_digest(st), total in cents, each line's amount in cents)``: the digest with
    the cents it hashed, so that storing the statement need not convert them again."""
    line_cents = [int(ln.amount * 100) for ln in st.lines]  # ``_cents``, without a call each
    total = int(st.total * 100)
    body = {"flags": st.flags, "hold_reason": st.hold_reason,  # the keys in sorted order
            "lines": [(ln.rule, ln.article, ln.description, c) for ln, c in zip(st.lines, line_cents)],
            "rulebook": st.rulebook, "total_cents": total}
    return hashlib.sha256(_digest_encoder.encode(body)).hexdigest(), total, line_cents


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
