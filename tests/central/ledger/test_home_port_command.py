"""``portgate ledger home-port`` (issue 37 item 4): the ledger's home port (``ledger_home``, 0034),
shown and set by a command instead of SQL. A ledger of santos and paranagua whose workers X800 and
X801 have no port: showing says nothing is recorded and how they are read; ``--set`` records a port
the config serves, with an audit row (``ledger.home-port``, every port's), and refuses (pt-BR first,
English with ``--lang en``, exit 2, nothing written): a port the config does not serve, a port that
would make the portless workers another port's than today's without ``--move-portless``,
``--move-portless`` without ``--set``, no ``--actor``. The same port again changes nothing; a wrong
record put right with ``--move-portless`` lets the right config write again and refuses the wrong
one. Real SQLite and PostgreSQL (``migrated_url``), through ``app.cli.main`` (``run_here``); a ledger
that cannot be reached: tests/central/ledger/test_config_ledger_down.py (real processes)."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys

import pytest
from sqlalchemy import insert, select, text

from central.db import make_engine
from central.ledger.schema import ledger_home
from central.registry.schema import audit_log, workers
from testkit.cli import run_here
from testkit.wait import wait_until

AT = dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC)
PT = {"PORTGATE_LANG": "pt", "PORTGATE_ACTOR": None}
EN = {"PORTGATE_LANG": "en", "PORTGATE_ACTOR": None}


@pytest.fixture
def ledger(migrated_url, tmp_path):
    """(url, santos config, paranagua config, engine): X800, X801 without a port, P001 of paranagua."""
    engine = make_engine(migrated_url)
    with engine.begin() as conn:
        for reg, port in (("X800", None), ("X801", None), ("P001", "paranagua")):
            conn.execute(insert(workers).values(
                registration=reg, name=f"Vigia {reg}", category="vigia", status="active", rotation_number=int(reg[1:]),
                health_exam_date=dt.date(2026, 1, 5), booklet_revalidated_year=2026, updated_at=AT, port=port))
    yield migrated_url, _config(tmp_path, migrated_url, "santos"), _config(tmp_path, migrated_url, "paranagua"), engine
    engine.dispose()


def _config(tmp_path, url: str, home: str) -> str:
    keys = tmp_path / "keys"
    keys.mkdir(exist_ok=True)
    other = "paranagua" if home == "santos" else "santos"
    path = tmp_path / f"{home}.toml"
    path.write_text(f'database_url = "{url}"\nport = "{home}"\nports = ["{home}", "{other}"]\nkeys_dir = "{keys}"\n')
    return str(path)


def _state(engine) -> tuple[list[str], list[tuple]]:
    """(the recorded home ports, the ledger.home-port audit rows (actor, port, detail))."""
    with engine.connect() as c:
        home = list(c.execute(select(ledger_home.c.port)).scalars())
        rows = [tuple(r) for r in c.execute(select(audit_log.c.actor, audit_log.c.port, audit_log.c.detail)
                                            .where(audit_log.c.action == "ledger.home-port").order_by(audit_log.c.id))]
    return home, rows


def _cmd(config: str, *extra: str, env=PT):
    return run_here(["ledger", "home-port", "--config", config, *extra], env=env)


def test_shown_then_set_with_an_audit_row_then_unchanged(ledger):
    _url, santos, _para, engine = ledger
    shown = _cmd(santos)
    assert shown.returncode == 0, shown.stderr
    assert ("o livro-razão não registrou porto de origem: os seus 2 trabalhador(es) sem porto são lidos como do "
            "porto de cada configuração (desta: santos)") in shown.stdout
    done = _cmd(santos, "--set", "santos", "--actor", "chefe.silva")
    assert done.returncode == 0, done.stderr
    assert "porto de origem do livro-razão: santos (antes: nenhum); 2 trabalhador(es) sem porto são de santos" \
        in done.stdout
    assert _state(engine) == (["santos"], [("chefe.silva", "*", {"changed": {"port": ["", "santos"]},
                                                                  "portless_workers": 2})])
    shown = _cmd(santos, env=EN)
    assert "the ledger's home port: santos (recorded " in shown.stdout and "2 worker(s) without a port" in shown.stdout
    again = _cmd(santos, "--set", "santos", "--actor", "chefe.silva", env=EN)
    assert again.returncode == 0 and "the ledger's home port is already santos: nothing changed" in again.stdout
    assert len(_state(engine)[1]) == 1  # no second audit row


def test_a_port_the_config_does_not_serve_is_refused(ledger):
    _url, santos, _para, engine = ledger
    r = _cmd(santos, "--set", "rio", "--actor", "chefe.silva")
    assert r.returncode == 2
    assert ("o porto 'rio' não é atendido por esta configuração (portos: santos, paranagua): dê um central.toml "
            "cujos ports o incluam") in r.stderr, r.stderr
    r = run_here(["--lang", "en", "ledger", "home-port", "--config", santos, "--set", "rio", "--actor", "a"], env=PT)
    assert r.returncode == 2 and "port 'rio' is not served by this config (santos, paranagua)" in r.stderr, r.stderr
    r = _cmd(santos, "--set", "", "--actor", "chefe.silva")  # an empty name is quoted, not a double space
    assert r.returncode == 2 and "o porto '' não é atendido por esta configuração" in r.stderr, r.stderr
    assert _state(engine) == ([], [])


@pytest.mark.parametrize(("given", "meant"), [("Santos", "santos"), ("Paranaguá", "paranagua")])
def test_a_port_given_by_its_name_is_refused_naming_the_codes(ledger, given, meant):
    """``--set Santos`` (the port's name, not its code) said to give another central.toml: the
    refusal now names the codes and the one meant; nothing is written."""
    _url, santos, _para, engine = ledger
    r = _cmd(santos, "--set", given, "--actor", "chefe.silva")
    assert r.returncode == 2
    assert (f"porto '{given}' desconhecido: um porto é nomeado pelo seu código (portos: santos, paranagua); "
            f"você quis dizer {meant}?") in r.stderr, r.stderr
    r = _cmd(santos, "--set", given, "--actor", "chefe.silva", env=EN)
    assert r.returncode == 2
    assert (f"port '{given}' is unknown: a port is named by its code (ports: santos, paranagua); did you mean "
            f"{meant}?") in r.stderr, r.stderr
    assert _state(engine) == ([], [])


def test_moving_the_portless_workers_needs_move_portless(ledger):
    _url, santos, para, engine = ledger
    r = _cmd(santos, "--set", "paranagua", "--actor", "chefe.silva")  # no record: they are santos's (this config)
    assert r.returncode == 2
    assert ("2 trabalhador(es) sem porto são hoje de santos; tornar paranagua o porto de origem passa-os a "
            "paranagua") in r.stderr and "confirme com --move-portless" in r.stderr, r.stderr
    r = _cmd(santos, "--set", "paranagua", "--actor", "chefe.silva", env=EN)
    assert r.returncode == 2 and "2 worker(s) without a port are santos's today" in r.stderr, r.stderr
    assert _state(engine) == ([], [])
    # recorded santos: paranagua's own config is refused the same way (they are santos's by the record)
    assert _cmd(santos, "--set", "santos", "--actor", "chefe.silva").returncode == 0
    r = _cmd(para, "--set", "paranagua", "--actor", "chefe.silva", env=EN)
    assert r.returncode == 2 and "are santos's today" in r.stderr, r.stderr
    assert _state(engine)[0] == ["santos"] and len(_state(engine)[1]) == 1


def test_a_wrong_record_is_put_right_with_move_portless(ledger):
    """The documented case: the wrong config wrote first. The command fixes it; then the right
    config writes and the wrong one is refused (``central.ledger.home.need_home``)."""
    _url, santos, para, engine = ledger
    booklet = ["registry", "booklet", "X800", "--year", "2026", "--config"]
    assert run_here([*booklet, para], env=EN).returncode == 0  # records paranagua, wrongly
    assert _state(engine)[0] == ["paranagua"]
    assert run_here([*booklet, santos], env=EN).returncode == 2
    done = _cmd(santos, "--set", "santos", "--move-portless", "--actor", "chefe.silva")
    assert done.returncode == 0, done.stderr
    assert _state(engine) == (["santos"], [("chefe.silva", "*", {"changed": {"port": ["paranagua", "santos"]},
                                                                  "portless_workers": 2})])
    assert run_here([*booklet, santos], env=EN).returncode == 0
    wrong = run_here([*booklet, para], env=EN)
    assert wrong.returncode == 2 and "are santos's (its home port), not paranagua's" in wrong.stderr


def test_no_portless_workers_any_served_port_is_set(ledger):
    _url, santos, _para, engine = ledger
    with engine.begin() as c:
        c.execute(workers.update().where(workers.c.port.is_(None)).values(port="santos"))
    assert _cmd(santos, "--set", "paranagua", "--actor", "a").returncode == 0  # nobody moves
    assert _state(engine)[0] == ["paranagua"]


def test_move_portless_without_set_and_set_without_actor_are_refused(ledger):
    _url, santos, _para, engine = ledger
    r = _cmd(santos, "--move-portless")
    assert r.returncode == 2 and "--move-portless só vale com --set PORTO" in r.stderr, r.stderr
    r = _cmd(santos, "--set", "santos")
    assert r.returncode == 2 and "diga quem altera o porto de origem: --actor NOME (ou PORTGATE_ACTOR)" in r.stderr, \
        r.stderr
    assert _state(engine) == ([], [])


def test_a_ledger_file_that_is_not_there_is_refused_not_made(tmp_path):
    db = tmp_path / "typo.db"
    config = _config(tmp_path, f"sqlite:///{db}", "santos")
    for extra in ((), ("--set", "santos", "--actor", "a")):
        r = _cmd(config, *extra, env=EN)
        assert r.returncode == 2 and "does not exist" in r.stderr, r.stderr
    assert not db.exists()


def _setter(config: str, port: str, **env: str) -> subprocess.Popen:
    """``portgate ledger home-port --set PORT --move-portless`` as a process of its own (the console
    script's code: ``python -m app.cli``), in pt-BR."""
    return subprocess.Popen([sys.executable, "-m", "app.cli", "ledger", "home-port", "--config", config, "--set", port,
                             "--move-portless", "--actor", "chefe.souza"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PORTGATE_LANG": "pt", **env})


def _waits_then_goes_on(engine, first, proc: subprocess.Popen, who: str) -> tuple[str, str]:
    """``proc`` seen waiting on ``first``'s uncommitted transaction (a lock not granted), then
    ``first`` committed: ``proc``'s (stdout, stderr) once it ended (killed if it outlives the test)."""
    try:
        wait_until(lambda: _waiting_on_a_lock(engine) or proc.poll() is not None, timeout=60,
                   what=f"{who} waiting on the other transaction")
        assert proc.poll() is None, proc.communicate()
        first.commit()
        return proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _waiting_on_a_lock(engine) -> bool:
    with engine.connect() as c:
        return bool(c.execute(text("SELECT count(*) FROM pg_locks WHERE NOT granted")).scalar_one())


@pytest.mark.parametrize("migrated_url", ["postgresql"], indirect=True)
def test_a_second_setter_waits_for_the_first_and_reads_its_record(ledger):
    """Two setters at once on PostgreSQL (the tester's run: a duplicate key of pk_ledger_home, exit
    2): the second, started while the first's transaction holds its new record uncommitted, waits for
    it and then sets over it, its audit row naming the first's port as the one before."""
    _url, santos, _para, engine = ledger
    with engine.connect() as first:
        first.execute(insert(ledger_home).values(id=1, port="paranagua", recorded_at=AT))  # not committed
        second = _setter(santos, "santos")
        out, err = _waits_then_goes_on(engine, first, second, "the second setter")
    assert second.returncode == 0, err
    assert "porto de origem do livro-razão: santos (antes: paranagua)" in out
    assert _state(engine) == (["santos"], [("chefe.souza", "*", {"changed": {"port": ["paranagua", "santos"]},
                                                                  "portless_workers": 2})])


def test_a_setter_given_up_on_a_held_lock_says_run_again(ledger, migrated_url):
    """A transaction that holds the record until the setter gives up: one line, exit 1 (transient),
    nothing written. PostgreSQL (a ``lock_timeout`` of 2 s): "outro comando o alterou nesse
    meio-tempo, execute de novo". SQLite: the file's write lock is held, so the command's migration
    check (``BEGIN IMMEDIATE``) gives up after the driver's busy timeout first, as every command's
    does: "banco ... inacessível: o banco está travado" ("database ... not reachable: database is locked")."""
    _url, santos, _para, engine = ledger
    with engine.connect() as first:
        first.execute(insert(ledger_home).values(id=1, port="paranagua", recorded_at=AT))  # not committed
        env = {"PGOPTIONS": "-c lock_timeout=2000"} if engine.dialect.name == "postgresql" else {}
        setter = _setter(santos, "santos", **env)
        out, err = setter.communicate(timeout=120)
        first.rollback()
    said = ("outro comando o alterou nesse meio-tempo, execute de novo" if engine.dialect.name == "postgresql"
            else "inacessível: o banco está travado (outro processo o está usando)")  # pt-BR: the setter's language
    assert setter.returncode == 1 and said in err and err.count("\n") == 1, (setter.returncode, out, err)
    assert _state(engine) == ([], [])


@pytest.mark.parametrize("migrated_url", ["postgresql"], indirect=True)
def test_a_first_write_waits_for_a_setter_and_reads_its_record(ledger):
    """A first write under a config of several ports (which records its home port before it writes:
    ``central.ledger.home.need_home``) while another transaction holds a new record uncommitted: it
    waits, then reads that record instead of inserting its own (a duplicate key of pk_ledger_home
    before, exit 2 with a traceback's error): paranagua recorded with X800 and X801 without a port,
    so santos's config is refused as any later one is, one line, nothing suspended."""
    _url, santos, _para, engine = ledger
    with engine.connect() as first:
        first.execute(insert(ledger_home).values(id=1, port="paranagua", recorded_at=AT))  # not committed
        writer = subprocess.Popen([sys.executable, "-m", "app.cli", "registry", "suspend", "X800", "--from",
                                   "2026-03-02", "--days", "10", "--reason", "falta", "--config", santos],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, "PORTGATE_LANG": "en", "PORTGATE_ACTOR": "chefe.souza"})
        out, err = _waits_then_goes_on(engine, first, writer, "the first write")
    assert writer.returncode == 2 and "Traceback" not in err, (writer.returncode, out, err)
    assert "the ledger's workers without a port are paranagua's (its home port), not santos's" in err, err
    with engine.connect() as c:
        assert c.execute(select(workers.c.status).where(workers.c.registration == "X800")).scalar_one() == "active"
    assert _state(engine)[0] == ["paranagua"]
