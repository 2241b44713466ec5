"""Debounce (G9) and badge pairing (G4) in front of the engine."""

from __future__ import annotations

from edge.rules.model import Presentation
from edge.rules.pairing import Dropped, Pairing, Read

S = 1_000_000_000


def _pairing() -> Pairing:
    return Pairing(debounce_ns=3 * S, pairing_window_ns=15 * S)


def control(uid: str, t: float) -> Read:
    return Read(uid, "GA/control", "control", int(t * S))


def badge(uid: str, t: float) -> Read:
    return Read(uid, "GA/badge", "badge", int(t * S))


def test_second_read_inside_the_debounce_window_is_dropped():
    p = _pairing()
    assert p.feed(control("AA01", 0)) == [Presentation("AA01", "GA/control", "control", 0)]
    assert p.feed(control("AA01", 3)) == [Dropped(control("AA01", 3))]
    assert isinstance(p.feed(control("AA01", 6.5))[0], Presentation)


def test_debounce_is_per_card():
    p = _pairing()
    p.feed(control("AA01", 0))
    assert isinstance(p.feed(control("AA02", 1))[0], Presentation)


def test_badge_then_control_card_inside_the_window_pair():
    p = _pairing()
    assert p.feed(badge("BB01", 0)) == []
    [out] = p.feed(control("AA01", 15))
    assert out.badge_uid == "BB01" and out.badge_mono_ns == 0 and out.uid == "AA01"


def test_badge_left_alone_comes_out_after_the_window():
    p = _pairing()
    p.feed(badge("BB01", 0))
    assert p.expire(15 * S) == []
    [alone] = p.expire(15 * S + 1)
    assert alone.reader_kind == "badge" and alone.badge_uid is None
    out = p.feed(control("AA01", 20))
    assert out[0].badge_uid is None


def test_late_control_card_releases_the_badge_first():
    p = _pairing()
    p.feed(badge("BB01", 0))
    first, second = p.feed(control("AA01", 16))
    assert (first.uid, first.reader_kind) == ("BB01", "badge")
    assert (second.uid, second.badge_uid) == ("AA01", None)


def test_second_badge_replaces_the_first():
    p = _pairing()
    p.feed(badge("BB01", 0))
    [released] = p.feed(badge("BB02", 1))
    assert released.uid == "BB01"
    assert p.feed(control("AA01", 2))[0].badge_uid == "BB02"


def test_clock_going_backwards_never_pairs_or_drops():
    p = _pairing()
    p.feed(badge("BB01", 100))
    out = p.feed(control("BB01", 50))
    assert [o.uid for o in out] == ["BB01", "BB01"]  # released badge, then an unpaired read


def test_flush_releases_a_waiting_badge():
    p = _pairing()
    p.feed(badge("BB01", 0))
    assert [o.uid for o in p.flush()] == ["BB01"] and p.flush() == []


def test_memory_stays_bounded_by_the_window():
    p = _pairing()
    for i in range(10_000):
        p.feed(control(f"AA{i:06d}", i * 10))
    assert p.tracked == 1


# --- G4: card and badge in either order (RULES.md G4, 83.611 art. 20 j, l) -------------------------
def _holding_pairing() -> Pairing:
    return Pairing(debounce_ns=3 * S, pairing_window_ns=15 * S,
                   expects_badge=lambda read: read.uid.startswith("AA"))


def test_G4_card_then_badge_within_the_window_make_one_presentation():
    p = _holding_pairing()
    assert p.feed(control("AA01", 0)) == []  # held: its holder must show a badge
    [out] = p.feed(badge("BB01", 15))
    assert (out.uid, out.reader_kind, out.mono_ns) == ("AA01", "control", 0)
    assert (out.badge_uid, out.badge_mono_ns) == ("BB01", 15 * S)
    assert p.holding is None


def test_G4_card_alone_is_released_when_the_window_passes_badge_missing():
    p = _holding_pairing()
    p.feed(control("AA01", 0))
    assert p.expire(15 * S) == []
    [alone] = p.expire(15 * S + 1)
    assert (alone.uid, alone.badge_uid) == ("AA01", None)


def test_G4_card_then_late_badge_releases_the_card_first_and_holds_the_badge():
    p = _holding_pairing()
    p.feed(control("AA01", 0))
    [card] = p.feed(badge("BB01", 16))
    assert (card.uid, card.badge_uid) == ("AA01", None)
    assert p.holding == badge("BB01", 16)


def test_G4_a_second_card_releases_the_held_card_alone():
    p = _holding_pairing()
    p.feed(control("AA01", 0))
    [first] = p.feed(control("AA02", 5))
    assert (first.uid, first.badge_uid) == ("AA01", None)
    [pair] = p.feed(badge("BB02", 6))
    assert (pair.uid, pair.badge_uid) == ("AA02", "BB02")


def test_G4_a_card_that_needs_no_badge_is_decided_at_once():
    p = _holding_pairing()
    [out] = p.feed(control("CC01", 0))
    assert out.uid == "CC01" and p.holding is None


def test_g9_debounce_counts_from_the_last_read_so_a_card_left_on_the_reader_is_one_read():
    p = _pairing()
    assert isinstance(p.feed(control("AA01", 0))[0], Presentation)
    for t in range(2, 400, 2):  # read every 2 s for 6.6 min: each read restarts the window
        assert p.feed(control("AA01", t)) == [Dropped(control("AA01", t))]
    assert p.tracked == 1
    assert isinstance(p.feed(control("AA01", 398 + 3.5))[0], Presentation)  # lifted, shown again


def test_G4_badge_after_a_decided_card_of_another_holder_is_held_then_names_the_card():
    holders = {"AA01": "1001", "BB01": "1001", "AA02": "1002", "BB02": "1002"}
    p = Pairing(debounce_ns=3 * S, pairing_window_ns=15 * S, holder=holders.get)
    [card] = p.feed(control("AA01", 0))  # decided at once (badge optional)
    assert card.uid == "AA01"
    assert p.feed(badge("BB01", 2)) == [Dropped(badge("BB01", 2), reason="paired")]  # own badge
    p.feed(control("AA01", 100))
    assert p.feed(badge("BB02", 105)) == []  # another's badge: held, the next worker may pair
    [alone] = p.expire(121)
    assert (alone.uid, alone.follows_uid, alone.follows_mono_ns) == ("BB02", "AA01", 100 * S)
    p.feed(control("AA01", 200))
    p.feed(badge("BB02", 204))
    [pair] = p.feed(control("AA02", 206))  # badge then own card: a plain pair, no follows
    assert (pair.uid, pair.badge_uid, pair.follows_uid) == ("AA02", "BB02", None)
