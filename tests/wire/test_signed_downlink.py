"""Issue 36 #9 (wire level): a downlink signed with the office key opens only on its own topic,
with an office key the gate holds, unchanged; an older issue number is refused."""

from __future__ import annotations

import pytest

from wire.chain import new_private_key
from wire.signed_downlink import DownlinkRefused, Forward, Issuer, open_envelope, sign

TOPIC = "portgate/v1/santos/down/cards/snapshot"


def test_a_signed_downlink_opens_with_the_office_key_and_gives_the_body_back():
    key = new_private_key()
    payload = sign(key, TOPIC, b'{"type":"cards_snapshot"}', 7)
    assert open_envelope(payload, [key.public_key()], TOPIC) == (7, b'{"type":"cards_snapshot"}')


@pytest.mark.parametrize("change, reason", [
    (lambda p, k: b'{"type":"cards_snapshot"}', "unsigned"),
    (lambda p, k: p.replace(b'"issued":7', b'"issued":8'), "bad_signature"),
    (lambda p, k: p.replace(b"eyJ0", b"eyJ1"), "bad_signature"),
    (lambda p, k: sign(new_private_key(), TOPIC, b"{}", 7), "unknown_key"),
    (lambda p, k: sign(k, "portgate/v1/santos/down/roster/snapshot", b"{}", 7), "other_topic"),
])
def test_unsigned_badly_signed_foreign_or_moved_downlinks_are_refused(change, reason):
    key = new_private_key()
    payload = change(sign(key, TOPIC, b'{"type":"cards_snapshot"}', 7), key)
    with pytest.raises(DownlinkRefused) as refused:
        open_envelope(payload, [key.public_key()], TOPIC)
    assert refused.value.reason == reason


def test_while_a_key_rotates_both_keys_open_and_the_issue_number_only_moves_forward():
    old, new = new_private_key(), new_private_key()
    keys = [old.public_key(), new.public_key()]
    seen = Forward()
    issued, _ = open_envelope(sign(old, TOPIC, b"a", 10), keys, TOPIC)
    assert seen.check(TOPIC, issued) is True
    assert seen.check(TOPIC, issued) is False  # the retained copy again: nothing to do
    issued, _ = open_envelope(sign(new, TOPIC, b"b", 11), keys, TOPIC)
    assert seen.check(TOPIC, issued) is True
    with pytest.raises(DownlinkRefused) as refused:
        seen.check(TOPIC, 10)  # a captured older message replayed
    assert refused.value.reason == "older"
    assert seen.check("portgate/v1/santos/down/roster/snapshot", 5) is True  # per topic


def test_issue_numbers_increase_even_when_the_clock_does_not():
    ticks = iter([100, 100, 90, 200])
    issuer = Issuer(clock=lambda: next(ticks))
    assert [issuer.next() for _ in range(4)] == [100, 101, 102, 200]
