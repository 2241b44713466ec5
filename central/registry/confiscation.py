"""Confiscation workflow (G10, 83.611 art. 20 §1 and §3).

An inspector's confiscation arrives from a gate as a ``ConfiscationPayload`` event through the
ingest, which calls ``record_confiscation``. It blocks the card at every gate (a cards change row
with status ``confiscated``: the blocklist delta), opens a case with the reason and article, and
writes the infraction on the worker's registration record. The labour office (DTM) receives the
case report (``case_report``); the sanctions it decides (suspension, cancellation, R4) are recorded
with ``central.registry.store.suspend``/``cancel`` linked to the case.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from central.registry.changes import utcnow
from central.registry.schema import cards, cases, penalties
from central.registry.store import CARD_TRANSITIONS, get_card, record_infraction, transition_card
from portgate.errors import BadInput
from portgate.timeutil import as_utc
from wire.events import ConfiscationPayload, Event

SYSTEM_ACTOR = "ingest"


def record_confiscation(session: Session, event: Event) -> int:
    """Apply a confiscation event from a gate; return the case id. Idempotent by ``event_id``: a
    redelivered event returns the existing case and writes nothing.

    The card (looked up by ``payload.uid``) goes to ``confiscated`` and a cards change row goes out
    to every gate; an unknown card still opens a case (the gate saw it; the office must know) but
    emits no change. ``BadInput`` if the event's payload is not a confiscation. The actor recorded is
    ``inspector:<registration or uid>``.

    The case's opening, the card's history, the infraction and their audit rows carry the event's
    time (``occurred_at``, aware UTC): the inspector took the card and charged the worker at the
    gate then, however late the office received the event (a broker outage, a replay). No clock of
    the office is read (the demo's scripted day stays on its own dates).
    """
    payload = event.payload
    if not isinstance(payload, ConfiscationPayload):
        raise BadInput(f"event {event.event_id} is not a confiscation", where="payload")
    existing = session.execute(select(cases.c.id).where(cases.c.event_id == event.event_id)).first()
    if existing:
        return int(existing.id)
    now = as_utc(event.occurred_at)
    actor = f"inspector:{payload.inspector_registration or payload.inspector_uid}"
    card_row = session.execute(select(cards).where(cards.c.uid == payload.uid)).first()
    registration = payload.registration or (card_row.registration if card_row else None)
    case_id = int(session.execute(cases.insert().values(
        event_id=event.event_id, card_uid=payload.uid, registration=registration,
        inspector_uid=payload.inspector_uid, inspector_registration=payload.inspector_registration,
        gate_id=event.gate_id, reason_flag=payload.reason_flag, article=payload.article,
        occurred_at=event.occurred_at, status="open", decision="", opened_at=now, port=event.port,
    )).inserted_primary_key[0])
    if card_row is not None and (card_row.status, "confiscated") in CARD_TRANSITIONS:
        transition_card(session, payload.uid, "confiscated", actor=actor, now=now,
                        detail=f"case {case_id}: {payload.reason_flag} ({payload.article})")
    if registration is not None and card_row is not None:
        record_infraction(session, registration, rule="G10", article=payload.article,
                          reason=f"card {payload.uid} confiscated: {payload.reason_flag}",
                          actor=actor, now=now, case_id=case_id)
    return case_id


def return_card(session: Session, uid: str, *, decision: str, actor: str,
                now: dt.datetime | None = None) -> None:
    """Return a confiscated card to its holder (the DTM decided): the card is active again at every
    gate (a cards change row) and its open cases are closed with ``decision``. ``BadInput`` if the
    card is unknown or not confiscated."""
    now = now or utcnow()
    if get_card(session, uid).status.value != "confiscated":
        raise BadInput(f"card {uid} is not confiscated", where="uid")
    transition_card(session, uid, "returned", actor=actor, now=now, detail=decision)
    session.execute(update(cases).where(cases.c.card_uid == uid, cases.c.status == "open")
                    .values(status="closed", decision=decision))


def list_cases(session: Session, status: str | None = None) -> list[dict]:
    """Confiscation cases (all, or ``open``/``closed``), oldest first."""
    stmt = select(cases).order_by(cases.c.id)
    if status:
        stmt = stmt.where(cases.c.status == status)
    return [dict(r._mapping) for r in session.execute(stmt)]


def case_report(session: Session, case_id: int) -> str:
    """The report for the labour office (DTM) on one case, plain text in Portuguese (83.611 art. 20
    §1: the confiscated card is sent at once to the DTM). ``BadInput`` if the case is unknown."""
    row = session.execute(select(cases).where(cases.c.id == case_id)).first()
    if row is None:
        raise BadInput(f"no case {case_id}", where="case")
    sanctions = session.execute(select(penalties).where(penalties.c.case_id == case_id)
                                .order_by(penalties.c.id)).all()
    when = as_utc(row.occurred_at).isoformat()
    lines = [
        "À Delegacia do Trabalho Marítimo",
        f"Auto de apreensão de cartão de controle nº {row.id}",
        "",
        f"Cartão apreendido: {row.card_uid}",
        f"Matrícula do titular: {row.registration or 'desconhecida'}",
        f"Fiscal do Sindicato: {row.inspector_registration or '-'} (cartão {row.inspector_uid})",
        f"Portaló (gate): {row.gate_id}",
        f"Data e hora (UTC): {when}",
        f"Motivo: {row.reason_flag}",
        f"Dispositivo legal: {row.article} (Decreto 83.611/79 art. 20 §1)",
        f"Situação: {'aberto' if row.status == 'open' else 'encerrado'}"
        + (f" — {row.decision}" if row.decision else ""),
    ]
    for s in sanctions:
        period = (f" de {s.starts_on} a {s.ends_on}" if s.ends_on else
                  f" a partir de {s.starts_on}" if s.starts_on else "")
        lines.append(f"Penalidade: {s.kind} ({s.article}){period}: {s.reason}")
    return "\n".join(lines) + "\n"
