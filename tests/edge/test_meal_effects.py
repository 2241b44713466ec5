"""What the gate's store does with the P6 meal mode (edge.effects, pure): an INSPECTOR tap flagged
MEAL_MODE opens the session in meal mode, a meal_worked event ends it, and neither flag is kept as
a pending flag on a card (G10's confiscation reason)."""

from __future__ import annotations

import datetime as dt
import uuid

from edge.effects import effects_of
from wire.events import Dispatch, Event, MealWorkedPayload, TapPayload

AT = dt.datetime(2026, 3, 15, 1, 0, tzinfo=dt.UTC)
D = Dispatch(date=dt.date(2026, 3, 14), period="19-01", ship="9300002", berth="anchored",
             voyage="long_haul", post="portalo", function="vigia")


def _event(payload, boot="b1") -> Event:
    return Event(event_id=str(uuid.uuid4()), port="santos", gate_id="g1", boot_id=boot, seq=1,
                 occurred_at=AT, clock_trusted=True, mono_ns=5_000_000_000, payload=payload)


def test_meal_mode_tap_opens_a_meal_session_and_keeps_no_pending_flag():
    tap = TapPayload(uid="0F1F5CA001", reader_id="r", reader_kind="control", decision="inspector",
                     flags=["MEAL_MODE"], registration="F001", card_kind="inspector")
    fx = effects_of(_event(tap), boot_id="b1", inspector_ttl_ns=60_000_000_000)
    assert fx.inspector is not None and fx.inspector.mode == "meal"
    assert fx.inspector.until_mono_ns == 65_000_000_000 and fx.flags == ()
    plain = TapPayload(uid="0F1F5CA001", reader_id="r", reader_kind="control", decision="inspector")
    assert effects_of(_event(plain), boot_id="b1", inspector_ttl_ns=1).inspector.mode == "confiscate"


def test_meal_record_ends_the_session_and_the_aboard_tap_changes_no_shift():
    meal = MealWorkedPayload(uid="0A04A10012", registration="V018", inspector_uid="0F1F5CA001",
                             inspector_registration="F001", dispatch=D)
    fx = effects_of(_event(meal), boot_id="b1", inspector_ttl_ns=1)
    assert fx.end_inspector and fx.open is None and fx.close is None and fx.block is None
    tap = TapPayload(uid="0A04A10012", reader_id="r", reader_kind="control", decision="aboard",
                     flags=["MEAL_WORKED"], registration="V018", dispatch=D)
    fx = effects_of(_event(tap), boot_id="b1", inspector_ttl_ns=1)
    assert (fx.open, fx.close, fx.flags, fx.end_inspector) == (None, None, (), False)
