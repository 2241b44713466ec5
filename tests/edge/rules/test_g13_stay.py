"""G13 as amended (RULES.md; operational, with G9: 83.611 arts. 9, 20 b, e) against the pure engine:
while the clock is untrusted a stay is measured only on the monotonic clock of the boot that
admitted the worker; a read by a worker whose open shift here was admitted in another boot is an
EXIT flagged CLOCK_UNTRUSTED, never "already aboard"; an estimate never swallows an exit.

The power cut of issue 31: worker 1001 dispatched 07-13, admitted at 07:13:00 (trusted clock, boot
A). The gate loses power and boots (boot B) at 1970; its estimate is the last trusted time plus the
monotonic time since boot B started: 07:13:00 + 5 s = 07:13:05. G9 alone reads 07:13:05 - 07:13:00 =
5 s < min_stay_minutes (5 min) and shows ALREADY ABOARD (the shift stays open, paid with no exit):
that is the behaviour these tests refuse.
"""

from __future__ import annotations

import datetime as dt

from edge.rules.model import Flag, Outcome
from edge.rules.rulebook import G8Settings, GateRulebook
from tests.edge.rules.conftest import local

MIN = 60_000_000_000  # one minute of monotonic time, ns
BOOT_A_ADMIT_NS = 900 * MIN  # boot A's monotonic clock at the admit (15 h after that boot)


def _admitted_at_0713(port) -> str:
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    admit = port.read(uid, local(7, 13), boot="boot-A", mono_ns=BOOT_A_ADMIT_NS)
    assert admit.outcome is Outcome.ADMIT
    shift = port.presence.open_shifts["1001"]
    assert (shift.boot_id, shift.admit_mono_ns) == ("boot-A", BOOT_A_ADMIT_NS)
    return uid


def test_g13_a_read_after_a_power_cut_is_an_exit_flagged_clock_untrusted_not_already_aboard(port):
    uid = _admitted_at_0713(port)
    # boot B: estimate 07:13:05 (5 s after the admit), monotonic 5 s since boot B started
    d = port.read(uid, local(7, 13, 5), boot="boot-B", mono_ns=5_000_000_000, estimated=True)
    assert d.outcome is Outcome.EXIT  # today: ABOARD ("entrada registrada às 07:13; nada foi alterado")
    # G8 (warn mode) fails on the clock; no EARLY_EXIT from an estimate (the true time is unknown:
    # 07:13:05 would read as 5h46 before 13:00)
    assert d.flags == (Flag.CLOCK_UNTRUSTED,) and d.rules_failed == ("G8",)
    assert d.message_pt == ("SAÍDA — turno encerrado (07-13); relógio não sincronizado; entrada "
                            "registrada às 07:13, antes do reinício do portaló: a hora da saída será "
                            "situada pelo escritório. [G8]")
    assert "before the gate restarted: the office will place the exit's time" in d.message_en
    assert port.presence.open_shifts == {}  # the shift is closed: the office places the exit
    assert port.presence.last_end["1001"] == local(7, 13, 5)


def test_g13_also_when_g8_is_in_deny_mode_and_when_the_shift_has_no_known_boot(port):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    port.read(uid, local(7, 13), boot=None)  # e.g. a shift read back from the store file
    deny_mode = GateRulebook(g8=G8Settings(stale_mode="deny"))
    d = port.read(uid, local(7, 13, 5), boot="boot-B", mono_ns=5_000_000_000, estimated=True,
                  rulebook=deny_mode)
    assert d.outcome is Outcome.EXIT and Flag.CLOCK_UNTRUSTED in d.flags  # an exit is never refused


def test_g13_in_the_same_boot_the_stay_is_measured_on_the_monotonic_clock(port):
    uid = _admitted_at_0713(port)
    # Same boot A, clock untrusted, the estimate runs 2 h ahead (09:15) but only 2 min of
    # monotonic time passed: 2 min < 5 min -> ALREADY ABOARD (today: EXIT by the wall estimate).
    d = port.read(uid, local(9, 15), boot="boot-A", mono_ns=BOOT_A_ADMIT_NS + 2 * MIN, estimated=True)
    assert d.outcome is Outcome.ABOARD and d.reasons == ("G8.clock", "G9.aboard")
    assert d.message_pt == ("JÁ A BORDO — relógio não sincronizado; entrada registrada às 07:13; nada "
                            "foi alterado (permanência mínima 5 min). [G8]")
    assert "1001" in port.presence.open_shifts
    # Same boot, the estimate says 07:13:30 (30 s: ABOARD by the wall today), monotonic 6 min:
    # 6 min >= 5 min -> EXIT, no EARLY_EXIT from the estimate
    d = port.read(uid, local(7, 13, 30), boot="boot-A", mono_ns=BOOT_A_ADMIT_NS + 6 * MIN,
                  estimated=True)
    assert d.outcome is Outcome.EXIT and d.flags == (Flag.CLOCK_UNTRUSTED,)
    assert port.presence.open_shifts == {}


def test_g13_a_plausible_but_unsynchronised_clock_measures_the_stay_on_the_monotonic_clock_too(port):
    uid = _admitted_at_0713(port)
    # not estimated (a plausible reading, NTP not synchronised): the wall says 12:40, 5h27 after
    # the admit, but boot B cannot measure the stay: EXIT + CLOCK_UNTRUSTED; the reading is a real
    # one, so G9's EARLY_EXIT stands (12:40 < 13:00 - 10 min tolerance; 0h20 early)
    d = port.read(uid, local(12, 40), boot="boot-B", mono_ns=3 * MIN, trusted=False)
    assert d.outcome is Outcome.EXIT
    assert d.flags == (Flag.CLOCK_UNTRUSTED, Flag.EARLY_EXIT) or d.flags == (
        Flag.EARLY_EXIT, Flag.CLOCK_UNTRUSTED)


def test_g13_a_trusted_clock_measures_the_stay_on_the_wall_across_boots(port):
    uid = _admitted_at_0713(port)
    # A restart with a trusted clock: 07:15 - 07:13 = 2 min < 5 min -> ALREADY ABOARD (G9 as before)
    d = port.read(uid, local(7, 15), boot="boot-B", mono_ns=MIN)
    assert d.outcome is Outcome.ABOARD and d.flags == ()
    d = port.read(uid, local(13, 2), boot="boot-B", mono_ns=400 * MIN)
    assert d.outcome is Outcome.EXIT and d.flags == () and d.dispatch.period == "07-13"


def test_g13_an_estimate_before_the_admit_in_another_boot_is_still_an_exit(port):
    uid = _admitted_at_0713(port)
    d = port.read(uid, local(7, 12) + dt.timedelta(seconds=59), boot="boot-B", mono_ns=MIN,
                  estimated=True)
    assert d.outcome is Outcome.EXIT and Flag.CLOCK_UNTRUSTED in d.flags
