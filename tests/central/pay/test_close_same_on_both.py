"""The same month closed on SQLite and on PostgreSQL leaves the same output: the same shifts and
flags, the same current statements (ids, versions, totals, flags, hold reasons, times, content
digests) and lines, the same shift input digests and the same close counts, for a first close
and a re-close. (The stored output digests are of the rows as each driver hands them back, text
times on SQLite, so they are compared within a database, not across: test_close_as_written,
test_close_shifts_as_written.)"""

from __future__ import annotations

import datetime as dt
import random
import types
import uuid

from sqlalchemy import select

import testkit.shift_events

from central.db import make_engine
from central.ledger.reclose import scope_key
from central.ledger.store import insert_events, read_shifts
from central.ledger.tables import close_digests, statement_lines, statements
from central.pay.cli import load_setup
from portgate.timeutil import as_utc
from tests.central.ledger.test_rebuild_equality import RECEIVED, Z, _bench, _flagged_events
from tests.central.pay.test_incremental_close import _close


def _utc(row) -> tuple:
    """A row with its times as aware UTC (SQLite hands back naive UTC, PostgreSQL the session's
    zone)."""
    return tuple(as_utc(v) if isinstance(v, dt.datetime) else v for v in row)


def _closed(url: str, monkeypatch) -> dict:
    """Populate ``url`` as the incremental-close tests do (the same event and boot ids on every
    call: a seeded ``uuid4``), close the month twice and return what is stored, in a form that
    does not depend on the database."""
    rng = random.Random(11)
    monkeypatch.setattr(testkit.shift_events, "uuid", types.SimpleNamespace(
        uuid4=lambda: uuid.UUID(int=rng.getrandbits(128), version=4)))
    bench = _bench()
    bench.populate(url, 6, 25, random.Random(7))
    engine = make_engine(url)
    with engine.begin() as conn:
        insert_events(conn, _flagged_events(), RECEIVED)
    _port, rulebook, calendar = load_setup(None)
    month = (engine, bench.FIRST, bench.LAST, rulebook, calendar)
    first, again = _close(*month), _close(*month)
    s, ln, d = statements.c, statement_lines.c, close_digests.c
    with engine.connect() as conn:
        out = {
            "counts": [(r.workers, r.rebuilt, r.shifts_skipped, r.paid, r.pay_skipped, r.shifts, r.statements,
                        r.run.saved.written if r.run.saved else None) for r in (first, again)],
            "shifts": sorted(read_shifts(conn, bench.FIRST, bench.LAST), key=lambda x: x.shift_id),
            "statements": sorted(_utc(r) for r in conn.execute(select(
                s.statement_id, s.shift_id, s.registration, s.rulebook, s.work_day, s.total_cents, s.flags,
                s.service_end, s.due_at, s.hold_reason, s.version, s.digest, s.superseded_at))),
            "lines": sorted(tuple(r) for r in conn.execute(select(
                ln.statement_id, ln.position, ln.rule, ln.article, ln.description, ln.amount_cents))),
            "inputs": dict(conn.execute(select(d.registration, d.input_digest).where(
                d.scope == scope_key(bench.FIRST, bench.LAST, Z), d.kind == "shifts")).all()),
        }
    engine.dispose()
    return out


def test_a_month_closed_on_sqlite_and_on_postgresql_stores_the_same(tmp_path, pg_cluster, monkeypatch):
    lite = _closed(f"sqlite:///{tmp_path / 'ledger.db'}", monkeypatch)
    pg = _closed(pg_cluster.create_database("same_on_both"), monkeypatch)
    assert lite["counts"][0][1] > 0 and lite["counts"][1][1] == 0  # rebuilt all, then none
    assert lite["statements"] and lite["lines"] and len(lite["inputs"]) == lite["counts"][0][0]
    assert any(sh.flags for sh in lite["shifts"])  # the flagged events' shifts are in it
    for key in ("counts", "shifts", "statements", "lines", "inputs"):
        assert lite[key] == pg[key], key
