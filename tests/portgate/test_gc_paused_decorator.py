"""portgate.gctune.paused() as a decorator (the crew hours book's builders): the cyclic collector is
off during the call and as it was after it."""

from __future__ import annotations

import gc

import pytest

from portgate.gctune import paused


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_off_during_the_call_and_on_again_after_it(collector_on):
    seen = []
    assert paused()(lambda: seen.append(gc.isenabled()) or "out")() == "out"
    assert seen == [False] and gc.isenabled()


def test_on_again_after_the_call_raises(collector_on):
    def fails():
        raise ValueError("bad row")

    with pytest.raises(ValueError, match="bad row"):
        paused()(fails)()
    assert gc.isenabled()


def test_left_off_when_the_caller_had_it_off_and_nested_calls_keep_it_off(collector_on):
    seen = []
    inner = paused()(lambda: seen.append(gc.isenabled()))
    paused()(lambda: (inner(), seen.append(gc.isenabled())))()
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    paused()(lambda: None)()
    assert not gc.isenabled()

