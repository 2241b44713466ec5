"""Cases under due process (RULES.md R7, 83.611 art. 21 §1, §2; penalties R4).

A case charges one worker with an article and evidence; it is opened from a flagged gate event
by an inspector (``open_from_event``) or by itself from a gate confiscation
(``central.registry.confiscation.record_confiscation``). Its steps, as data:

    open --defence--> defended --decide--> decided --appeal--> appealed --appeal decided--> final
                                           decided --waived / 30 days passed--> final

- no penalty without the prior defence (R7): ``decide`` with a penalty refuses a case without one;
- suspension length within the rulebook's R4 limits (``central.registry.sanctions``, passed in as ``limits``);
- an appeal is accepted within ``APPEAL_DAYS`` of the decision's notice (``decided_at``);
- the penalty reaches the registration record only when final (``_apply``): a suspension through
  ``store.suspend``, a cancellation through ``store.cancel`` (each a roster change row, which the
  downlink sends to the gates: G3 refuses the worker), a reprimand as an infraction.

Every step is an ``audit_log`` row naming the actor. ``BadInput`` (one line) for a step out of
order, an unknown case or event, a length out of range; the caller rolls back.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from central.ledger.schema import events
from central.registry import store
from central.registry.changes import audit, utcnow
from central.registry.sanctions import TODAY, SuspensionLimits
from central.registry.schema import case_attachments, cases
from portgate.errors import BadInput
from portgate.timeutil import as_utc
from wire.flags import Flag

APPEAL_DAYS = 30
PORT_TZ = ZoneInfo("America/Sao_Paulo")  # the default port calendar; callers pass their port's
_TICK = dt.timedelta(microseconds=1)
DECISIONS = ("none", "reprimand", "suspension", "cancellation")
MAX_ATTACHMENT = 5 * 1024 * 1024
MAX_TEXT = 50_000  # characters of a charge, evidence note, defence or appeal (about 25 pages)


def _fits(text: str | None, field: str) -> None:
    """``BadInput`` naming ``field`` when ``text`` holds a NUL (PostgreSQL refuses it; SQLite would
    store it) or is longer than ``MAX_TEXT`` characters; nothing is written then."""
    if text is None:
        return
    if "\x00" in text:
        raise BadInput(f"{field} contains a NUL character", where=field)
    if len(text) > MAX_TEXT:
        raise BadInput(f"{field} is longer than {MAX_TEXT} characters ({len(text)})", where=field)
# step -> statuses it may follow (state transitions as data)
STEPS: dict[str, tuple[str, ...]] = {
    "defence": ("open", "defended"),
    "decide": ("open", "defended"),
    "appeal": ("decided",),
    "appeal_decided": ("appealed",),
    "waive": ("decided",),
    "expire": ("decided",),
}
FLAG_ARTICLES = {  # the default charge per flag (83.611 art. 20)
    Flag.BORROWED_CARD: "83.611 art. 20 j/l",
    Flag.ROTATION_JUMP: "83.611 art. 20 i",
    Flag.DOUBLE_ASSIGNMENT: "83.611 art. 22",
    Flag.EARLY_EXIT: "83.611 art. 20 b, e",
    Flag.LATE_ARRIVAL: "83.611 art. 20 i",
    Flag.NO_ENTRY: "83.611 art. 20 b",
    Flag.WRONG_CATEGORY: "83.611 art. 1",
}


def case_of_event(session: Session, event_id: str) -> int | None:
    """The id of the case opened from ``event_id``, or None."""
    row = session.execute(select(cases.c.id).where(cases.c.event_id == event_id)).first()
    return None if row is None else int(row.id)


def get_case(session: Session, case_id: int):
    row = session.execute(select(cases).where(cases.c.id == case_id)).first()
    if row is None:
        raise BadInput(f"no case {case_id}", where="case")
    return row


def _step(session: Session, case_id: int, step: str):
    row = get_case(session, case_id)
    if row.status not in STEPS[step]:
        raise BadInput(f"case {case_id} is {row.status}: cannot take step {step}", where="case")
    return row


def open_from_event(session: Session, event_id: str, *, flag: str, charge: str, article: str | None,
                    evidence: str, actor: str, now: dt.datetime | None = None) -> int:
    """Open a case against the registration of the flagged event ``event_id``; return its id. The
    case is of the event's port (``cases.port``, 0029).

    ``flag`` must be among the event's flags (or the confiscation's reason). One case per event:
    opening it again returns the existing case. ``BadInput`` for an unknown event, a flag the event
    does not carry, an event without a registration or an empty charge."""
    now = now or utcnow()
    existing = session.execute(select(cases.c.id).where(cases.c.event_id == event_id)).first()
    if existing:
        return int(existing.id)
    ev = session.execute(select(events).where(events.c.event_id == event_id)).first()
    if ev is None:
        raise BadInput(f"no event {event_id}", where="event")
    payload = ev.payload or {}
    flags = list(payload.get("flags") or []) + ([payload["reason_flag"]] if payload.get("reason_flag") else [])
    if flag not in flags:
        raise BadInput(f"event {event_id} does not carry flag {flag}", where="flag")
    registration = ev.registration or payload.get("registration")
    if not registration:
        raise BadInput(f"event {event_id} names no registration", where="event")
    if not (charge or "").strip():
        raise BadInput("the charge is required (R7)", where="charge")
    _fits(charge, "charge")
    _fits(evidence, "evidence")
    article = (article or "").strip() or FLAG_ARTICLES.get(flag, "83.611 art. 20")
    case_id = int(session.execute(cases.insert().values(
        event_id=event_id, source_event_id=event_id, card_uid=payload.get("uid") or "",
        registration=registration, inspector_uid="", inspector_registration=None, gate_id=ev.gate_id,
        reason_flag=flag, article=article[:64], occurred_at=ev.occurred_at, status="open", decision="",
        opened_at=now, charge=charge.strip(), evidence=(evidence or "").strip(), port=ev.port,
    )).inserted_primary_key[0])
    audit(session, actor=actor, action="case.open", subject=str(case_id),
          detail={"event_id": event_id, "flag": flag, "article": article, "registration": registration}, now=now)
    return case_id


def record_defence(session: Session, case_id: int, text: str, *, attachments=(), actor: str,
                   now: dt.datetime | None = None, send_id: str | None = None) -> None:
    """Record the accused's prior defence (text, and ``attachments`` as (filename, content type,
    bytes), each at most ``MAX_ATTACHMENT`` bytes). A further defence before the decision is
    appended, never replaces one (R7: every defence stays on the case): the ``defence`` text holds
    each one under a line ``— <UTC time> · <actor>``; ``defence_at`` stays the first one's time.
    ``send_id``: the form's one-time send id, kept in the audit row (``central.web.resend``)."""
    now = now or utcnow()
    row = _step(session, case_id, "defence")
    if not (text or "").strip():
        raise BadInput("the defence text is required", where="defence")
    _fits(text, "defence")
    for name, ctype, data in attachments:
        if len(data) > MAX_ATTACHMENT:
            raise BadInput(f"attachment {name} is larger than {MAX_ATTACHMENT // 1024 // 1024} MB", where="attachment")
        session.execute(case_attachments.insert().values(
            case_id=case_id, filename=(name or "anexo")[:255], content_type=(ctype or "application/octet-stream")[:128],
            data=data, uploaded_at=now, actor=actor))
    entry = f"— {now.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC · {actor}\n{text.strip()}"
    combined = f"{row.defence}\n\n{entry}" if row.defence else entry
    session.execute(update(cases).where(cases.c.id == case_id)
                    .values(defence=combined, defence_at=row.defence_at or now, status="defended"))
    audit(session, actor=actor, action="case.defence", subject=str(case_id),
          detail={"attachments": [a[0] for a in attachments], "text": text.strip()}
          | ({"send": send_id} if send_id else {}), now=now)


def decide(session: Session, case_id: int, kind: str, *, days: int | None = None, start: dt.date | None = None,
           reason: str = "", actor: str, now: dt.datetime | None = None,
           limits: SuspensionLimits = TODAY) -> None:
    """Record the decision (none, reprimand, suspension of ``days`` from ``start``, cancellation).
    ``limits``: the rulebook's R4 suspension limits (``BadInput`` naming them when ``days`` is out).

    A penalty needs the prior defence (R7). The appeal window of ``APPEAL_DAYS`` opens now."""
    now = now or utcnow()
    row = _step(session, case_id, "decide")
    if kind not in DECISIONS:
        raise BadInput(f"decision {kind!r} is not one of {', '.join(DECISIONS)}", where="decision")
    if kind != "none" and row.defence_at is None:
        raise BadInput("no penalty without the prior defence of the accused (R7, 83.611 art. 21 §1)",
                       where="decision")
    if kind == "suspension":
        if days is None:
            raise BadInput("a suspension needs its number of days (R4)", where="days")
        problem = limits.problem(days)
        if problem is not None:
            raise BadInput(f"{problem} (R4)", where="days")
        if start is None:
            raise BadInput("a suspension needs its first day", where="start")
    else:
        days, start = None, (start if kind == "cancellation" else None)
    session.execute(update(cases).where(cases.c.id == case_id).values(
        decision_kind=kind, decision_days=days, decision_start=start, decided_at=now, status="decided",
        decision=(reason or kind)[:2000]))
    audit(session, actor=actor, action="case.decide", subject=str(case_id),
          detail={"kind": kind, "days": days, "start": start.isoformat() if start else None}, now=now)


def appeal_deadline(row, tz: ZoneInfo = PORT_TZ) -> dt.datetime | None:
    """The last moment an appeal is accepted (83.611 art. 21 §2, R7): the end of the
    ``APPEAL_DAYS``-th day after the notice (``row.decided_at``), days counted in the port's
    calendar ``tz``. A decision noticed at 15:00 on 15/03 (local) may be appealed until 23:59:59 of
    14/04 (local). Aware UTC; None before a decision."""
    decided = as_utc(row.decided_at)
    if decided is None:
        return None
    last_day = decided.astimezone(tz).date() + dt.timedelta(days=APPEAL_DAYS)
    return dt.datetime.combine(last_day + dt.timedelta(days=1), dt.time(), tz).astimezone(dt.UTC) - _TICK


def appeal_last_day(row, tz: ZoneInfo = PORT_TZ) -> dt.date | None:
    """The port-local date of ``appeal_deadline``: the last day of the appeal window."""
    deadline = appeal_deadline(row, tz)
    return None if deadline is None else deadline.astimezone(tz).date()


def file_appeal(session: Session, case_id: int, text: str, *, actor: str, now: dt.datetime | None = None,
                tz: ZoneInfo = PORT_TZ, send_id: str | None = None) -> None:
    """File the worker's appeal, within ``APPEAL_DAYS`` of the decision's notice, days counted in
    the port's calendar ``tz`` (``appeal_deadline``; 83.611 art. 21 §2). ``BadInput`` after it,
    naming its last day. The audit row keeps the text and ``send_id`` (``central.web.resend``)."""
    now = now or utcnow()
    row = _step(session, case_id, "appeal")
    if now > appeal_deadline(row, tz):
        raise BadInput(f"the appeal window closed on {appeal_last_day(row, tz):%Y-%m-%d}", where="appeal")
    if not (text or "").strip():
        raise BadInput("the appeal text is required", where="appeal")
    _fits(text, "appeal")
    session.execute(update(cases).where(cases.c.id == case_id).values(appeal=text.strip(), appeal_at=now,
                                                                      status="appealed"))
    audit(session, actor=actor, action="case.appeal", subject=str(case_id),
          detail={"text": text.strip()} | ({"send": send_id} if send_id else {}), now=now)


def decide_appeal(session: Session, case_id: int, outcome: str, *, actor: str, now: dt.datetime | None = None) -> None:
    """``upheld`` (the penalty becomes final and is applied) or ``overturned`` (no penalty)."""
    now = now or utcnow()
    _step(session, case_id, "appeal_decided")
    if outcome not in ("upheld", "overturned"):
        raise BadInput(f"appeal outcome {outcome!r} is not upheld|overturned", where="outcome")
    values = {"appeal_outcome": outcome}
    if outcome == "overturned":
        values |= {"decision_kind": "none", "decision_days": None, "decision_start": None}
    session.execute(update(cases).where(cases.c.id == case_id).values(**values))
    _finalize(session, case_id, actor=actor, now=now, how=f"appeal {outcome}")


def waive_appeal(session: Session, case_id: int, *, actor: str, now: dt.datetime | None = None) -> None:
    """The worker waives the appeal: the decision is final now."""
    now = now or utcnow()
    _step(session, case_id, "waive")
    session.execute(update(cases).where(cases.c.id == case_id).values(appeal_outcome="waived"))
    _finalize(session, case_id, actor=actor, now=now, how="appeal waived")


def finalize_expired(session: Session, *, actor: str, now: dt.datetime | None = None,
                     tz: ZoneInfo = PORT_TZ) -> list[int]:
    """Make final every decided case whose appeal window (``appeal_deadline`` in the port's
    calendar ``tz``) has passed; return their ids."""
    now = now or utcnow()
    done = []
    for row in session.execute(select(cases).where(cases.c.status == "decided")).all():
        if now > appeal_deadline(row, tz):
            _finalize(session, row.id, actor=actor, now=now, how="appeal window passed")
            done.append(row.id)
    return done


def _finalize(session: Session, case_id: int, *, actor: str, now: dt.datetime, how: str) -> None:
    row = get_case(session, case_id)
    reason = f"case {case_id}: {row.reason_flag} ({row.article}), final: {how}"
    if row.decision_kind == "suspension":
        # the length was checked against the rulebook's limits when it was decided
        decided = SuspensionLimits(min_days=row.decision_days, max_days=row.decision_days,
                                   article=row.article or "R4")
        store.suspend(session, row.registration, start=row.decision_start, days=row.decision_days,
                      reason=reason, article=row.article, actor=actor, now=now, case_id=case_id,
                      limits=decided)
    elif row.decision_kind == "cancellation":
        store.cancel(session, row.registration, on=row.decision_start or now.date(), reason=reason,
                     article=row.article, actor=actor, now=now, case_id=case_id)
    elif row.decision_kind == "reprimand":
        store.record_infraction(session, row.registration, rule="R7", article=row.article,
                                reason=f"reprimand: {reason}", actor=actor, now=now, case_id=case_id)
    session.execute(update(cases).where(cases.c.id == case_id).values(status="final", final_at=now))
    audit(session, actor=actor, action="case.final", subject=str(case_id),
          detail={"kind": row.decision_kind, "how": how}, now=now)


def list_open(session: Session, limit: int = 500, where=None) -> list[dict]:
    """Cases, not final first, newest first; ``where``: an SQL condition on ``cases`` they must also
    meet (a view's ports, ``central.registry.worker_ports.in_ports``), None: every case."""
    stmt = select(cases) if where is None else select(cases).where(where)
    rows = session.execute(stmt.order_by((cases.c.status == "final"), cases.c.id.desc()).limit(limit))
    return [dict(r._mapping) for r in rows]


def attachments_of(session: Session, case_id: int) -> list[dict]:
    rows = session.execute(select(case_attachments.c.id, case_attachments.c.filename,
                                  case_attachments.c.content_type, case_attachments.c.uploaded_at)
                           .where(case_attachments.c.case_id == case_id).order_by(case_attachments.c.id))
    return [dict(r._mapping) for r in rows]


def attachment(session: Session, case_id: int, attachment_id: int):
    row = session.execute(select(case_attachments).where(case_attachments.c.id == attachment_id,
                                                         case_attachments.c.case_id == case_id)).first()
    if row is None:
        raise BadInput(f"no attachment {attachment_id} in case {case_id}", where="attachment")
    return row
