"""``portgate pay close`` shows a progress bar of the close's steps (``central.pay.close.STEPS``) on
stderr: drawn in place when stderr is a terminal (a real pseudo-terminal here), one line per step
with ``--progress`` when it is not, nothing otherwise; stdout keeps only its JSON line. A close that
fails stops the bar and still says why."""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import update

from central.db import make_engine
from central.ledger.schema import events
from central.pay.close import STEPS, close_month
from central.pay.cli import load_setup
from tests.central.pay.test_pay_cli import _shifts_ledger
from testkit.sqlite_copies import copy_made_once

ROOT = Path(__file__).resolve().parents[3]
LABEL = "fechando o mês"  # the command line's language (PORTGATE_LANG), pt-BR by default: one language
NAMES = ("marcações lidas", "entradas resumidas", "turnos gravados conferidos", "turnos refeitos", "turnos gravados",
         "pagamentos conferidos", "turnos pagos", "demonstrativos gravados", "resumos gravados")
NAMES_EN = ("taps read", "inputs digested", "stored shifts checked", "shifts rebuilt", "shifts stored",
            "pay inputs checked", "shifts paid", "statements stored", "digests recorded")
ARGS = ("pay", "close", "--from", "2026-03-01", "--to", "2026-03-31", "--at", "2026-04-05T12:00:00+00:00")


@pytest.fixture
def ledger(tmp_path) -> str:
    """A SQLite ledger of its own holding SHIFTS' taps: a copy of the one ``_shifts_ledger`` migrates
    and fills once per process (``testkit.sqlite_copies``)."""
    copy_made_once("pay-close-shifts", lambda path: _shifts_ledger(f"sqlite:///{path}"), tmp_path / "ledger.db")
    return f"sqlite:///{tmp_path / 'ledger.db'}"


def _portgate(url: str, *extra: str, stderr_tty: bool = False, lang: str = "pt") -> tuple[int, str, str]:
    """Run the real command; stderr on a pseudo-terminal or a pipe. ``(exit status, stdout, stderr)``."""
    cmd = [sys.executable, "-m", "app.cli", *ARGS, "--db", url, *extra]
    env = {**os.environ, "PORTGATE_LANG": lang}
    if not stderr_tty:
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)
        return done.returncode, done.stdout, done.stderr
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL,
                                cwd=ROOT, env=env)
    finally:
        os.close(slave)
    chunks = []
    try:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError as exc:  # the slave side closed: the command is done with stderr
                if exc.errno != errno.EIO:
                    raise
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    out = proc.stdout.read().decode()
    proc.stdout.close()
    return proc.wait(timeout=120), out, b"".join(chunks).decode()


def test_the_bar_is_drawn_on_a_terminal_and_stdout_keeps_its_json_line(ledger):
    code, out, err = _portgate(ledger, stderr_tty=True)
    assert code == 0, err
    (line,) = out.splitlines()
    assert json.loads(line)["paid"] == 4
    assert LABEL in err and f"{len(STEPS)}/{len(STEPS)}" in err
    assert "\r" in err  # redrawn in place
    for name in NAMES:
        assert name in err
    assert LABEL not in out and "closing the month" not in err and "taps read" not in err


def test_no_bar_when_stderr_is_not_a_terminal(ledger):
    code, out, err = _portgate(ledger)
    assert code == 0 and json.loads(out)["paid"] == 4
    assert LABEL not in err and not any(name in err for name in NAMES)


def test_progress_forces_one_line_per_step_where_stderr_is_not_a_terminal(ledger):
    code, out, err = _portgate(ledger, "--progress")
    assert code == 0 and json.loads(out)["rebuilt"] == 4
    lines = err.splitlines()
    assert lines[0] == LABEL
    assert len(lines) == 1 + len(STEPS)
    for n, (line, name) in enumerate(zip(lines[1:], NAMES, strict=True), start=1):
        assert line.startswith(LABEL) and f"{n}/{len(STEPS)}" in line and line.endswith(name)
        assert " / " not in line  # one language (was: "fechando o mês / closing the month")
    # a re-close goes through every step too (each skipped worker: nothing to do)
    code, out, err = _portgate(ledger, "--progress")
    assert code == 0 and json.loads(out)["pay_skipped"] == 4
    assert err.splitlines()[-1].endswith(NAMES[-1]) and f"{len(STEPS)}/{len(STEPS)}" in err


def test_the_bar_speaks_english_with_portgate_lang_en(ledger):
    code, out, err = _portgate(ledger, "--progress", lang="en")
    assert code == 0 and json.loads(out)["rebuilt"] == 4
    lines = err.splitlines()
    assert lines[0] == "closing the month" and len(lines) == 1 + len(STEPS)
    for line, name in zip(lines[1:], NAMES_EN, strict=True):
        assert line.startswith("closing the month") and line.endswith(name)
    assert not any(name in err for name in (LABEL, *NAMES))
    code, out, err = _portgate(ledger, stderr_tty=True, lang="en")
    assert code == 0 and "closing the month" in err and "9/9" in err and LABEL not in err


def test_a_failing_close_stops_the_bar_and_says_why(ledger):
    engine = make_engine(ledger)
    with engine.begin() as conn:
        conn.execute(update(events).where(events.c.id == 1).values(raw=b"{not json"))
    engine.dispose()
    code, out, err = _portgate(ledger, "--progress")
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert lines[0] == LABEL and "ledger event id 1" in lines[-1]
    assert not any(STEPS[0] in line for line in lines[1:])  # the first step never finished
    code, out, err = _portgate(ledger, stderr_tty=True)
    assert code == 2 and "ledger event id 1" in err.splitlines()[-1]


def test_close_month_tells_each_step_once_in_order(ledger):
    engine = make_engine(ledger)
    _port, rulebook, calendar = load_setup(None)
    for _ in range(2):  # a first close, then a re-close
        told: list[str] = []
        close_month(engine, dt.date(2026, 3, 1), dt.date(2026, 3, 31), ZoneInfo("America/Sao_Paulo"),
                    rulebook, calendar, now=dt.datetime(2026, 4, 5, 12, tzinfo=dt.UTC), progress=told.append)
        assert told == list(STEPS)
    engine.dispose()
