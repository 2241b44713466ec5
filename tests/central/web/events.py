"""Ledger events for web tests that need a given flag or tap without a gate: signed wire events
written through the ingest's own ``write_batch`` (the gates' path is tested in test_browser)."""

from __future__ import annotations

import datetime as dt
import itertools

from central.ingest.event_store import Accepted, write_batch
from wire.events import Dispatch, Event, TapPayload, encode, new_event_id, sign

_seq = itertools.count(1)


def add_flag_event(engine, *, flags, registration="V008", gate_id="g1", decision="deny", at=None,
                   badge_registration=None, ship="9300001", message="NEGADO", port="santos") -> str:
    at = at or dt.datetime.now(dt.UTC)
    payload = TapPayload(uid="AA000008", reader_id="r1", reader_kind="control", decision=decision,
                         rules_failed=["G4"] if "BORROWED_CARD" in flags else [], flags=list(flags),
                         message=message, registration=registration, card_kind="control",
                         badge_registration=badge_registration,
                         dispatch=Dispatch(date=at.date(), period="07-13", ship=ship, berth="berthed",
                                           voyage="long_haul", post="portalo", function="vigia"))
    event = sign(Event(event_id=new_event_id(), port=port, gate_id=gate_id, boot_id="b1", seq=next(_seq),
                       occurred_at=at, clock_trusted=True, mono_ns=1, payload=payload), b"k")
    with engine.begin() as conn:
        write_batch(conn, [Accepted(f"portgate/v1/{port}/gate/{gate_id}/events", event, encode(event))], [], at)
    return event.event_id
