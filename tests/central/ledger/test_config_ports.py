"""A config against the ledger's ports wherever a ledger is opened for it (issue 37 item 4; one ledger,
several ports: ``central.ledger.home.check_config``). A ledger of santos (home, workers without a
port) and rio (workers and a gate's events): a config of santos alone refuses ``portgate office
serve`` (no office) and every command that changes the ledger; a config of rio's home port once
santos's is recorded refuses those and ``portgate central run`` (no ingest; a one-port config is
otherwise its deployment: tests/ops/test_central_run_ports.py). Nothing written, the reason in pt-BR
or English; a command that only reads goes on and says why its rows may show under the wrong port;
``ledger migrate`` checks nothing. Before: only ``rotation dispatch|refuse|substitute`` checked.
Real SQLite and PostgreSQL (migrated ledgers), through ``app.cli.main`` in process
(``testkit.cli.run_here``); ``central run`` also through the real entry point."""

from __future__ import annotations

import datetime as dt
import socket
import subprocess
import sys

import pytest
from sqlalchemy import insert, select

from app.demo.mosquitto import free_port
from central.db import make_engine
from central.ingest.event_store import update_progress, write_batch
from central.ledger.schema import ledger_home
from central.registry.schema import workers
from testkit.cli import run_here
from tests.central.web.test_ports_web import RIO, _tap

AT = dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC)
EN = {"PORTGATE_LANG": "en"}
PT = {"PORTGATE_LANG": "pt"}
NOT_SERVED = "the ledger holds port(s) rio that this config does not serve (santos)"
NOT_SERVED_PT = "o livro-razão tem o(s) porto(s) rio, que esta configuração não atende (santos)"
OTHER_HOME = "the ledger's workers without a port are santos's (its home port), not rio's"
OTHER_HOME_PT = "os trabalhadores sem porto do livro-razão são de santos (o seu porto de origem), não de rio"


@pytest.fixture
def ledger(migrated_url):
    """(url, engine): S001 without a port (the home port's), R001 of rio, a rio gate's event."""
    engine = make_engine(migrated_url)
    with engine.begin() as conn:
        for reg, port in (("S001", None), ("R001", "rio")):
            conn.execute(insert(workers).values(
                registration=reg, name=f"Vigia {reg}", category="vigia", status="active", rotation_number=1,
                health_exam_date=dt.date(2026, 1, 5), booklet_revalidated_year=2026, updated_at=AT, port=port))
        write_batch(conn, [_tap("rio", RIO, 1, AT - dt.timedelta(days=5), [])], [], AT)
        update_progress(conn, [RIO["gate"]], AT)
    yield migrated_url, engine
    engine.dispose()


def _config(tmp_path, url: str, port: str, ports: tuple[str, ...] = ()) -> str:
    keys = tmp_path / "keys"
    keys.mkdir(exist_ok=True)
    path = tmp_path / f"central-{port}-{len(ports)}.toml"
    text = f'database_url = "{url}"\nport = "{port}"\nkeys_dir = "{keys}"\n'
    path.write_text(text + ("ports = [" + ", ".join(f'"{p}"' for p in ports) + "]\n" if ports else ""))
    return str(path)


def _exam(engine, reg: str) -> dt.date:
    with engine.connect() as c:
        return c.execute(select(workers.c.health_exam_date).where(workers.c.registration == reg)).scalar_one()


def _home(engine) -> list[str]:
    with engine.connect() as c:
        return list(c.execute(select(ledger_home.c.port)).scalars())


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _refused(args: list[str], config: str, words: str, env=EN) -> None:
    done = run_here([*args, "--config", config], env=env)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert words in done.stderr, done.stderr


def test_a_config_not_serving_every_port_is_refused_by_the_office_and_every_change(ledger, tmp_path):
    url, engine = ledger
    santos = _config(tmp_path, url, "santos")
    web = free_port()
    _refused(["office", "serve", "--port", str(web)], santos, NOT_SERVED)
    _refused(["office", "serve", "--port", str(web)], santos, NOT_SERVED_PT, env=PT)
    assert not _listening(web)  # the office's socket is closed again, nothing serves
    _refused(["registry", "exam", "S001", "--date", "2026-03-01"], santos, NOT_SERVED)
    _refused(["rotation", "refuse", "--entry", "1", "--reason", "doente"], santos, NOT_SERVED)
    assert _exam(engine, "S001") == dt.date(2026, 1, 5)  # nothing written
    assert _home(engine) == []  # nor the home port recorded
    listed = run_here(["registry", "list", "--config", santos], env=EN)  # only reads: told, goes on
    assert listed.returncode == 0 and "S001" in listed.stdout, listed.stderr
    assert "warning: the ledger holds port(s) rio that this config does not serve (santos)" in listed.stderr
    said = run_here(["rotation", "list", "--date", "2026-03-12", "--config", santos], env=PT)
    assert said.returncode == 0 and "aviso: o livro-razão tem o(s) porto(s) rio" in said.stderr, said.stderr
    assert run_here(["ledger", "migrate", "--config", santos], env=EN).returncode == 0  # the schema only
    both = _config(tmp_path, url, "santos", ("santos", "rio"))
    done = run_here(["registry", "exam", "S001", "--date", "2026-03-01", "--config", both], env=EN)
    assert done.returncode == 0, done.stderr
    assert _exam(engine, "S001") == dt.date(2026, 3, 1) and _home(engine) == ["santos"]
    quiet = run_here(["registry", "list", "--config", both], env=EN)
    assert quiet.returncode == 0 and "warning" not in quiet.stderr, quiet.stderr


def test_a_config_of_another_home_port_is_refused_once_the_home_port_is_recorded(ledger, tmp_path):
    url, engine = ledger
    santos = _config(tmp_path, url, "santos", ("santos", "rio"))
    assert run_here(["registry", "booklet", "R001", "--year", "2026", "--config", santos], env=EN).returncode == 0
    assert _home(engine) == ["santos"]  # the first change under a config of several ports records it
    rio = _config(tmp_path, url, "rio", ("rio", "santos"))
    _refused(["central", "run"], rio, OTHER_HOME)
    _refused(["office", "serve", "--port", str(free_port())], rio, OTHER_HOME_PT, env=PT)
    _refused(["registry", "exam", "S001", "--date", "2026-03-01"], rio, OTHER_HOME)
    assert _exam(engine, "S001") == dt.date(2026, 1, 5)
    told = run_here(["rotation", "fairness", "--month", "2026-03", "--config", rio], env=EN)
    assert told.returncode == 0, told.stderr
    assert "warning: the ledger's workers without a port are santos's (its home port), not rio's" in told.stderr
    with engine.begin() as conn:  # S001 given his port: nothing is read as anyone's home port any more
        conn.execute(workers.update().where(workers.c.port.is_(None)).values(port="santos"))
    done = run_here(["registry", "exam", "S001", "--date", "2026-03-01", "--config", rio], env=EN)
    assert done.returncode == 0, done.stderr


def test_the_real_entry_point_refuses_to_start_the_ingest(ledger, tmp_path):
    """``python -m app.cli central run`` with rio's one-port config once santos is the recorded home
    port ends at once, exit 2, one line in pt-BR (the default language), before any broker is
    reached (no broker runs here)."""
    url, _engine = ledger
    both = _config(tmp_path, url, "santos", ("santos", "rio"))
    assert run_here(["registry", "booklet", "R001", "--year", "2026", "--config", both], env=EN).returncode == 0
    run = subprocess.run([sys.executable, "-m", "app.cli", "central", "run", "--config",
                          _config(tmp_path, url, "rio")], capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "PORTGATE_LANG": "pt"})
    assert run.returncode == 2, run.stderr
    assert OTHER_HOME_PT in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_a_single_port_office_is_unchanged(migrated_url, tmp_path):
    """A ledger of one port's workers without a port, and its config of one port: every command as
    before, nothing recorded (nothing to tell apart)."""
    engine = make_engine(migrated_url)
    try:
        with engine.begin() as conn:
            conn.execute(insert(workers).values(
                registration="S001", name="Vigia S001", category="vigia", status="active", rotation_number=1,
                health_exam_date=dt.date(2026, 1, 5), booklet_revalidated_year=2026, updated_at=AT))
        santos = _config(tmp_path, migrated_url, "santos")
        done = run_here(["registry", "exam", "S001", "--date", "2026-03-01", "--config", santos], env=EN)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert _exam(engine, "S001") == dt.date(2026, 3, 1) and _home(engine) == []
    finally:
        engine.dispose()


def test_a_config_whose_ledger_is_no_database_is_one_line(tmp_path):
    """The check opens the ledger first: a file that is not a database is the usual one line (exit 2,
    ``central.db.read_failure``), not a traceback."""
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a ledger" * 400)
    done = run_here(["registry", "list", "--config", _config(tmp_path, f"sqlite:///{bad}", "santos")], env=EN)
    assert done.returncode == 2, done
    assert done.stderr.strip().splitlines() == [
        f"portgate: sqlite:///{bad} is not a database (not a portgate ledger): file is not a database"]
