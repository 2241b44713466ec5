"""``central.ledger.bulk.insert_rows`` stores exactly what SQLAlchemy's own insert stores (types
converted by the columns' bind processors), on SQLite and PostgreSQL, and falls back to it when the
statement needs Python-side defaults."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, insert, select
from sqlalchemy.exc import IntegrityError

from central.db import make_engine
from central.ledger.bulk import insert_rows
from central.ledger.migrate import upgrade
from central.ledger.tables import shift_flags, shifts

T0 = dt.datetime(2026, 3, 1, 10, 0, tzinfo=dt.UTC)


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


def _shift(i: int) -> dict:
    return {"shift_id": f"r{i}/s/2026-03-01/07-13", "registration": f"r{i}", "ship": "s",
            "work_date": dt.date(2026, 3, 1), "period": "07-13", "function": "vigia", "berth": "berthed",
            "voyage": None, "post": "p", "gate_id": "g1", "period_start": T0,
            "period_end": T0 + dt.timedelta(hours=6), "admit_at": T0 if i % 2 else None,
            "exit_at": None, "closed_by": "exit", "admit_event_id": None, "exit_event_id": None,
            "meal_worked": bool(i % 3), "held": False, "rebuilt_at": T0}


def test_bulk_rows_read_back_as_the_core_insert_rows(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    with engine.begin() as c:
        insert_rows(c, shifts, [_shift(i) for i in range(0, 10, 2)])
        c.execute(insert(shifts), [_shift(i) for i in range(1, 10, 2)])
        insert_rows(c, shift_flags, [{"shift_id": _shift(1)["shift_id"], "flag": "X", "detail": "d"}])
        insert_rows(c, shift_flags, [])  # nothing to do
    with engine.connect() as c:
        got = {r.shift_id: r._mapping for r in c.execute(select(shifts))}
        flags = c.execute(select(shift_flags.c.shift_id, shift_flags.c.flag)).all()
    engine.dispose()
    bulk, core = got[_shift(2)["shift_id"]], got[_shift(3)["shift_id"]]
    assert type(bulk["period_start"]) is type(core["period_start"])
    assert bulk["period_start"].replace(tzinfo=None) == core["period_start"].replace(tzinfo=None)
    assert bulk["work_date"] == dt.date(2026, 3, 1) and bulk["meal_worked"] is True
    assert bulk["admit_at"] is None and core["admit_at"] is not None
    assert len(got) == 10 and flags == [(_shift(1)["shift_id"], "X")]


def test_a_duplicate_key_fails_the_whole_batch(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    with pytest.raises(IntegrityError), engine.begin() as c:
        insert_rows(c, shifts, [_shift(1), _shift(1)])
    with engine.connect() as c:
        assert c.execute(select(shifts)).all() == []
    engine.dispose()


def test_python_side_defaults_fall_back_to_sqlalchemy(tmp_path):
    md = MetaData()
    t = Table("t", md, Column("id", Integer, primary_key=True), Column("name", String),
              Column("at", DateTime, default=lambda: T0.replace(tzinfo=None)))
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    md.create_all(engine)
    with engine.begin() as c:
        insert_rows(c, t, [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}])
    with engine.connect() as c:
        assert c.execute(select(t.c.at)).scalars().all() == [T0.replace(tzinfo=None)] * 2
    engine.dispose()


def test_sqlite_time_processors_write_the_text_sqlalchemy_writes():
    from zoneinfo import ZoneInfo

    from sqlalchemy.dialects import sqlite

    from central.ledger.bulk import processors

    d = sqlite.dialect()
    ours = dict(zip(("period_start", "work_date"), processors(d, shifts, ("period_start", "work_date"))))
    theirs = {n: shifts.c[n].type.dialect_impl(d).bind_processor(d) for n in ours}
    times = [T0, T0.replace(microsecond=7), dt.datetime(999, 1, 2, 3, 4, 5), dt.datetime(2026, 12, 31, 23, 59, 59, 999999),
             T0.astimezone(ZoneInfo("America/Sao_Paulo")), None]
    times += [T0, T0.replace(tzinfo=None), T0.astimezone(ZoneInfo("America/Sao_Paulo")),
              T0.replace(tzinfo=None) + dt.timedelta(hours=3), T0 + dt.timedelta(hours=3), T0]  # repeats
    assert [ours["period_start"](v) for v in times] == [theirs["period_start"](v) for v in times]
    days = [dt.date(2026, 3, 1), dt.date(5, 1, 9), T0, None]
    assert [ours["work_date"](v) for v in days] == [theirs["work_date"](v) for v in days]


def test_text_with_copy_control_characters_reads_back_unchanged(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    detail = "tab\there\nnew line \\N back\\slash \r ; 'quote' \"dq\" ção"
    with engine.begin() as c:
        insert_rows(c, shifts, [_shift(1)])
        insert_rows(c, shift_flags, [{"shift_id": _shift(1)["shift_id"], "flag": "X", "detail": detail},
                                     {"shift_id": _shift(1)["shift_id"], "flag": "Y", "detail": ""}])
    with engine.connect() as c:
        got = c.execute(select(shift_flags.c.flag, shift_flags.c.detail).order_by(shift_flags.c.id)).all()
    engine.dispose()
    assert got == [("X", detail), ("Y", "")]


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_boolean_processors_bind_what_sqlalchemy_binds(dialect):
    from sqlalchemy.dialects import postgresql, sqlite

    from central.ledger.bulk import processors

    d = (sqlite if dialect == "sqlite" else postgresql).dialect()
    ours = processors(d, shifts, ("held",))[0]
    theirs = shifts.c.held.type.dialect_impl(d).bind_processor(d)
    values = [True, False, None, 1, 0, True, False]
    got, want = [ours(v) for v in values], [theirs(v) for v in values]
    assert got == want and [type(v) for v in got] == [type(v) for v in want]
    for bad in (2, "yes"):
        failures = []
        for proc in (ours, theirs):
            with pytest.raises((TypeError, ValueError)) as err:
                proc(bad)
            failures.append((type(err.value), str(err.value)))
        assert failures[0] == failures[1]
