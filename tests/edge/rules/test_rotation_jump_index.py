"""G6 ROTATION_JUMP (83.611 arts. 10, 20 i) found through the escala grouped by period
(``GateView.gate_periods``): the same post, period and registration as the first entry of
``gate_dispatches`` whose period covers the read, whatever the order and overlap of the periods."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random

from edge.rules.model import Flag, group_by_period
from edge.rules.rulebook import GateRulebook
from portgate.records import EscalaEntry

from .conftest import DAY, Port, local

PERIODS = ("01-07", "07-13", "13-19", "19-01", "07-19", "19-07", "06-12")


def _first_covering(view, reg: str, wall: dt.datetime, rb: GateRulebook) -> EscalaEntry | None:
    """The rule as written: walk every dispatch of the gate, the first covering one wins."""
    early = dt.timedelta(minutes=rb.g6.early_tolerance_min)
    for entry in view.gate_dispatches(wall):
        if entry.gate_id != view.gate_id or entry.registration == reg:
            continue
        start, end = entry.bounds(rb.tz)
        if start - early <= wall < end:
            return entry
    return None


def test_group_by_period_keeps_every_entry_with_its_position_in_order():
    port = Port()
    entries = [port.dispatch(str(2000 + i), PERIODS[i % 3], day=DAY + dt.timedelta(days=i % 2))
               for i in range(9)]
    groups = group_by_period(entries)
    assert sorted(pos for g in groups for pos, _e in g) == list(range(9))
    for group in groups:
        assert [pos for pos, _e in group] == sorted(pos for pos, _e in group)
        assert all(entries[pos] is e for pos, e in group)
        assert len({(e.date, e.period) for _pos, e in group}) == 1
    assert [g[0][0] for g in groups] == sorted(g[0][0] for g in groups)
    assert group_by_period([]) == []


def test_rotation_jump_names_the_first_covering_entry_on_random_escalas():
    rng = random.Random(23)
    checked = jumps = 0
    for _round in range(20):
        port = Port()
        regs = [str(1000 + i) for i in range(30)]
        for reg in regs:
            port.worker(reg)
        for _ in range(rng.randrange(0, 25)):  # overlapping periods over three days, shuffled
            port.dispatch(rng.choice(regs[1:]), rng.choice(PERIODS), post=f"p{rng.randrange(4)}",
                          day=DAY + dt.timedelta(days=rng.randrange(-1, 2)))
        rng.shuffle(port.escala)
        view = port.view()
        for _ in range(40):
            at = local(rng.randrange(24), rng.randrange(60)) + dt.timedelta(days=rng.randrange(-1, 2))
            d = port.read(f"AA00{regs[0]}", at, apply=False)  # regs[0] is never dispatched
            expected = _first_covering(view, regs[0], at, port.rulebook)
            checked += 1
            if expected is None:
                assert Flag.ROTATION_JUMP not in d.flags, (at, d.message_pt)
                continue
            jumps += 1
            assert Flag.ROTATION_JUMP in d.flags
            assert (f"o posto {expected.post} ({expected.period}) está escalado para a matrícula "
                    f"{expected.registration}") in d.message_pt
    assert checked == 800 and 100 < jumps < 800  # both branches are exercised


def test_a_read_after_every_period_finds_no_rotation_jump_among_many_dispatches():
    port = Port()
    uid = port.worker("1001")
    for i in range(500):
        port.dispatch(str(5000 + i), "07-13", post=f"p{i}")
    d = port.read(uid, local(20))  # after 07-13 ended: nobody's post covers the read
    assert d.flags == (Flag.NOT_DISPATCHED,)
    d = port.read(uid, local(9))
    assert Flag.ROTATION_JUMP in d.flags and "o posto p0 (07-13) está escalado para a matrícula 5000" in d.message_pt


def test_an_entry_whose_period_is_malformed_is_skipped_as_before():
    port = Port()
    uid = port.worker("1001")
    port.escala.append(dataclasses.replace(port.dispatch("1002", "07-13"), period="7-99"))
    port.escala.reverse()  # the malformed one first
    d = port.read(uid, local(8))
    assert Flag.ROTATION_JUMP in d.flags and "(07-13)" in d.message_pt
