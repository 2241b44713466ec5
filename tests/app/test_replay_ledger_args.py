"""``portgate replay --from-ledger`` and ``portgate pay --db`` on a ledger that is not one, cannot be
reached, or with a gate it does not know: one line, no SQL, the project's exit codes (2 for bad data,
1 for a ledger server not reachable yet); real SQLite files and a real closed TCP port."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from central.ledger.migrate import upgrade
from testkit.cli import run_here

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "demo"
ROSTER = ("--workers", str(DEMO / "workers.csv"), "--cards", str(DEMO / "cards.csv"),
          "--escala", str(DEMO / "escala.csv"), "--rulebook", str(ROOT / "config" / "rulebooks" / "gate-default.toml"))


def portgate(*args):
    """The installed command (a Python start): the unreachable ledger's exit 1 and a replay that runs."""
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=120)


def replay(db, *extra):
    """``portgate replay --from-ledger`` through ``app.cli.main`` in this process (``testkit.cli.run_here``)."""
    return run_here(["replay", "--from-ledger", "--date", "2026-03-15", "--db", db, *ROSTER, *extra])


def one_line(done, code, *wanted):
    err = done.stderr.strip()
    assert done.returncode == code, done.stderr
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err and "SELECT" not in err and "[SQL" not in err, err
    for w in wanted:
        assert w in err, err
    return err


@pytest.fixture
def not_a_db(tmp_path):
    path = tmp_path / "passwd"
    path.write_text("root:x:0:0:root:/root:/bin/bash\n" * 50)
    return path


@pytest.fixture
def ledger(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade(url)
    return url


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_replay_of_a_file_that_is_not_a_database_is_exit_2(not_a_db):
    one_line(replay(f"sqlite:///{not_a_db}"), 2, "is not a database")


def test_replay_of_an_unreachable_ledger_is_exit_1_like_pay(tmp_path):
    url = f"postgresql+psycopg://x@127.0.0.1:{_closed_port()}/x"
    one_line(replay(url), 1, "not reachable")
    pay = portgate("pay", "--db", url, "--from", "2026-03-15", "--to", "2026-03-15")
    one_line(pay, 1, "not reachable")


def test_replay_of_a_gate_the_ledger_does_not_know_is_refused(ledger):
    one_line(replay(ledger, "--gate", "g-zzz"), 2, "'g-zzz' is not a known gate")


def test_taps_with_from_ledger_is_refused(ledger):
    one_line(replay(ledger, "--taps", str(DEMO / "taps.csv")), 2, "--taps is not with --from-ledger")


def test_replay_of_a_known_ledger_still_runs(ledger):
    done = portgate("replay", "--from-ledger", "--date", "2026-03-15", "--db", ledger, *ROSTER)  # the installed one
    assert done.returncode == 0, done.stderr
    assert "0 of 0 decision(s) change" in done.stderr


def test_pay_of_a_file_that_is_not_a_database_says_so_not_migration(not_a_db):
    done = run_here(["pay", "--db", f"sqlite:///{not_a_db}", "--from", "2026-03-15", "--to", "2026-03-15"])
    err = one_line(done, 2, "is not a database")
    assert "migration" not in err
