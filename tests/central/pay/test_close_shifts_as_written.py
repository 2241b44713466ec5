"""A first close digests the shifts it wrote (``central.ledger.reclose._as_written``) instead of
reading them back, on SQLite and PostgreSQL: the digests it stores are byte for byte those of the
rows read back; a write by someone else during the close (PostgreSQL: another session commits a
shift edit; the change counters are not the close's own), or a shift id column in a collation
other than C (``reclose.sorts_as_python``: the whole digest is in the database's order), makes it
read them back, and the digests are still those of the rows read back."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, select, update

import central.ledger.reclose as reclose
import central.pay.close as close
from central.ledger.reclose import scope_key, stored_digests
from central.ledger.tables import shifts
from tests.central.ledger.test_rebuild_equality import Z
from tests.central.pay.test_close_as_written import _stored_against_read_back
from tests.central.pay.test_close_counters import EDITED
from tests.central.pay.test_incremental_close import (  # noqa: F401 (month: a fixture)
    WORKERS, _assert_as_the_full_path, _close, month)


def _shifts_against_read_back(engine, first, last) -> None:
    """The shift digests the last close stored (whole and per worker) equal the ones of the stored
    rows read back now."""
    scope = scope_key(first, last, Z)
    with engine.connect() as conn:
        rows, flags = reclose._stored_rows(conn, first, last)
        whole = stored_digests(conn, scope, reclose.WHOLE_SHIFTS)
        per_worker = {reg: o for reg, (_i, o) in stored_digests(conn, scope, "shifts").items()
                      if o != reclose.EMPTY}
    assert rows and flags and whole == {"*": (reclose.EMPTY, reclose._whole_digest(rows, flags))}
    by_reg, flags_by = reclose._by_worker(rows, flags)
    assert per_worker == {reg: reclose._output_digest(own, flags_by.get(reg, ())) for reg, own in by_reg.items()}


def test_sqlite_and_a_c_collation_sort_as_python(month):
    with month[0].connect() as conn:
        assert reclose.sorts_as_python(conn, "shifts", "shift_id")
        assert reclose.sorts_as_python(conn, "statements", "statement_id")


def test_a_first_close_digests_the_shifts_it_wrote_as_read_back(month, mocker):
    engine, first, last = month[:3]
    read = mocker.spy(reclose, "_stored_rows")
    written = mocker.spy(reclose, "_as_written")
    done = _close(*month)
    assert done.rebuilt == WORKERS and done.read == 0
    assert read.call_count == 1  # step 3's (nothing stored yet), not after the writes
    rows, flags = written.spy_return
    assert len(rows) == done.shifts and flags
    _shifts_against_read_back(engine, first, last)
    _stored_against_read_back(engine, first, last)
    assert _close(*month).read == 0
    _assert_as_the_full_path(*month)


# concurrent writers only on PostgreSQL (SQLite has one writer: a second waits)
@pytest.mark.parametrize("migrated_url, others_write", [("sqlite", False), ("postgresql", False), ("postgresql", True)],
                         indirect=["migrated_url"])
def test_a_worker_whose_shifts_are_gone_is_digested_as_written_unless_someone_else_writes(
        month, mocker, others_write):
    engine, first, last = month[:3]
    _close(*month)
    owner = EDITED.split("/")[0]
    with engine.begin() as conn:  # the worker's stored shifts deleted behind the ledger's back
        conn.execute(delete(shifts).where(shifts.c.registration == owner))
    real = reclose._reconstruct

    def meanwhile(*args, **kwargs):  # another session edits another worker's shift meanwhile
        with engine.begin() as conn:
            conn.execute(update(shifts).where(shifts.c.shift_id == conn.execute(
                select(shifts.c.shift_id).where(shifts.c.registration != owner).limit(1)).scalar_one())
                .values(post="edited meanwhile"))
        return real(*args, **kwargs)

    if others_write:
        mocker.patch.object(reclose, "_reconstruct", meanwhile)
    written = mocker.spy(reclose, "_as_written")
    read = mocker.spy(reclose, "_stored_rows")
    done = _close(*month)
    assert done.rebuilt == 1 and read.call_count == (2 if others_write else 1)
    assert (written.spy_return is None) == others_write
    if others_write:  # the edit made meanwhile is in the whole digest; its worker's is the earlier
        scope = scope_key(first, last, Z)
        with engine.connect() as conn:
            rows, flags = reclose._stored_rows(conn, first, last)
            assert stored_digests(conn, scope, reclose.WHOLE_SHIFTS)["*"][1] == reclose._whole_digest(rows, flags)
        return
    _shifts_against_read_back(engine, first, last)
    assert _close(*month).read == 0
    _assert_as_the_full_path(*month)


@pytest.mark.parametrize("migrated_url", ["postgresql"], indirect=True)  # column collations: PostgreSQL's
def test_another_collation_sends_a_first_close_reading_back(month, mocker):
    engine, first, last = month[:3]
    with engine.begin() as conn:
        icu = conn.exec_driver_sql("SELECT collname FROM pg_collation WHERE collprovider = 'i' "
                                   "AND collname = 'und-x-icu'").scalar()
        # Debian's postgresql-15 (scripts/setup.sh) is built with ICU: a server without it is a set-up fault
        assert icu is not None, "the test PostgreSQL has no ICU collation und-x-icu (Debian's postgresql-15 has)"
        conn.exec_driver_sql('ALTER TABLE shifts ALTER COLUMN shift_id TYPE varchar(160) COLLATE "und-x-icu"')
        conn.exec_driver_sql('ALTER TABLE statements ALTER COLUMN statement_id TYPE varchar(200) '
                             'COLLATE "und-x-icu"')
    with engine.connect() as conn:
        assert not reclose.sorts_as_python(conn, "shifts", "shift_id")
        assert not reclose.sorts_as_python(conn, "statements", "statement_id")
    shifts_written = mocker.spy(reclose, "_as_written")
    pay_written = mocker.spy(close, "_as_written")
    shifts_read = mocker.spy(reclose, "_stored_rows")
    pay_read = mocker.spy(close, "_current_rows")
    done = _close(*month)
    assert done.rebuilt == WORKERS and done.read > 0
    assert (shifts_written.spy_return, pay_written.spy_return) == (None, None)
    assert (shifts_read.call_count, pay_read.call_count) == (2, 2)
    _shifts_against_read_back(engine, first, last)
    _stored_against_read_back(engine, first, last)
    assert _close(*month).read == 0
