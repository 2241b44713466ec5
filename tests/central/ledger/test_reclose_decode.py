"""A month close decodes each stored event once: a scope's first close (every worker rebuilt)
decodes the events whole in step 1 and rebuilds from those; a re-close decodes only their clock
fields, and the whole events of the workers it rebuilds."""

from __future__ import annotations

from sqlalchemy import update

from central.ledger import reclose
from central.ledger.tables import close_digests
from tests.central.pay.test_incremental_close import _assert_as_the_full_path, _close, month  # noqa: F401


def test_a_first_close_decodes_the_events_once_and_a_reclose_only_their_clocks(month, mocker):
    engine = month[0]
    clocks, whole = mocker.spy(reclose, "decode_clocks"), mocker.spy(reclose, "decode_taps")
    first = _close(*month)
    assert (clocks.call_count, whole.call_count) == (0, 1) and first.rebuilt == first.workers
    events = len(whole.spy_return)
    again = _close(*month)
    assert (clocks.call_count, whole.call_count) == (1, 1) and again.rebuilt == 0
    assert len(clocks.spy_return) == events
    with engine.begin() as conn:  # one worker's digest lost: a re-close, not a first close
        conn.execute(update(close_digests).where(close_digests.c.kind == "shifts")
                     .where(close_digests.c.registration == "100000").values(input_digest="x"))
    third = _close(*month)
    assert (clocks.call_count, whole.call_count) == (2, 2) and third.rebuilt == 1
    assert len(whole.spy_return) < events  # that worker's events only
    _assert_as_the_full_path(*month)
