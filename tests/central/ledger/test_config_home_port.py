"""A ledger of several ports (santos, paranagua) and its recorded home port (``ledger_home``, 0034),
as a fresh tester met it: ``registry import --config santos.toml`` (home santos, two ports) stored a
worker without a port and recorded nothing, so ``registry suspend --config swap.toml`` (the same
ports, home paranagua) recorded paranagua, santos's own config was refused from then on and the
web app showed the worker as santos's. Now a worker written under a config of several ports gets
his port stored (the config's home port, or his CSV ``port`` cell), and the first write under such a
config records its home port before it writes anything (a ledger the import makes included), so a
config of another home port is refused while workers without a port remain. A ledger that already
has such workers and no record: the first config of several ports records its home, and the SQL of
docs/operations.md fixes a wrong record. Real SQLite and PostgreSQL (``migrated_url``), commands
through ``app.cli.main`` (``testkit.cli.run_here``)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from central.db import make_engine
from central.ledger.schema import ledger_home
from central.registry.schema import audit_log, workers
from central.registry.worker_ports import set_port
from testkit.cli import run_here

EN = {"PORTGATE_LANG": "en"}
HEADER = "registration,name,category,status,suspended_from,suspended_until,health_exam_date,"\
         "booklet_revalidated_year,rotation_number,port\n"
OTHER_HOME = "the ledger's workers without a port are santos's (its home port), not paranagua's"


def _config(tmp_path, url: str, port: str, ports: tuple[str, ...] = ()) -> str:
    keys = tmp_path / "keys"
    keys.mkdir(exist_ok=True)
    path = tmp_path / f"central-{port}-{len(ports)}.toml"
    body = f'database_url = "{url}"\nport = "{port}"\nkeys_dir = "{keys}"\n'
    path.write_text(body + ("ports = [" + ", ".join(f'"{p}"' for p in ports) + "]\n" if ports else ""))
    return str(path)


def _csv(tmp_path, name: str, rows: list[tuple[str, int, str]]) -> str:
    """workers.csv of vigias ``(registration, rotation number, port cell)``."""
    path = tmp_path / name
    path.write_text(HEADER + "".join(f"{reg},Vigia {reg},vigia,active,,,2026-01-05,2026,{n},{port}\n"
                                     for reg, n, port in rows))
    return str(path)


def _ports(url: str) -> dict[str, str | None]:
    engine = make_engine(url)
    try:
        with engine.connect() as c:
            return dict(c.execute(select(workers.c.registration, workers.c.port)).all())
    finally:
        engine.dispose()


def _home(url: str) -> list[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as c:
            return list(c.execute(select(ledger_home.c.port)).scalars())
    finally:
        engine.dispose()


def _ok(*args: str) -> None:
    done = run_here(list(args), env=EN)
    assert done.returncode == 0, (args, done.stdout, done.stderr)


def test_an_import_under_a_config_of_several_ports_stores_the_port_and_records_the_home(migrated_url, tmp_path):
    url = migrated_url
    santos = _config(tmp_path, url, "santos", ("santos", "paranagua"))
    swap = _config(tmp_path, url, "paranagua", ("paranagua", "santos"))
    _ok("registry", "import", "--workers", _csv(tmp_path, "w.csv", [("X900", 900, ""), ("X901", 901, "paranagua")]),
        "--config", santos)
    assert _ports(url) == {"X900": "santos", "X901": "paranagua"}  # never NULL: the home port, the cell's
    assert _home(url) == ["santos"]  # recorded by the import, the first write
    # the swapped config may change X900: he is santos's by his stored port, not by being read as home
    _ok("registry", "suspend", "X900", "--from", "2026-03-02", "--days", "10", "--reason", "falta", "--config", swap)
    assert _home(url) == ["santos"]  # not taken over by paranagua
    _ok("registry", "exam", "X900", "--date", "2026-03-01", "--config", santos)  # santos is not locked out
    # a worker stored without a port (an import given --db): now the swapped config is refused
    _ok("registry", "import", "--workers", _csv(tmp_path, "old.csv", [("X902", 902, "")]), "--db", url)
    assert _ports(url)["X902"] is None
    refused = run_here(["registry", "exam", "X902", "--date", "2026-03-01", "--config", swap], env=EN)
    assert refused.returncode == 2 and OTHER_HOME in refused.stderr, refused.stderr
    _ok("registry", "exam", "X902", "--date", "2026-03-01", "--config", santos)


def test_an_import_that_makes_the_ledger_records_the_home_before_writing(tmp_path):
    """A SQLite file that does not exist yet: nothing to check before the command makes it, so the
    import checks in its own transaction after the migration."""
    url = f"sqlite:///{tmp_path / 'new.db'}"
    santos = _config(tmp_path, url, "santos", ("santos", "paranagua"))
    _ok("registry", "import", "--workers", _csv(tmp_path, "w.csv", [("X900", 900, "")]), "--config", santos)
    assert _ports(url) == {"X900": "santos"} and _home(url) == ["santos"]


def test_a_refused_import_writes_no_worker(migrated_url, tmp_path):
    """The check in the import's transaction refuses before anything is written: a ledger of
    portless workers recorded as santos's, imported into under paranagua's config."""
    url = migrated_url
    _ok("registry", "import", "--workers", _csv(tmp_path, "old.csv", [("X800", 800, "")]), "--db", url)
    _ok("registry", "booklet", "X800", "--year", "2026", "--config",
        _config(tmp_path, url, "santos", ("santos", "paranagua")))
    swap = _config(tmp_path, url, "paranagua", ("paranagua", "santos"))
    done = run_here(["registry", "import", "--workers", _csv(tmp_path, "w.csv", [("X900", 900, "")]),
                     "--config", swap], env=EN)
    assert done.returncode == 2 and OTHER_HOME in done.stderr, done.stderr
    assert _ports(url) == {"X800": None}


def test_a_wrong_home_recorded_on_an_old_ledger_is_fixed_by_the_documented_sql(migrated_url, tmp_path):
    """Workers without a port and no record (a ledger filled before the ports): the first config of
    several ports records its home, right or wrong; docs/operations.md's UPDATE puts it right."""
    url = migrated_url
    _ok("registry", "import", "--workers", _csv(tmp_path, "old.csv", [("X800", 800, "")]), "--db", url)
    assert _home(url) == []
    swap = _config(tmp_path, url, "paranagua", ("paranagua", "santos"))
    santos = _config(tmp_path, url, "santos", ("santos", "paranagua"))
    _ok("registry", "booklet", "X800", "--year", "2026", "--config", swap)  # the wrong config, first
    assert _home(url) == ["paranagua"]
    done = run_here(["registry", "booklet", "X800", "--year", "2026", "--config", santos], env=EN)
    assert done.returncode == 2 and "are paranagua's (its home port), not santos's" in done.stderr, done.stderr
    engine = make_engine(url)
    try:
        with engine.begin() as c:  # docs/operations.md, "The ledger's home port"
            c.execute(text("UPDATE ledger_home SET port = 'santos' WHERE id = 1"))
    finally:
        engine.dispose()
    _ok("registry", "booklet", "X800", "--year", "2026", "--config", santos)
    done = run_here(["registry", "booklet", "X800", "--year", "2026", "--config", swap], env=EN)
    assert done.returncode == 2 and OTHER_HOME in done.stderr, done.stderr


def test_set_port_of_an_office_of_several_ports_stores_the_home_port(migrated_url, tmp_path):
    """The office's "add worker" page gives a new worker his port with ``set_port``: the home port
    (or None for it) is stored, without an audit row (not a move); one port: NULL stays NULL."""
    url = migrated_url
    _ok("registry", "import", "--workers", _csv(tmp_path, "w.csv", [("X1", 1, ""), ("X2", 2, ""), ("X3", 3, "")]),
        "--db", url)
    engine = make_engine(url)
    now = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)
    try:
        with Session(engine) as s, s.begin():
            two = ("santos", "paranagua")
            assert not set_port(s, "X1", "santos", actor="t", now=now, served=two)
            assert not set_port(s, "X2", None, actor="t", now=now, served=two)
            assert not set_port(s, "X3", "santos", actor="t", now=now, served=("santos",))
            assert not list(s.execute(select(audit_log.c.id).where(audit_log.c.action == "worker.port")))
    finally:
        engine.dispose()
    assert _ports(url) == {"X1": "santos", "X2": "santos", "X3": None}


def test_register_under_a_config_of_several_ports_stores_the_port(tmp_path):
    """``registry register`` (the admission path) writes workers through the same import: under a
    config of several ports each gets his port, on a ledger the command makes, the home recorded."""
    from tests.central.registry.conftest import WORKER_COLUMNS, write_csv
    from tests.central.registry.test_admissions import ADM_COLUMNS, WATCH_DOCS, arow, wrow

    url = f"sqlite:///{tmp_path / 'new.db'}"
    rows = [wrow("N1", "vigia"), wrow("N2", "vigia") | {"port": "paranagua"}]
    w = write_csv(tmp_path / "workers.csv", (*WORKER_COLUMNS, "port"), rows)
    a = write_csv(tmp_path / "admissions.csv", ADM_COLUMNS, [arow("N1", WATCH_DOCS), arow("N2", WATCH_DOCS)])
    _ok("registry", "register", "--workers", str(w), "--admissions", str(a), "--config",
        _config(tmp_path, url, "santos", ("santos", "paranagua")))
    assert _ports(url) == {"N1": "santos", "N2": "paranagua"} and _home(url) == ["santos"]


def _port_audits(url: str) -> list[tuple[str, dict]]:
    engine = make_engine(url)
    try:
        with engine.connect() as c:
            return [(r.subject, r.detail) for r in c.execute(select(audit_log.c.subject, audit_log.c.detail).where(
                audit_log.c.action == "worker.port").order_by(audit_log.c.id))]
    finally:
        engine.dispose()


def test_a_restating_import_under_several_ports_leaves_a_null_port_alone(migrated_url, tmp_path):
    """A fresh tester's run: five workers imported with ``--db`` (no port column: NULL), the same file
    imported again under a config of several ports said "nothing changed" but stored santos for all
    five without an audit row, so ``ledger home-port --move-portless`` found none. A row restating a
    worker and giving no port writes nothing (a NULL port is the recorded home port's); a row that
    gives one (``--port``, a ``port`` cell) writes it, counted, with a ``worker.port`` row each."""
    url = migrated_url
    rows = [(f"W{n}", 700 + n, "") for n in range(1, 6)]
    plain = tmp_path / "w1.csv"
    plain.write_text(HEADER.replace(",port\n", "\n") + "".join(
        f"{reg},Vigia {reg},vigia,active,,,2026-01-05,2026,{n}\n" for reg, n, _p in rows))
    _ok("registry", "import", "--workers", str(plain), "--db", url)
    santos = _config(tmp_path, url, "santos", ("santos", "paranagua"))
    done = run_here(["registry", "import", "--workers", str(plain), "--config", santos], env=EN)
    assert done.returncode == 0 and "nothing changed: 5 row(s) already registered as given" in done.stdout, done
    assert set(_ports(url).values()) == {None} and _port_audits(url) == []
    assert _home(url) == ["santos"]  # the import's check recorded whose they are
    shown = run_here(["ledger", "home-port", "--config", santos], env=EN)
    assert shown.returncode == 0 and "5 worker(s) without a port are santos's" in shown.stdout, shown
    # giving them their port (docs/operations.md): counted, and audited like any other change
    given = run_here(["registry", "import", "--workers", _csv(tmp_path, "w2.csv", rows[:2]), "--port", "santos",
                      "--config", santos], env=EN)
    assert given.returncode == 0 and "imported 2 worker(s), 0 card(s)" in given.stdout, given
    assert _ports(url) == {"W1": "santos", "W2": "santos", "W3": None, "W4": None, "W5": None}
    assert _port_audits(url) == [("W1", {"changed": {"port": ["", "santos"]}}),
                                 ("W2", {"changed": {"port": ["", "santos"]}})]
    cell = run_here(["registry", "import", "--workers", _csv(tmp_path, "w3.csv", [("W3", 703, "santos")]),
                     "--config", santos], env=EN)
    assert cell.returncode == 0 and "imported 1 worker(s)" in cell.stdout, cell
    assert _ports(url)["W3"] == "santos" and len(_port_audits(url)) == 3
    again = run_here(["registry", "import", "--workers", _csv(tmp_path, "w2.csv", rows[:2]), "--port", "santos",
                      "--config", santos], env=EN)
    assert again.returncode == 0 and "nothing changed: 2 row(s)" in again.stdout, again
    assert len(_port_audits(url)) == 3
    # a changed row (his name) is written: his port stored and audited, counted once
    changed = tmp_path / "w4.csv"
    changed.write_text(HEADER.replace(",port\n", "\n") + "W4,Vigia Quatro,vigia,active,,,2026-01-05,2026,704\n")
    moved = run_here(["registry", "import", "--workers", str(changed), "--config", santos], env=EN)
    assert moved.returncode == 0 and "imported 1 worker(s), 0 card(s)" in moved.stdout, moved
    assert _ports(url)["W4"] == "santos" and _port_audits(url)[-1] == ("W4", {"changed": {"port": ["", "santos"]}})
    assert _ports(url)["W5"] is None
