"""Shifts and pay recomputed from a bundle's gate-signed events (``portgate evidence verify``;
docs/evidence.md "What verify recomputes").

The office signs ``shifts.json`` and ``statements.json`` with its own key, so their content proves
only what the office says. ``recheck`` rebuilds every shift of the bundle's worker and work days
from the events whose own signature and chain links held (``central.ledger.shifts.reconstruct``,
the ledger's pure reconstruction), applies the office's meal corrections carried in
``corrections.json`` (``central.ledger.corrections.corrected``) and keeps the office's CHAIN_BREAK
review flags of ``shifts.json`` (they only put a statement on hold); then pays each shift with the
rulebook its current statement names, read from ``rulebooks/pay/<id>.toml`` (hash-pinned by the
manifest, its SHA-256 printed) and the holiday calendar of ``calendar.json``
(``central.pay.statements_store.pay_shifts``, the ledger's pay run). Any difference from
``shifts.json`` or from a current statement's lines is a failure naming the shift and the line.
Superseded statements are history (computed from what the ledger held then): counted, not recomputed.
An ``ADJ`` line (a paid earlier version answered, Lei 9.719 art. 2 §1) is the office's and named.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import tomllib
from decimal import Decimal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from central.ledger.corrections import corrected
from central.ledger.shifts import Flag, Shift, reconstruct
from central.pay.calendar import HolidayCalendar
from central.pay.loading import parse_rulebook
from central.pay.statements_store import pay_shifts
from central.pay.versions import ADJUSTMENT_FLAG, ADJUSTMENT_RULE
from portgate.clitext import refusal, tr
from portgate.l10n import money
from portgate.errors import PortgateError
from wire.events import MealWorkedPayload, TapPayload
from wire.flags import ShiftFlag

#: The shift fields compared (``shifts.json`` key -> how the recomputed ``Shift`` gives it).
_FIELDS = ("ship", "work_date", "period", "function", "berth", "gate_id", "period_start", "period_end",
           "admit_at", "exit_at", "closed_by", "admit_event_id", "exit_event_id", "meal_worked", "flags")


def _iso(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    return value.isoformat()


def shift_row(s: Shift) -> dict:
    """The compared fields of a shift as ``shifts.json`` writes them."""
    return {"ship": s.ship, "work_date": _iso(s.work_date), "period": s.period, "function": s.function,
            "berth": s.berth, "gate_id": s.gate_id, "period_start": _iso(s.period_start),
            "period_end": _iso(s.period_end), "admit_at": _iso(s.admit_at), "exit_at": _iso(s.exit_at),
            "closed_by": s.closed_by, "admit_event_id": s.admit_event_id, "exit_event_id": s.exit_event_id,
            "meal_worked": s.meal_worked, "flags": [f"{f.code}: {f.detail}" for f in s.flags]}


def load_calendar(raw: bytes) -> HolidayCalendar:
    """``calendar.json`` as a ``HolidayCalendar``. Raises ``ValueError`` naming what is wrong."""
    try:
        data = json.loads(raw)
        zone = ZoneInfo(data["timezone"])
        first, last = (int(y) for y in data["years"])
        days = {dt.date.fromisoformat(d): str(n) for d, n in data["holidays"].items()}
    except (ValueError, KeyError, TypeError, AttributeError, ZoneInfoNotFoundError) as exc:
        raise ValueError(f"not a holiday calendar ({exc})") from exc
    return HolidayCalendar(zone, days, range(first, last + 1))


def shift_inputs(events: list) -> list:
    """The events the ledger rebuilds shifts from (``central.ledger.store.load_shift_taps``): the
    admit/exit taps and meal-worked records, and, for each (gate, boot) with an untrusted clock
    among them, every trusted event of that boot (the clock anchors). The same selection matters:
    a CLOCK_BACKWARDS is judged among the events given."""
    taps = [e for e in events if (isinstance(e.payload, TapPayload) and e.payload.decision in ("admit", "exit"))
            or isinstance(e.payload, MealWorkedPayload)]
    boots = {(e.gate_id, e.boot_id) for e in taps if not e.clock_trusted}
    seen = {e.event_id for e in taps}
    return taps + [e for e in events if (e.gate_id, e.boot_id) in boots and e.clock_trusted and e.event_id not in seen]


def recheck(files: dict[str, bytes], registration: str | None, date_from: str | None, date_to: str | None,
            verified: dict, fail: list[str], notes: list[str]) -> None:
    """Append to ``fail`` every difference between the bundle's ``shifts.json`` / current
    statements and what the gate-signed ``verified`` events (event id -> ``Event``) give; to
    ``notes`` what was recomputed, the rulebooks' SHA-256 and the office's own records (meal
    corrections, adjustment lines). Never raises for bad content: each problem is a failure."""
    try:
        day_from, day_to = dt.date.fromisoformat(date_from), dt.date.fromisoformat(date_to)
        if not registration:
            raise ValueError("no registration")
    except (TypeError, ValueError):
        fail.append("manifest.json: " + tr("cli.evidence.fail.no_period"))
        return
    try:
        calendar = load_calendar(files["calendar.json"])
    except KeyError:
        fail.append("calendar.json: " + tr("cli.evidence.fail.no_calendar"))
        return
    except ValueError as exc:
        fail.append(f"calendar.json: {exc}")
        return
    try:
        bundled = {r["shift_id"]: r for r in json.loads(files.get("shifts.json", b"[]"))}
        statements = json.loads(files.get("statements.json", b"[]"))
        meals = json.loads(files.get("corrections.json", b"[]"))
        latest = {m["shift_id"]: (bool(m["value"]), str(m["actor"]), str(m["recorded_at"]))
                  for m in meals if m.get("field") == "meal_worked"}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        fail.append("shifts.json/statements.json/corrections.json: " + tr("cli.evidence.fail.not_readable", why=exc))
        return
    zone = calendar.zone
    rebuilt = [s for s in reconstruct(shift_inputs(list(verified.values())), zone)
               if s.registration == registration and day_from <= s.work_date <= day_to]
    rebuilt = corrected(rebuilt, latest)
    for m in meals:
        fields = {"shift": m.get("shift_id"), "actor": m.get("actor"), "at": m.get("recorded_at")}
        notes.append(tr("cli.evidence.note.meal_worked", **fields) if m.get("value")
                     else tr("cli.evidence.note.meal_not_worked", **fields))
    mine = {s.shift_id: _with_office_breaks(s, bundled.get(s.shift_id, {})) for s in rebuilt}
    _compare_shifts(bundled, mine, fail)
    _recheck_pay(files, statements, mine, calendar, fail, notes)
    notes.append(tr("cli.evidence.note.recomputed", n=len(mine), registration=registration, first=day_from,
                    last=day_to, zone=calendar.timezone))


def _with_office_breaks(shift: Shift, row: dict) -> Shift:
    """The rebuilt shift with the CHAIN_BREAK flags the office put on its bundled row (a break the
    office recorded on ingest is the office's record: the rebuilt shift carries it too)."""
    office = [f for f in row.get("flags", []) if str(f).startswith(ShiftFlag.CHAIN_BREAK)]
    extra = tuple(Flag(ShiftFlag.CHAIN_BREAK, str(f).split(": ", 1)[1] if ": " in str(f) else "") for f in office)
    return dataclasses.replace(shift, flags=shift.flags + extra) if extra else shift


def _compare_shifts(bundled: dict[str, dict], mine: dict[str, Shift], fail: list[str]) -> None:
    """A failure for each bundled shift the signed events do not give, each rebuilt shift missing
    from the bundle, and each field that differs."""
    for sid in sorted(set(bundled) - set(mine)):
        fail.append(f"shifts.json {sid}: " + tr("cli.evidence.fail.shift_not_signed"))
    for sid in sorted(set(mine) - set(bundled)):
        fail.append("shifts.json: " + tr("cli.evidence.fail.shift_missing", shift=sid))
    for sid in sorted(set(mine) & set(bundled)):
        want, have = shift_row(mine[sid]), bundled[sid]
        for key in _FIELDS:
            if key in ("meal_worked",) and key not in have:
                continue
            if have.get(key) != want[key]:
                fail.append(f"shifts.json {sid}: " + _differs(key, have.get(key), want[key]))


def _recheck_pay(files, statements, mine: dict[str, Shift], calendar, fail, notes) -> None:
    current: dict[str, dict] = {}
    for st in statements:
        if st.get("superseded_at") is None and st.get("shift_id") in mine:
            current.setdefault(st["shift_id"], st)
        elif st.get("superseded_at") is None:
            fail.append(f"statements.json {st.get('statement_id')}: " + tr("cli.evidence.fail.statement_shift",
                                                                              shift=st.get("shift_id")))
    books: dict[str, object] = {}
    for sid, shift in sorted(mine.items()):
        st = current.get(sid)
        if st is None:
            notes.append(tr("cli.evidence.note.no_statement", shift=sid))
            continue
        rb = st.get("rulebook")
        if rb not in books:
            books[rb] = _rulebook(files, rb, fail, notes)
        book = books[rb]
        if book is None:
            continue
        try:
            run = pay_shifts([shift], book, calendar)
        except PortgateError as exc:  # e.g. the calendar does not cover the work day's year
            fail.append(f"statements.json {st.get('statement_id')}: " + tr("cli.evidence.fail.not_with_rulebook",
                                                                              rulebook=rb, why=exc))
            continue
        if run.held:
            fail.append(f"statements.json {st.get('statement_id')}: " + tr(
                "cli.evidence.fail.not_payable", why="; ".join(run.held[0].reasons)[:300],
                total=_brl(st.get("total_cents"))))
            continue
        _compare(st, run.statements[0], fail, notes)


def _rulebook(files, rb, fail, notes):
    name = f"rulebooks/pay/{rb}.toml"
    raw = files.get(name)
    if raw is None:
        fail.append(f"{name}: " + tr("cli.evidence.fail.rulebook_missing", rulebook=rb))
        return None
    try:
        book = parse_rulebook(tomllib.loads(raw.decode("utf-8")), path=name)
    except (PortgateError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        why = f"not valid TOML: {exc}" if isinstance(exc, tomllib.TOMLDecodeError) else str(exc)
        fail.append(f"{name}: " + tr("cli.evidence.fail.not_rulebook", why=refusal(why)[:200]))
        return None
    if book.id != rb:
        fail.append(f"{name}: " + tr("cli.evidence.fail.other_rulebook", have=repr(book.id), want=repr(rb)))
        return None
    notes.append(tr("cli.evidence.note.rulebook", rulebook=rb, name=name, sha=hashlib.sha256(raw).hexdigest()))
    return book


def _brl(cents) -> str:
    """Whole cents as the pt-BR amount (``portgate.l10n.money``: ``R$ 696,60``); a value that is not
    a whole number of cents as its repr (the report names what the bundle holds)."""
    try:
        return money(Decimal(int(cents)) / 100)
    except (TypeError, ValueError):
        return repr(cents)


def _compare(st: dict, computed, fail: list[str], notes: list[str]) -> None:
    """Failures for each line of the stored statement ``st`` that differs from ``computed`` (a
    ``watchmen.Statement``), by position, then its flags and total."""
    sid = st.get("statement_id")
    lines = [ln for ln in st.get("lines", []) if ln.get("rule") != ADJUSTMENT_RULE]
    adjustments = [ln for ln in st.get("lines", []) if ln.get("rule") == ADJUSTMENT_RULE]
    want = [(ln.rule, ln.article, ln.description, int(ln.amount * 100)) for ln in computed.lines]
    have = [(ln.get("rule"), ln.get("article"), ln.get("description"), ln.get("amount_cents")) for ln in lines]
    before = len(fail)
    for i in range(max(len(want), len(have))):
        w = want[i] if i < len(want) else None
        h = have[i] if i < len(have) else None
        if w == h:
            continue
        if h is None:
            fail.append(f"statements.json {sid}: " + tr("cli.evidence.fail.line_missing", n=i + 1, code=w[0], rule=w[1],
                                                               qty=w[2], amount=_brl(w[3])))
        elif w is None:
            fail.append(f"statements.json {sid}: " + tr("cli.evidence.fail.line_extra", n=i + 1, code=h[0],
                                                               amount=_brl(h[3])))
        else:
            fail.append(f"statements.json {sid}: " + tr("cli.evidence.fail.line_differs", n=i + 1, code=h[0], qty=h[2],
                                                               amount=_brl(h[3]), want_code=w[0], want_rule=w[1],
                                                               want_qty=w[2], want_amount=_brl(w[3])))
    flags = [f for f in st.get("flags", []) if f != ADJUSTMENT_FLAG]
    if flags != list(computed.flags):
        fail.append(f"statements.json {sid}: " + tr("cli.evidence.fail.flags", flags=flags, want=list(computed.flags)))
    total = sum(h[3] for h in have if isinstance(h[3], int))
    if len(fail) > before:
        fail.append(f"statements.json {sid}: " + tr("cli.evidence.fail.pays", total=_brl(total), rulebook=computed.rulebook,
                                                           want=_brl(int(computed.total * 100))))
    else:
        notes.append(tr("cli.evidence.note.statement_equal", statement=sid, n=len(want), total=_brl(total)))
    for ln in adjustments:
        notes.append(tr("cli.evidence.note.adjustment", statement=sid, rule=ln.get("rule"),
                        amount=_brl(ln.get("amount_cents")), description=ln.get("description")))


def _differs(key: str, have: object, want: object) -> str:
    """Why a bundled shift's ``key`` is not the recomputed one, with no Python ``None`` shown: a
    value missing on one side reads as "none given" (cli.evidence.fail.shift_*)."""
    if want is None:
        return tr("cli.evidence.fail.shift_none_recomputed", key=key, have=repr(have))
    if have is None:
        return tr("cli.evidence.fail.shift_none_bundled", key=key, want=repr(want))
    return tr("cli.evidence.fail.shift_differs", key=key, have=repr(have), want=repr(want))
