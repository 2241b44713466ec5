"""A PostgreSQL server that answers but refuses the connection for good (no such database, no such
role) is a configuration to fix: one line, exit 2 (``central.db.read_failure``), not "not
reachable", exit 1 (retry), which a scheduler would retry forever (a tester's ``pay close --db
postgresql://.../nosuchdb``). A real server of the session's cluster; a closed port stays exit 1."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[2]


def _close(url: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", "--lang", "en", "pay", "close", "--db", url,
                           "--from", "2026-03-01", "--to", "2026-03-31"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("change", ["database", "username"])
def test_no_such_database_or_role_is_exit_2_naming_it(pg_url, change):
    url = make_url(pg_url).set(**{change: "nosuch_x"}).render_as_string(hide_password=False)
    done = _close(url)
    err = done.stderr.strip()
    assert done.returncode == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert '"nosuch_x" does not exist' in err and "not reachable" not in err, err


def test_a_closed_port_is_still_exit_1_worth_a_retry(pg_url):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = _close(make_url(pg_url).set(host="127.0.0.1", port=port).render_as_string(hide_password=False))
    assert done.returncode == 1 and "not reachable" in done.stderr, done.stderr
