"""G1 at the gate loop with a reader that gives only part of the UID: the journal names the card."""

from __future__ import annotations

from edge.rules.model import Flag, Outcome
from portgate.uid import UidFormat, read_uid
from wire.events import TapPayload

from .conftest import card_read

V001_CARD = "0A04A10001"  # EM ID; its W26 number is 161,00001 (0xA1, 0x0001)


def test_a_w26_read_is_admitted_flagged_and_journaled_under_the_cards_uid(make_loop, clock, journal, store):
    loop = make_loop()
    read = read_uid("16100001", UidFormat.WIEGAND26).text
    assert read == "wiegand26:A10001"
    [decision] = loop.handle(card_read(read, clock))
    assert (decision.outcome, decision.registration) == (Outcome.ADMIT, "V001")
    assert Flag.PARTIAL_UID in decision.flags
    [ev] = [e for e in journal.events_between(1, 10**9) if isinstance(e.payload, TapPayload)]
    assert (ev.payload.uid, ev.payload.flags) == (V001_CARD, ["PARTIAL_UID"])
    assert store.pending_flags(V001_CARD) == ()  # a flag on the read, not a reason to confiscate
    assert store.open_shift("V001") is not None
