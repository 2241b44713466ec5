"""Enrol mode on a chosen gate (issue 34): the clerk starts it from a worker's page; the gate
refuses the next unknown card read whole (rule ``ENROL``, "cartão em cadastro": nobody is admitted
with it) and sends the read up as an ordinary tap; the office offers its UID to the clerk, who
binds it to the worker (``central.registry.enrol.issue_card``: the checks of a typed UID, the
``card.issued`` audit row and the cards change the gates receive).

A session (``enrol_sessions``) moves ``waiting`` -> ``read`` -> ``bound``; ``waiting``/``read`` ->
``cancelled`` (the clerk); ``waiting`` -> ``expired`` (``until`` passed with no card: the gate's
own deadline is the same or earlier). Every step is an ``audit_log`` row: ``enrol.start`` (who,
which gate, until), ``enrol.read`` (which UID, when the gate read it, its event), ``enrol.bound``,
``enrol.cancel``, ``enrol.expired``. One open session per worker and per gate.

This module knows the registry only: the caller (the office's web layer) tells it whether the gate
is online and hands it the gate's enrol read from the ledger (``note_read``). Times are aware UTC.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from central.registry.changes import audit
from central.registry.enrol import FormRefused, issue_card
from central.registry.schema import enrol_sessions
from central.registry.store import get_worker
from portgate.errors import BadInput
from portgate.records import Card
from portgate.timeutil import as_utc

OPEN = ("waiting", "read")
KINDS = ("control", "badge")


@dataclasses.dataclass(frozen=True, slots=True)
class EnrolSession:
    """One enrol session as stored (see the module doc). ``uid``/``read_at``: the card the gate
    read (None while waiting)."""

    id: int
    registration: str
    gate_id: str
    kind: str
    state: str
    started_at: dt.datetime
    until: dt.datetime
    started_by: str
    uid: str | None = None
    read_at: dt.datetime | None = None
    event_id: str | None = None
    ended_at: dt.datetime | None = None
    ended_by: str | None = None

    @property
    def wire_id(self) -> str:
        """The session id the gate's ``EnrolCommand`` carries."""
        return f"enrol-{self.id}"


def _row(r) -> EnrolSession:
    """A stored row; its times aware UTC (SQLite gives them back naive)."""
    return EnrolSession(**{f.name: as_utc(v) if isinstance(v := getattr(r, f.name), dt.datetime) else v
                           for f in dataclasses.fields(EnrolSession)})


def start(session: Session, registration: str, gate_id: str, kind: str, *, gate_online: bool,
          actor: str, now: dt.datetime, timeout_s: int) -> EnrolSession:
    """Open a session for ``registration`` at ``gate_id`` until ``now + timeout_s``. The caller
    then sends the gate its ``EnrolCommand`` (start).

    ``FormRefused`` naming ``gate_id`` (an offline or unknown gate: ``gate_online`` False; a gate
    with another open session) or ``kind`` (not control or badge); ``BadInput`` for an unknown
    worker or one with an open session already (cancel it first)."""
    get_worker(session, registration)
    errors = {}
    if kind not in KINDS:
        errors["kind"] = f"kind {kind!r} is not control or badge"
    if not gate_online:
        errors["gate_id"] = f"gate {gate_id} is offline: it cannot enter enrol mode"
    elif session.execute(select(enrol_sessions.c.id).where(
            enrol_sessions.c.gate_id == gate_id, enrol_sessions.c.state.in_(OPEN),
            enrol_sessions.c.until > now)).first():
        errors["gate_id"] = f"gate {gate_id} is already in enrol mode for another worker"
    if errors:
        raise FormRefused(errors)
    if current(session, registration, now) is not None:
        raise BadInput(f"registration {registration} already has an open enrol session: cancel it first",
                       where="gate_id")
    until = now + dt.timedelta(seconds=timeout_s)
    new_id = session.execute(enrol_sessions.insert().values(
        registration=registration, gate_id=gate_id, kind=kind, state="waiting", started_at=now,
        until=until, started_by=actor)).inserted_primary_key[0]
    audit(session, actor=actor, action="enrol.start", subject=registration,
          detail={"session": int(new_id), "gate_id": gate_id, "kind": kind, "until": until.isoformat()}, now=now)
    return get(session, int(new_id))


def get(session: Session, session_id: int) -> EnrolSession:
    """The session ``session_id``; ``BadInput`` if there is none."""
    r = session.execute(select(enrol_sessions).where(enrol_sessions.c.id == session_id)).first()
    if r is None:
        raise BadInput(f"enrol session {session_id} does not exist", where="session")
    return _row(r)


def current(session: Session, registration: str, now: dt.datetime) -> EnrolSession | None:
    """The worker's open session (``waiting`` or ``read``), after ending a ``waiting`` one whose
    ``until`` passed (``enrol.expired``); None if there is none."""
    r = session.execute(select(enrol_sessions).where(
        enrol_sessions.c.registration == registration, enrol_sessions.c.state.in_(OPEN))
        .order_by(enrol_sessions.c.id.desc())).first()
    if r is None:
        return None
    found = _row(r)
    if found.state == "waiting" and now >= found.until:
        _end(session, found, "expired", actor="system", now=now)
        return None
    return found


def latest(session: Session, registration: str) -> EnrolSession | None:
    """The worker's newest session in any state (what the page says last happened), or None."""
    r = session.execute(select(enrol_sessions).where(enrol_sessions.c.registration == registration)
                        .order_by(enrol_sessions.c.id.desc())).first()
    return _row(r) if r is not None else None


def note_read(session: Session, found: EnrolSession, uid: str, read_at: dt.datetime, event_id: str, *,
              now: dt.datetime) -> EnrolSession:
    """The gate read ``uid`` in enrol mode (its tap ``event_id`` at ``read_at``): the session
    offers it to the clerk (``read``, ``enrol.read`` audit row by ``gate:<gate_id>``). A session
    no longer waiting is returned as it is."""
    if found.state != "waiting":
        return found
    session.execute(update(enrol_sessions).where(enrol_sessions.c.id == found.id,
                                                 enrol_sessions.c.state == "waiting")
                    .values(state="read", uid=uid, read_at=read_at, event_id=event_id))
    audit(session, actor=f"gate:{found.gate_id}", action="enrol.read", subject=found.registration,
          detail={"session": found.id, "gate_id": found.gate_id, "uid": uid, "read_at": read_at.isoformat(),
                  "event_id": event_id}, now=now)
    return get(session, found.id)


def cancel(session: Session, registration: str, session_id: int, *, actor: str, now: dt.datetime) -> EnrolSession:
    """The clerk cancels the worker's open session (``enrol.cancel``); the caller sends the gate
    its ``EnrolCommand`` (cancel). ``BadInput`` if it is not an open session of ``registration``."""
    found = _open_of(session, registration, session_id)
    return _end(session, found, "cancelled", actor=actor, now=now)


def confirm(session: Session, registration: str, session_id: int, *, actor: str, now: dt.datetime) -> Card:
    """Bind the card the gate read to the worker: ``issue_card`` (the UID as hex, the session's
    kind), then the session is ``bound`` (``enrol.bound`` audit row). ``BadInput`` if the session
    is not an open one of ``registration`` or has no card yet; ``FormRefused`` naming ``uid`` as
    ``issue_card`` refuses it (a card registered meanwhile, an active card of that kind)."""
    found = _open_of(session, registration, session_id)
    if found.state != "read" or not found.uid:
        raise BadInput(f"enrol session {session_id} has no card read yet", where="session")
    card = issue_card(session, registration, found.uid, "hex", found.kind, actor=actor, now=now)
    _end(session, found, "bound", actor=actor, now=now, extra={"uid": card.uid})
    return card


def _open_of(session: Session, registration: str, session_id: int) -> EnrolSession:
    found = get(session, session_id)
    if found.registration != registration or found.state not in OPEN:
        raise BadInput(f"enrol session {session_id} is not open for {registration}", where="session")
    return found


def _end(session: Session, found: EnrolSession, state: str, *, actor: str, now: dt.datetime,
         extra: dict | None = None) -> EnrolSession:
    session.execute(update(enrol_sessions).where(enrol_sessions.c.id == found.id)
                    .values(state=state, ended_at=now, ended_by=actor))
    action = {"cancelled": "enrol.cancel", "expired": "enrol.expired", "bound": "enrol.bound"}[state]
    audit(session, actor=actor, action=action, subject=found.registration,
          detail={"session": found.id, "gate_id": found.gate_id, "uid": found.uid} | (extra or {}), now=now)
    return get(session, found.id)


__all__ = ["EnrolSession", "FormRefused", "cancel", "confirm", "current", "get", "latest", "note_read", "start"]
