"""What the worker page's enrol mode reads from the ledger (issue 34): the gates a clerk may
choose (from their last status: online or not) and, for an open session, the gate's enrol read
(the tap refused with rule ``ENROL``) and any known card read there meanwhile (not offered).
The session itself is ``central.registry.gate_enrol``; this module joins it with the ledger."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.orm import Session

from central.ledger.schema import events, gate_status
from central.registry import gate_enrol
from central.registry.gate_enrol import EnrolSession
from central.registry.store import get_worker
from portgate.timeutil import as_utc


@dataclasses.dataclass(frozen=True, slots=True)
class EnrolView:
    """The enrol panel of a worker's page: ``session`` (open, or the newest ended one, or None),
    ``gates`` (``(gate_id, online)``, by id) and ``known`` (a known card read at the gate during
    the open session: ``(uid, registration)``, not offered)."""

    session: EnrolSession | None
    gates: list[tuple[str, bool]]
    known: tuple[str, str] | None = None

    @property
    def open(self) -> bool:
        return self.session is not None and self.session.state in gate_enrol.OPEN


def gates(session: Session) -> list[tuple[str, bool]]:
    """Every gate that ever reported a status, ``(gate_id, online)``, by gate id, once each (its
    status rows are per port, ``gate_status.port``: online when one of them says so). Which of them
    a clerk is offered is the caller's ``offered`` (``central.web.registry_scope.gate_offered``)."""
    found: dict[str, bool] = {}
    for r in session.execute(select(gate_status.c.gate_id, gate_status.c.state).order_by(gate_status.c.gate_id)):
        found[r.gate_id] = found.get(r.gate_id, False) or r.state == "online"
    return list(found.items())


def gate_online(session: Session, gate_id: str) -> bool:
    """True when one of the gate's last statuses (one per port) says online."""
    return session.execute(select(gate_status.c.gate_id).where(
        gate_status.c.gate_id == gate_id, gate_status.c.state == "online").limit(1)).first() is not None


def _taps_since(session: Session, found: EnrolSession):
    """The gate's taps the office received since the session started, oldest first."""
    return session.execute(select(events.c.event_id, events.c.occurred_at, events.c.registration,
                                  events.c.payload)
                           .where(events.c.gate_id == found.gate_id, events.c.type == "tap",
                                  events.c.received_at >= found.started_at)
                           .order_by(events.c.id)).all()


def refresh(session: Session, registration: str, now: dt.datetime,
            offered: Callable[[str], bool] | None = None) -> EnrolView:
    """The worker's enrol panel at ``now``: an open session that is waiting takes the gate's
    first ENROL read received since it started (``gate_enrol.note_read``) or expires; a known card
    read at the gate meanwhile is named (the gate decided it as always). The gates listed are those
    ``offered`` keeps (``central.web.registry_scope.gate_offered``: the worker's port's on an office
    of several ports; None: every gate). ``BadInput`` for an unknown worker."""
    get_worker(session, registration)  # BadInput for an unknown worker (the panel answers 404)
    found = gate_enrol.current(session, registration, now)
    known = None
    if found is not None:
        for r in _taps_since(session, found):
            p = r.payload or {}
            if "ENROL" in (p.get("rules_failed") or []):
                if found.state == "waiting":
                    found = gate_enrol.note_read(session, found, str(p.get("uid", "")),
                                                 as_utc(r.occurred_at), r.event_id, now=now)
            elif r.registration:
                known = (str(p.get("uid", "")), r.registration)
    shown = found if found is not None else gate_enrol.latest(session, registration)
    listed = [g for g in gates(session) if offered is None or offered(g[0])]
    return EnrolView(session=shown, gates=listed, known=known)
