"""``portgate ledger home-port`` on a SQLite ledger whose times were edited by hand
(``office_processes.seen_at = 'garbage'``, ``ledger_home.recorded_at = 'junk'``): one line naming
the table, the column and the value (pt-BR first, English with ``--lang en``), exit 2, no traceback
(``central.ledger.liveness.stored_time``). And a ``seen_at`` far in the future (clock skew) is not a
running office (``liveness.running``); a starting process prunes an unreadable row."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import insert, select, text

from central.db import make_engine
from central.ledger.liveness import STALE_S, Liveness, running
from central.ledger.schema import ledger_home, office_processes
from testkit.cli import run_here

NOW = dt.datetime(2026, 12, 7, 6, tzinfo=dt.UTC)
PT = {"PORTGATE_LANG": "pt", "PORTGATE_ACTOR": None}


def _setup(tmp_path, sqlite_ledger):
    url = sqlite_ledger(tmp_path / "ledger.db")
    keys = tmp_path / "keys"
    keys.mkdir()
    config = tmp_path / "central.toml"
    config.write_text(f'database_url = "{url}"\nport = "santos"\nports = ["santos", "paranagua"]\nkeys_dir = "{keys}"\n')
    return url, str(config)


def _row(conn, seen_at, pid=7):
    conn.execute(insert(office_processes).values(id=f"p{pid}", kind="office serve", home_port="santos", host="h",
                                                 pid=pid, started_at=NOW, seen_at=seen_at))


def test_an_unreadable_seen_at_is_one_line_naming_it(tmp_path, sqlite_ledger):
    url, config = _setup(tmp_path, sqlite_ledger)
    engine = make_engine(url)
    with engine.begin() as conn:
        _row(conn, NOW)
        conn.execute(text("update office_processes set seen_at='garbage'"))
    engine.dispose()
    r = run_here(["ledger", "home-port", "--config", config, "--set", "santos", "--actor", "t"], env=PT)
    assert r.returncode == 2, r.stderr
    assert ("office_processes.seen_at contém 'garbage', que não é um instante: o escritório não consegue ler esta "
            "linha (corrija-a ou apague-a)") in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    r = run_here(["--lang", "en", "ledger", "home-port", "--config", config, "--set", "santos", "--actor", "t"],
                 env=PT)
    assert r.returncode == 2 and "office_processes.seen_at holds 'garbage', not a time" in r.stderr, r.stderr


def test_an_unreadable_recorded_at_is_one_line_naming_it(tmp_path, sqlite_ledger):
    url, config = _setup(tmp_path, sqlite_ledger)
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(insert(ledger_home).values(id=1, port="santos", recorded_at=NOW))
        conn.execute(text("update ledger_home set recorded_at='junk'"))
    engine.dispose()
    for extra in ((), ("--set", "paranagua", "--actor", "t", "--move-portless")):
        r = run_here(["ledger", "home-port", "--config", config, *extra], env=PT)
        assert r.returncode == 2, r.stderr
        assert "ledger_home.recorded_at contém 'junk', que não é um instante" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr


def test_a_seen_at_in_the_future_beyond_the_stale_window_is_not_running(tmp_path, sqlite_ledger):
    url, _config = _setup(tmp_path, sqlite_ledger)
    engine = make_engine(url)
    with engine.begin() as conn:
        _row(conn, NOW + dt.timedelta(seconds=STALE_S - 1), pid=1)  # a small skew: still running
        _row(conn, NOW + dt.timedelta(seconds=STALE_S + 1), pid=2)  # beyond the window: stale
        _row(conn, NOW + dt.timedelta(days=365), pid=3)
        assert [p.pid for p in running(conn, NOW)] == [1]
    engine.dispose()


def test_a_starting_process_prunes_an_unreadable_row(tmp_path, sqlite_ledger):
    url, _config = _setup(tmp_path, sqlite_ledger)
    engine = make_engine(url)
    with engine.begin() as conn:
        _row(conn, NOW)
        conn.execute(text("update office_processes set seen_at='garbage'"))
    with Liveness(url, "office serve", "santos", refresh_s=3600, clock=lambda: NOW) as me:
        with engine.connect() as conn:
            assert list(conn.execute(select(office_processes.c.id)).scalars()) == [me.id]
    engine.dispose()
