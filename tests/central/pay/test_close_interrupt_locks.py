"""``portgate pay close`` interrupted while PostgreSQL's first close has commands on the server on
both of its connections: the test holds a real table lock (``LOCK TABLE ... IN SHARE MODE``) that
stops the shift half's writes (``shifts``) and, in one case, the pay half's COPY of the statement
lines, sends the real signal once ``pg_stat_activity`` shows the close's backends there, and keeps
the locks until the process has ended: the close ends as interrupted (one line, exit 130/143)
without waiting for the shift half's writes, whose command is cancelled (``central.pay.close_behind``:
was: the interrupted close waited for the shift half to finish, forever here); nothing is stored,
no backend of the close is left, and the next close stores everything (issue 32, docs/performance.md,
fourteenth pass)."""

from __future__ import annotations

import json
import os
import signal as signals
import subprocess
import sys

import pytest
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.pool import NullPool

from central.ledger.tables import shifts, statements
from testkit.wait import wait_until
from tests.central.pay.test_close_interrupts import AT, DRIVER, MARCH, ROOT, _close, ledger  # noqa: F401

#: The close's backends as the test waits for them: ``(shift half waiting on the lock, pay half)``.
_SEEN = """SELECT pid, state, wait_event_type, query FROM pg_stat_activity
           WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> :locker"""


def _backends(engine, locker: int) -> list[tuple]:
    """The other backends of the test's database: ``(pid, state, wait_event_type, query)``."""
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(_SEEN), {"locker": locker})]


def _both_halves_there(engine, locker: int, lines_locked: bool):
    """True once the shift half waits on the lock and the pay half is where the case wants it:
    waiting on the lock in its COPY of the statement lines, or (not ``lines_locked``) done with it
    and waiting for the shift half's commit (its transaction idle)."""
    rows = _backends(engine, locker)
    waiting = [r for r in rows if r[2] == "Lock"]
    lines = [r for r in rows if "statement_lines" in (r[3] or "")]
    if lines_locked:
        return len(waiting) == 2 and any(r in waiting for r in lines)
    return len(waiting) == 1 and any(r[1] == "idle in transaction" for r in lines)


def _count(engine, table) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


@pytest.mark.parametrize("migrated_url", ["postgresql"], indirect=True)  # the shift half's thread
@pytest.mark.parametrize(("signal", "status", "locked"), [
    ("SIGINT", 130, "shifts, statement_lines"),  # both halves inside a command
    ("SIGTERM", 143, "shifts"),  # the pay half waiting for the shift half's commit
])
def test_an_interrupt_while_the_shift_half_waits_on_the_server_cancels_it(ledger, signal, status, locked):
    engine = create_engine(ledger, poolclass=NullPool)
    locker = engine.connect()
    try:
        locker.execute(text(f"LOCK TABLE {locked} IN SHARE MODE"))
        pid = locker.execute(text("SELECT pg_backend_pid()")).scalar_one()
        proc = subprocess.Popen([sys.executable, "-c", DRIVER, "none", "SIGINT", "pay", "close", "--db", ledger,
                                 *MARCH, *AT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                env={**os.environ, "PORTGATE_LANG": "pt"})
        try:
            wait_until(lambda: _both_halves_there(engine, pid, "statement_lines" in locked), 180,
                       what="the close's two halves at the locks")
            proc.send_signal(getattr(signals, signal))
            try:
                out, err = proc.communicate(timeout=180)  # the locks still held: the shift half cancelled
            except subprocess.TimeoutExpired:
                pytest.fail(f"the interrupted close still ran 180 s later, the locks held: {_backends(engine, pid)}")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        locker.rollback()
        assert (proc.returncode, out) == (status, ""), err
        assert err.strip().splitlines()[-1] == "interrompido" and "Traceback" not in err, err
        assert _count(engine, statements) == _count(engine, shifts) == 0  # both halves rolled back
        wait_until(lambda: not _backends(engine, pid), 60, what="the close's backends to end")
    finally:
        locker.close()
        engine.dispose()
    code, out, err = _close(ledger, "none", "SIGINT")
    assert code == 0, err
    engine = create_engine(ledger, poolclass=NullPool)
    try:
        assert json.loads(out)["written"] == _count(engine, statements) > 0 and _count(engine, shifts) > 0
    finally:
        engine.dispose()
