"""A group commit's pending-flag expiries: one DELETE per batch where a later cutoff covers the
earlier ones, the file ending as if each read's effects had been committed one by one."""

from __future__ import annotations

import datetime as dt

from edge.effects import Effects
from edge.store import Store

from .conftest import GATE, SHIP, T0

# (seconds after T0, uid, flag): raised in order; an old flag the later cutoffs expire, flags
# raised again, and last a read with a clock 30 h behind: its flag, older than the cutoffs before
# it, stays (a single DELETE with the latest cutoff at the end would have removed it)
RAISED = [(-25 * 3600, "0A04A10009", "NOT_DISPATCHED"), (0, "0A04A10001", "LATE_ARRIVAL"),
          (60, "0A04A10002", "NOT_DISPATCHED"), (120, "0A04A10001", "LATE_ARRIVAL"),
          (7200, "0A04A10004", "BORROWED_CARD"), (7260, "0A04A10002", "NOT_DISPATCHED"),
          (-30 * 3600, "0A04A10003", "ROTATION_JUMP")]


def _flags_in_file(store):
    return store._db.execute("SELECT uid, flag, at FROM pending_flags ORDER BY uid, flag").fetchall()


def test_one_expiry_per_batch_leaves_the_file_as_reads_committed_one_by_one(tmp_path):
    one = Store(tmp_path / "one.db", gate_id=GATE, ship=SHIP)
    grouped = Store(tmp_path / "grouped.db", gate_id=GATE, ship=SHIP)
    effects = [Effects(flags=((uid, flag, T0 + dt.timedelta(seconds=s)),)) for s, uid, flag in RAISED]
    one.apply(1, effects[0])
    grouped.apply(1, effects[0])  # a flag in the file before the batch
    for seq, fx in enumerate(effects[1:], start=2):
        one.apply(seq, fx)
    deletes: list[str] = []
    grouped._db.set_trace_callback(lambda sql: deletes.append(sql) if sql.startswith("DELETE") else None)
    with grouped.batch():
        for seq, fx in enumerate(effects[1:], start=2):
            grouped.apply(seq, fx)
        grouped.commit()
    assert _flags_in_file(grouped) == _flags_in_file(one)
    assert [uid for uid, _f, _at in _flags_in_file(one)] == ["0A04A10001", "0A04A10002", "0A04A10003",
                                                             "0A04A10004"]
    assert len(deletes) == 2  # the latest cutoff and the clock-back read's after it; four dropped
    assert {uid: sorted(grouped.pending_flags(uid)) for uid in ("0A04A10001", "0A04A10003", "0A04A10009")} == {
        uid: sorted(one.pending_flags(uid)) for uid in ("0A04A10001", "0A04A10003", "0A04A10009")}
    one.close()
    grouped.close()
