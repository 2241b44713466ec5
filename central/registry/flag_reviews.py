"""The inspectors' review of flagged gate events: the flag queue's states (issue 33, R7, G10).

A flagged event (a tap carrying flags, or a confiscation) is in one of three states, as data:

    new --acknowledge (comment)--> seen --open a case / close as no infraction--> handled
    new --open a case / close as no infraction (comment)--> handled

- ``seen``: an inspector acknowledged it with a comment (looked at it, decided nothing yet); a
  further acknowledgement replaces the comment (each one is an audit_log row);
- ``handled``: a case was opened from it (``central.registry.cases.open_from_event``; the case is
  the due process, R7), a confiscation's case names it as its evidence (``cases.source_event_id``),
  or an inspector closed it as no infraction, with a comment saying why.

A handled flag takes no further review: ``BadInput`` says how it was handled. The state of an event
is read by ``states`` (one query for many events) and by ``central.web.flagsmodel``'s SQL filter,
both from ``flag_reviews`` and ``cases.event_id``. Every review is an ``audit_log`` row naming the
actor (``flag.acknowledge``, ``flag.no_infraction``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from central.ledger.schema import events
from central.registry.changes import audit
from central.registry.schema import cases, flag_reviews
from portgate.errors import BadInput
from portgate.timeutil import as_utc

STATES = ("new", "seen", "handled")
ACKNOWLEDGED, NO_INFRACTION = "acknowledged", "no_infraction"
ACTIONS = {ACKNOWLEDGED: "flag.acknowledge", NO_INFRACTION: "flag.no_infraction"}  # audit_log
MAX_COMMENT = 2_000  # characters


@dataclasses.dataclass(frozen=True, slots=True)
class Review:
    """One flagged event's state: ``state`` in ``STATES``; ``outcome`` ``acknowledged`` |
    ``no_infraction`` | ``case`` | None (new); the latest review's comment, actor and time (aware
    UTC); ``case_id`` when a case was opened from the event."""

    state: str
    outcome: str | None = None
    comment: str = ""
    actor: str = ""
    at: dt.datetime | None = None
    case_id: int | None = None


NEW = Review("new")


def states(session_or_conn, event_ids: list[str]) -> dict[str, Review]:
    """The review of each of ``event_ids`` (``NEW`` for one never reviewed), two queries."""
    ids = list(dict.fromkeys(event_ids))
    if not ids:
        return {}
    opened: dict[str, int] = {}
    for row in session_or_conn.execute(select(cases.c.id, cases.c.event_id, cases.c.source_event_id).where(
            or_(cases.c.event_id.in_(ids), cases.c.source_event_id.in_(ids))).order_by(cases.c.id)).all():
        for key in (row.event_id, row.source_event_id):  # the case opened from it, or whose evidence it is
            if key in ids:
                opened.setdefault(key, int(row.id))
    rows = {r.event_id: r for r in session_or_conn.execute(
        select(flag_reviews).where(flag_reviews.c.event_id.in_(ids))).all()}
    out = {}
    for event_id in ids:
        r, case_id = rows.get(event_id), opened.get(event_id)
        if case_id is not None:
            out[event_id] = Review("handled", "case", r.comment if r else "", r.actor if r else "",
                                   as_utc(r.at) if r else None, int(case_id))
        elif r is not None:
            out[event_id] = Review("handled" if r.outcome == NO_INFRACTION else "seen", r.outcome,
                                   r.comment, r.actor, as_utc(r.at))
        else:
            out[event_id] = NEW
    return out


def _flagged(session: Session, event_id: str) -> None:
    """``BadInput`` unless ``event_id`` is a flagged gate event (a tap with flags, a confiscation)."""
    row = session.execute(select(events.c.type, events.c.payload)
                          .where(events.c.event_id == event_id)).first()
    if row is None:
        raise BadInput(f"no event {event_id[:40]}", where="event")
    payload = row.payload or {}
    if row.type != "confiscation" and not payload.get("flags"):
        raise BadInput(f"event {event_id} carries no flag", where="event")


def _comment(text: str | None) -> str:
    text = (text or "").strip()
    if not text:
        raise BadInput("the comment is required: say what was seen or why there is no infraction",
                       where="comment")
    if "\x00" in text:
        raise BadInput("the comment contains a NUL character", where="comment")
    if len(text) > MAX_COMMENT:
        raise BadInput(f"the comment is longer than {MAX_COMMENT} characters ({len(text)})", where="comment")
    return text


def _review(session: Session, event_id: str, outcome: str, comment: str | None, *, actor: str,
            now: dt.datetime) -> Review:
    text = _comment(comment)
    _flagged(session, event_id)
    current = states(session, [event_id])[event_id]
    if current.state == "handled":
        how = f"case #{current.case_id}" if current.case_id else "no infraction"
        raise BadInput(f"the flag was already handled ({how})", where="flag")
    values = {"outcome": outcome, "comment": text, "actor": actor, "at": now}
    if current.state == "new":
        session.execute(flag_reviews.insert().values(event_id=event_id, **values))
    else:
        session.execute(flag_reviews.update().where(flag_reviews.c.event_id == event_id).values(**values))
    audit(session, actor=actor, action=ACTIONS[outcome],
          subject=event_id, detail={"outcome": outcome, "comment": text, "was": current.state}, now=now)
    return states(session, [event_id])[event_id]


def acknowledge(session: Session, event_id: str, comment: str | None, *, actor: str,
                now: dt.datetime) -> Review:
    """Mark the flagged event ``event_id`` seen, with ``comment`` (required, at most
    ``MAX_COMMENT`` characters); ``now`` aware UTC. Returns its new ``Review``. ``BadInput`` for
    no comment, an unknown or unflagged event, or a flag already handled; the caller rolls back."""
    return _review(session, event_id, ACKNOWLEDGED, comment, actor=actor, now=now)


def close_no_infraction(session: Session, event_id: str, comment: str | None, *, actor: str,
                        now: dt.datetime) -> Review:
    """Close the flagged event ``event_id`` as no infraction (handled), ``comment`` saying why
    (required). No case is opened and nothing reaches the worker's record (R7: no penalty without
    a case). ``BadInput`` as ``acknowledge``."""
    return _review(session, event_id, NO_INFRACTION, comment, actor=actor, now=now)
