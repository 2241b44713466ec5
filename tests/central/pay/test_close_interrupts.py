"""``portgate pay close`` stopped by Ctrl-C (SIGINT) or SIGTERM, through the real command in its own
process (``app.cli.main`` with one test seam: ``DRIVER`` sends the process a real signal at a named
step of the close): before the statements' commit the close rolls back and says "interrompido" /
"aborted" in one line (exit 130, SIGTERM 143); an interrupt inside SQLite's bulk INSERT (the
connection closed under it) is the same line, not a ``sqlite3.ProgrammingError`` traceback, and
so is one inside PostgreSQL's COPY (the connection invalidated, not rolled back); once
the statements are committed the close is reported (its JSON line and a line saying the interrupt
came after), and a second interrupt there says the close is stored, not "aborted"; after its counts
are printed an interrupt changes nothing (exit 0). SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select

from central.db import make_engine
from central.ledger.tables import statements
from tests.central.ledger.test_rebuild_equality import _bench
from tests.central.pay.test_pay_cli import _shifts_ledger

ROOT = Path(__file__).resolve().parents[3]
MARCH = ("--from", "2026-03-01", "--to", "2026-03-31")
AT = ("--at", "2026-04-05T12:00:00+00:00")

# The test seam: ``python -c DRIVER STEP SIGNALS ARGS...`` runs ``app.cli.main(ARGS)`` after making
# the close send the process SIGNALS (comma-separated names) at STEP: ``lines`` (SQLite: inside the
# driver's bulk INSERT of the statement lines; elsewhere just before the lines are written, in the
# statements' transaction), ``digests`` (after the statements' commit, before the digests) or
# ``later`` (as the shift inputs are digested: on PostgreSQL's first close on the shift half's
# thread, once the pay half writes), ``copying`` (PostgreSQL: in the main thread inside psycopg's
# start of the statement lines' COPY, once the server has answered it: the connection left in COPY
# mode, where a real signal lands only by chance); any other STEP: none (a plain close).
DRIVER = """
import os, signal, sys
import central.pay.close as close
from app.cli import main

step, names, args = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]

def send():
    for name in names:
        os.kill(os.getpid(), getattr(signal, name))

if step == "digests":
    record = close._record_pay_digests
    def recording(*a, **k):
        send()
        return record(*a, **k)
    close._record_pay_digests = recording
elif step == "lines":
    from sqlalchemy.engine.default import DefaultDialect
    many, save = DefaultDialect.do_executemany, close.save_statements
    def executemany(self, cursor, statement, parameters, context=None):
        if "INSERT INTO statement_lines" in statement:
            send()
        return many(self, cursor, statement, parameters, context)
    def saving(*a, before_lines, **k):
        def lines(*b):
            before_lines(*b)
            if a[0].dialect.name != "sqlite":
                send()
        return save(*a, before_lines=lines, **k)
    DefaultDialect.do_executemany = executemany
    close.save_statements = saving
elif step == "later":  # the shift inputs digested (PostgreSQL's first close: beside the pay writes)
    import central.ledger.close_inputs as inputs
    digest = inputs.digest_inputs
    def digesting(*a):
        send()
        return digest(*a)
    inputs.digest_inputs = digesting
elif step == "copying":  # the server has answered the COPY: the client is about to return from it
    from psycopg import Cursor
    start = Cursor._start_copy_gen
    def starting(self, statement, params=None):
        done = yield from start(self, statement, params)
        if "statement_lines" in str(statement):
            send()
        return done
    Cursor._start_copy_gen = starting
elif step == "disposing":  # the close stored, its engine's pool being closed
    from sqlalchemy.engine import Engine
    dispose, closing, stored = Engine.dispose, close.close_month, []  # close_cli imports it when run
    def closed(*a, **k):
        done = closing(*a, **k)
        stored.append(done)
        return done
    def disposing(self, *a, **k):
        if stored:  # the close's own engine, once the close returned (not the set-up's engines)
            send()
        return dispose(self, *a, **k)
    close.close_month, Engine.dispose = closed, disposing
elif step == "ended":  # the close's ``with Interrupts()`` left: its counts printed, the process ending
    import portgate.interrupts as interrupts
    leave = interrupts.Interrupts.__exit__
    def leaving(self, *exc):
        leave(self, *exc)
        send()
        ignored = int(next(x for x in open("/proc/self/status") if x.startswith("SigIgn:")).split()[1], 16)
        print("SigIgn", ignored, file=sys.stderr)  # what the kernel ignores: kept through the finalization
    interrupts.Interrupts.__exit__ = leaving
    sys.argv = ["portgate", *args]
    sys.exit(main())  # the portgate program itself (no argv): its held work is kept to its end
sys.exit(main(args))
"""


@pytest.fixture
def ledger(migrated_url) -> str:
    """A migrated ledger (SQLite, PostgreSQL) holding March's taps of ``test_pay_cli.SHIFTS``."""
    _shifts_ledger(migrated_url)
    return migrated_url


def _close(url: str, step: str, signals: str, *extra: str, lang: str = "pt",
           command: tuple[str, ...] = ("pay", "close")) -> tuple[int, str, str]:
    """Run ``pay close`` (or ``command``) of March on ``url`` with ``signals`` sent at ``step``:
    ``(exit status, stdout, stderr)``."""
    env = {**os.environ, "PORTGATE_LANG": lang}
    when = AT if command == ("pay", "close") else ()
    done = subprocess.run([sys.executable, "-c", DRIVER, step, signals, *command, "--db", url, *MARCH,
                           *when, *extra], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    return done.returncode, done.stdout, done.stderr


def _current(url: str) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(statements).where(
                statements.c.superseded_at.is_(None))).scalar_one()
    finally:
        engine.dispose()


@pytest.mark.parametrize(("signal", "status", "line"), [("SIGINT", 130, "interrompido"),
                                                        ("SIGTERM", 143, "interrompido")])
def test_an_interrupt_while_the_statements_are_written_rolls_them_back_in_one_line(ledger, signal, status, line):
    """SQLite: the interrupt inside the bulk INSERT closes the connection under ``counted_in_bulk``
    (was: ``sqlite3.ProgrammingError: Cannot operate on a closed database``, exit 1); SIGTERM (was:
    exit 143, nothing said) rolls back alike."""
    code, out, err = _close(ledger, "lines", signal)
    assert (code, out) == (status, ""), err
    assert err.strip().splitlines()[-1] == line, err
    assert "Traceback" not in err and "Error" not in err
    assert _current(ledger) == 0  # nothing of the pay half stored
    code, out, err = _close(ledger, "none", "SIGINT")  # no step named: a clean close afterwards
    assert code == 0, err
    assert json.loads(out)["written"] == _current(ledger) > 0


def test_ctrl_c_inside_sqlites_bulk_insert_is_the_same_line_not_a_closed_database_traceback(tmp_path):
    """A month of 300 shifts: the statements and their lines go in by the bulk path (``BULK_MIN``),
    whose trigger is put back in a ``finally`` (``central.ledger.changes.counted_in_bulk``); the
    interrupt inside the driver's INSERT closed the connection under it (was: ``sqlite3.ProgrammingError:
    Cannot operate on a closed database``, exit 1)."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    bench = _bench()
    bench.insert_month(url, bench.month_events(12, 25, random.Random(7)))
    code, out, err = _close(url, "lines", "SIGINT")
    assert (code, out) == (130, ""), err
    assert err.strip().splitlines()[-1] == "interrompido" and "Traceback" not in err
    assert _current(url) == 0
    code, out, err = _close(url, "lines", "SIGTERM", command=("pay",))  # pay --db alike (was: 143, silent)
    assert (code, out) == (143, ""), err
    assert err.strip().splitlines()[-1] == "interrompido" and "Traceback" not in err
    assert _current(url) == 0
    code, out, err = _close(url, "none", "SIGINT")
    assert code == 0 and json.loads(out)["written"] == _current(url) == 300, err


def test_an_interrupt_in_english_says_aborted(ledger):
    code, out, err = _close(ledger, "lines", "SIGTERM", lang="en")
    assert (code, out) == (143, ""), err
    assert err.strip().splitlines()[-1] == "aborted"


@pytest.mark.parametrize("signal", ["SIGINT", "SIGTERM"])
def test_an_interrupt_after_the_commit_lets_the_close_finish_and_report(ledger, signal):
    """Was: "aborted", exit 130, no JSON line, while the statements were stored."""
    code, out, err = _close(ledger, "digests", signal)
    assert code == 0, err
    assert json.loads(out)["written"] == _current(ledger) > 0
    assert err.strip().splitlines()[-1] == ("interrupção recebida depois de gravar o fechamento: ele terminou e o "
                                            "resultado acima está completo")
    assert "interrompido\n" not in err and "Traceback" not in err
    code, out, _err = _close(ledger, "none", "SIGINT")
    assert json.loads(out)["pay_skipped"] == 4  # its digests were recorded: the re-close skips all


@pytest.mark.parametrize("signal", ["SIGINT", "SIGTERM"])
def test_an_interrupt_after_the_close_reported_its_counts_is_no_failure(ledger, signal):
    """A signal after the close's ``with`` (its counts printed, the process tearing down: a tester's
    Ctrl-C right after "9/9" on a large PostgreSQL close) was "aborted", exit 130, or a silent 143,
    for a close stored and reported (and a fresh tester's signal 20-200 ms after the counts, in the
    interpreter's finalization, a silent 143); the ``portgate`` program ignores them to its end at the
    kernel (SIG_IGN): exit 0."""
    code, out, err = _close(ledger, "ended", signal)
    assert code == 0, err
    assert json.loads(out)["written"] == _current(ledger) > 0
    assert "interrompido" not in err and "Traceback" not in err
    [mask] = [int(x.split()[1]) for x in err.splitlines() if x.startswith("SigIgn ")]
    for sig in (2, 15):  # SIGINT, SIGTERM ignored by the kernel (SIG_IGN), not by a Python handler that
        assert mask >> (sig - 1) & 1, (sig, bin(mask))  # the finalization resets (a tester's silent 143)
    code, out, err = _close(ledger, "ended", f"{signal},{signal}")
    assert code == 0, err  # a second one too: the close is stored and reported; SIGKILL still ends it
    assert json.loads(out)["written"] == 0  # the first close stored all: nothing redone


def test_a_second_interrupt_as_the_stored_close_closes_its_pool_says_it_is_stored(ledger):
    """Two signals as the engine of a stored close is disposed (a fresh tester's double Ctrl-C right
    after "8/9": the second one raised from the pool's close, outside the handler that knows the
    close is stored: "interrompido" for 20,000 stored statements). Now the stored close's line."""
    code, out, err = _close(ledger, "disposing", "SIGINT,SIGINT")
    assert (code, out) == (130, ""), err
    assert err.strip().splitlines()[-1].startswith("o fechamento de 01/03/2026 a 31/03/2026 está gravado"), err
    assert "interrompido\n" not in err + "\n" and _current(ledger) > 0


def test_a_second_interrupt_after_the_commit_says_the_close_is_stored(ledger):
    code, out, err = _close(ledger, "digests", "SIGINT,SIGINT")
    assert (code, out) == (130, ""), err
    assert err.strip().splitlines()[-1] == (
        "o fechamento de 01/03/2026 a 31/03/2026 está gravado (seus demonstrativos foram confirmados), "
        "interrompido antes do relatório: rode `portgate pay close` de novo para ver as contagens (o que está "
        "gravado fica)")
    assert "Traceback" not in err
    stored = _current(ledger)
    assert stored > 0
    code, out, err = _close(ledger, "digests", "SIGTERM,SIGTERM", lang="en")
    assert code == 143 and err.strip().splitlines()[-1].startswith(
        "the close of Mar 1, 2026 to Mar 31, 2026 is stored (its statements are committed), interrupted "
        "before its report"), err
    code, out, _err = _close(ledger, "none", "SIGINT")
    assert json.loads(out)["written"] == 0 and _current(ledger) == stored  # nothing to redo


@pytest.mark.parametrize(("signal", "status"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_an_interrupt_as_the_shift_inputs_are_digested_stores_no_statement(ledger, signal, status):
    """PostgreSQL's first close digests the shift inputs on the shift half's thread while the pay
    half writes (``rebuild_changed``'s ``early``); the signal sent from there lands in the main
    thread wherever it is (in the fresh-clone CI run of the thirteenth pass: inside the lines' COPY,
    exit 2; ``test_an_interrupt_inside_the_start_of_the_lines_copy_is_the_interrupt`` places it
    there) and stops the close in one line, no statement stored; the shift half is stopped (a
    commit already under way is kept and the next close checks it), and the next close stores
    every statement. SQLite: the inputs are digested first, alike."""
    code, out, err = _close(ledger, "later", signal)
    assert (code, out) == (status, ""), err
    assert err.strip().splitlines()[-1] == "interrompido" and "Traceback" not in err, err
    assert _current(ledger) == 0
    code, out, err = _close(ledger, "none", "SIGINT")
    assert code == 0, err
    assert json.loads(out)["written"] == _current(ledger) > 0


@pytest.mark.parametrize("migrated_url", ["postgresql"], indirect=True)  # COPY: PostgreSQL's
@pytest.mark.parametrize(("signal", "status"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_an_interrupt_inside_the_start_of_the_lines_copy_is_the_interrupt(ledger, signal, status):
    """The fresh-clone CI failure of the thirteenth pass: the interrupt raised inside psycopg's
    ``cur.copy(...)`` once the server had started the COPY left the connection in COPY mode, the
    rollback on the way out failed (``another command is already in progress``, "Exception during
    reset or similar") and the close said "saving statements failed", exit 2. Now the connection is
    invalidated (``central.ledger.bulk._driver``): one line, the signal's status, nothing stored,
    and the next close stores every statement."""
    code, out, err = _close(ledger, "copying", signal)
    assert (code, out) == (status, ""), err
    assert err.strip().splitlines()[-1] == "interrompido" and "Traceback" not in err, err
    assert "another command" not in err and _current(ledger) == 0
    code, out, err = _close(ledger, "none", "SIGINT")
    assert code == 0, err
    assert json.loads(out)["written"] == _current(ledger) > 0
