"""A worker's refusal of one of his dispatches for health reasons (RULES.md R3, 83.611 art. 10 sole
paragraph), sent from his phone with a photo of the medical certificate, and the office's decision.

``ask_health_refusal`` stores the request (pending); ``decide`` by the office either accepts it —
the refusal is recorded through ``central.rotation.service.refuse`` with the request as the health
proof: no infraction, he keeps his place in the rotation, the next eligible worker is dispatched —
or rejects it: the dispatch stands (a refusal without proof is then the office's usual R3 step).
Every step is an ``audit_log`` row naming the actor. ``BadInput`` (one line) for a dispatch that is
not his, not active or already over, a second pending request, an unknown or decided request; the
caller rolls back.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from central.registry.changes import audit, utcnow
from central.registry.schema import workers
from central.rotation import service as rotation
from central.rotation.schema import escala
from central.web.workerschema import worker_requests
from portgate.errors import BadInput
from portgate.timeutil import as_utc

MAX_REASON = 2000  # characters of the worker's reason


def ask_health_refusal(session: Session, registration: str, escala_id: int, reason: str,
                       photo: tuple[str, str, bytes], *, actor: str, now: dt.datetime | None = None) -> int:
    """Store ``registration``'s request to refuse escala entry ``escala_id`` for health reasons with
    ``photo`` (filename, content type, bytes: checked by the caller); return its id.
    ``BadInput`` when the entry is not his active dispatch, its period has ended, a request for it
    is pending, or the reason is empty, too long or holds a NUL."""
    now = now or utcnow()
    reason = (reason or "").strip()
    if not reason:
        raise BadInput("the reason is required", where="reason")
    if len(reason) > MAX_REASON or "\x00" in reason:
        raise BadInput(f"the reason is longer than {MAX_REASON} characters or holds a NUL", where="reason")
    row = session.execute(select(escala).where(escala.c.id == escala_id, escala.c.registration == registration,
                                               escala.c.status == "active")).first()
    if row is None:
        raise LookupError(escala_id)
    if ended(row.end_at, now):
        raise BadInput(ended_reason(escala_id, row), where="escala")
    if session.execute(select(worker_requests.c.id).where(worker_requests.c.escala_id == escala_id,
                                                          worker_requests.c.status == "pending")).first():
        raise BadInput(f"a request for dispatch {escala_id} is already pending", where="escala")
    name, ctype, data = photo
    request_id = int(session.execute(worker_requests.insert().values(
        registration=registration, escala_id=escala_id, reason=reason, filename=(name or "atestado")[:255],
        content_type=ctype[:64], photo=data, created_at=now, status="pending")).inserted_primary_key[0])
    audit(session, actor=actor, action="worker_request.health", subject=registration,
          detail={"request": request_id, "escala_id": escala_id, "reason": reason, "photo": name}, now=now)
    return request_id


def ended_reason(escala_id: int, row) -> str:
    """Why a health refusal of escala entry ``escala_id`` (its ``escala`` row) is refused once its
    period has ended (English; pt-BR by ``service_texts`` code ``health_dispatch_over``)."""
    return (f"the dispatch {escala_id} ({row.date} {row.period}) has ended: a health refusal is made "
            "before the end of its period")


def ended(end_at: dt.datetime, now: dt.datetime) -> bool:
    """Whether a dispatch ending at ``end_at`` (an ``escala`` row's, UTC) has ended at ``now`` (aware)."""
    return as_utc(end_at) <= now


def decide(session: Session, request_id: int, accept: bool, *, actor: str, now: dt.datetime | None = None,
           ports=None) -> None:
    """Accept (R3 refusal with proof, ``rotation.service.refuse``: the next worker of the entry's port,
    ``ports`` a ``central.rotation.ports.RotationPorts``) or reject a pending request.
    ``BadInput`` for an unknown or already decided request, or a dispatch no longer active; an
    accept of a request whose dispatch has ended at ``now`` is refused by ``rotation.refuse`` (a
    past escala is not changed, R5; the office may still reject it). Nothing is written then."""
    now = now or utcnow()
    row = session.execute(select(worker_requests).where(worker_requests.c.id == request_id)).first()
    if row is None or row.status != "pending":
        raise BadInput(f"no pending request {request_id}", where="request")
    refusal_id = None
    if accept:
        refusal_id, _new = rotation.refuse(session, row.escala_id, reason=f"health: {row.reason}", actor=actor,
                                           health_proof=f"worker request {request_id}: {row.filename}", now=now,
                                           ports=ports)
    session.execute(update(worker_requests).where(worker_requests.c.id == request_id).values(
        status="accepted" if accept else "rejected", decided_at=now, decided_by=actor, refusal_id=refusal_id))
    audit(session, actor=actor, action="worker_request.accept" if accept else "worker_request.reject",
          subject=row.registration, detail={"request": request_id, "escala_id": row.escala_id}, now=now)


def requests_of(session_or_conn, registration: str) -> dict[int, dict]:
    """``registration``'s requests by escala id (the newest per dispatch), without the photo."""
    rows = session_or_conn.execute(
        select(worker_requests.c.id, worker_requests.c.escala_id, worker_requests.c.status,
               worker_requests.c.created_at, worker_requests.c.decided_at)
        .where(worker_requests.c.registration == registration).order_by(worker_requests.c.id))
    return {r.escala_id: dict(r._mapping) for r in rows}


def listing(session_or_conn, limit: int = 200, workers_where=None, now: dt.datetime | None = None) -> list[dict]:
    """The requests for the office, pending first then the newest, without the photo, each with
    its dispatch's ``date``, ``period``, ``ship_name`` and ``ended`` (its period is over at ``now``,
    aware, default the machine's: it can no longer be accepted, ``decide``). ``workers_where``: an
    SQL condition on ``workers`` the requesting worker must meet (a view's ports,
    ``central.registry.worker_ports.in_ports``), None: every worker's."""
    now = now or utcnow()
    stmt = (select(worker_requests.c.id, worker_requests.c.registration, worker_requests.c.escala_id,
                   worker_requests.c.reason, worker_requests.c.filename, worker_requests.c.status,
                   worker_requests.c.created_at, worker_requests.c.decided_at, worker_requests.c.decided_by,
                   escala.c.date, escala.c.period, escala.c.ship_name, escala.c.end_at)
            .join(escala, escala.c.id == worker_requests.c.escala_id))
    if workers_where is not None:
        stmt = stmt.where(worker_requests.c.registration.in_(select(workers.c.registration).where(workers_where)))
    rows = session_or_conn.execute(
        stmt.order_by((worker_requests.c.status != "pending"), worker_requests.c.id.desc()).limit(limit))
    return [dict(r._mapping) | {"ended": ended(r.end_at, now)} for r in rows]


def registration_of(session_or_conn, request_id: int) -> str | None:
    """The registration of the worker who made request ``request_id``, or None."""
    return session_or_conn.execute(select(worker_requests.c.registration)
                                   .where(worker_requests.c.id == request_id)).scalar()


def photo_of(session_or_conn, request_id: int):
    """(filename, content type, bytes) of request ``request_id``, or None."""
    row = session_or_conn.execute(select(worker_requests.c.filename, worker_requests.c.content_type,
                                         worker_requests.c.photo).where(worker_requests.c.id == request_id)).first()
    return None if row is None else (row.filename, row.content_type, bytes(row.photo))
