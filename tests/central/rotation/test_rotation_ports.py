"""The rotation by port (issue 37 item 4; R1, R2; Lei 12.815 arts. 32-33): on one ledger of two ports
(santos home, rio) a requisition at a gate of a port is filled from that port's workers only, in
rotation order; a refusal or a substitution takes the next worker of the entry's port; a caller's
view of one port is refused another port's gate and answered for another port's entry exactly as
for a missing one; the command line dispatches per port with ``--config`` and refuses a ledger of
several ports with ``--db`` alone. Real SQLite and PostgreSQL (migrated ledgers)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from app.cli import main
from central.db import make_engine
from central.ingest.event_store import update_progress, write_batch
from central.registry.schema import workers
from central.rotation import service
from central.rotation.engine import merge
from central.rotation.ports import RotationPorts
from central.rotation.schema import escala, requisitions
from portgate.errors import BadInput
from tests.central.registry.conftest import DAY, DISPATCH_AT, REQ_COLUMNS, req_row, requisition, write_csv
from tests.central.web.test_ports_web import RIO, _tap

SERVED = ("santos", "rio")
# rio's workers come first in rotation order: a dispatch that ignored the port would take them
ROSTER = {"R001": ("rio", 1), "R002": ("rio", 2), "R003": ("rio", 3),
          "S001": (None, 4), "S002": ("santos", 5), "S003": (None, 6)}
RIO_GATE = RIO["gate"]  # its events are rio's
SANTOS_GATE = "s-gate-1"  # no event yet: santos's by its registration (add-gate --port santos)
REG = {SANTOS_GATE: "santos"}


@pytest.fixture
def ledger(migrated_url):
    """santos (home) and rio workers, all vigias in one rotation numbering, and the rio gate known
    by a rio event (``events.port``)."""
    engine = make_engine(migrated_url)
    with engine.begin() as conn:
        for reg, (port, n) in ROSTER.items():
            conn.execute(insert(workers).values(
                registration=reg, name=f"Vigia {reg}", category="vigia", status="active", rotation_number=n,
                health_exam_date=dt.date(2026, 1, 5), booklet_revalidated_year=2026, updated_at=DISPATCH_AT,
                port=port))
        write_batch(conn, [_tap("rio", RIO, 1, DISPATCH_AT - dt.timedelta(days=5), [])], [], DISPATCH_AT)
        update_progress(conn, [RIO_GATE], DISPATCH_AT)
    yield engine
    engine.dispose()


def _dispatch(engine, reqs, ports):
    with Session(engine) as s, s.begin():
        return service.dispatch_day(s, DAY, reqs, actor="t", now=DISPATCH_AT, ports=ports)


def _taken(engine) -> dict[str, list[str]]:
    with engine.connect() as c:
        rows = c.execute(select(escala.c.gate_id, escala.c.registration).where(escala.c.status == "active")
                         .order_by(escala.c.id)).all()
    out: dict[str, list[str]] = {}
    for gate, reg in rows:
        out.setdefault(gate, []).append(reg)
    return out


def test_a_dispatch_fills_each_requisition_from_its_gates_port_in_rotation_order(ledger):
    reqs = [requisition("S", gate_id=SANTOS_GATE, workers=2), requisition("R", gate_id=RIO_GATE, workers=2)]
    done = _dispatch(ledger, reqs, RotationPorts(SERVED, REG))
    assert _taken(ledger) == {SANTOS_GATE: ["S001", "S002"], RIO_GATE: ["R001", "R002"]}
    assert not done.result.shortfalls


def test_a_ports_shortfall_is_not_filled_from_another_port(ledger):
    done = _dispatch(ledger, [requisition("S", gate_id=SANTOS_GATE, workers=5)], RotationPorts(SERVED, REG))
    assert _taken(ledger) == {SANTOS_GATE: ["S001", "S002", "S003"]}
    assert [(s.requisition.ref, s.missing) for s in done.result.shortfalls] == [("S", 2)]


def test_a_gate_registered_to_a_port_takes_that_ports_workers(ledger):
    """A gate with no event yet, registered by ``add-gate --nats-users --port rio``."""
    _dispatch(ledger, [requisition("N", gate_id="rio-new", workers=1)], RotationPorts(SERVED, {"rio-new": "rio"}))
    assert _taken(ledger) == {"rio-new": ["R001"]}


def test_a_refusal_and_a_substitution_take_the_next_worker_of_the_entrys_port(ledger):
    ports = RotationPorts(SERVED, REG)
    _dispatch(ledger, [requisition("S", gate_id=SANTOS_GATE, workers=2)], ports)
    with Session(ledger) as s, s.begin():
        first = s.execute(select(escala.c.id).where(escala.c.registration == "S001")).scalar_one()
        _refusal, new_id = service.refuse(s, first, reason="doente", actor="t", now=DISPATCH_AT,
                                          health_proof="atestado 1", ports=ports)
        assert s.execute(select(escala.c.registration).where(escala.c.id == new_id)).scalar_one() == "S003"
    answers = {}
    for reg in ("R003", "NOBODY"):  # each in its own transaction, rolled back as the caller's would be
        with pytest.raises(BadInput) as exc, Session(ledger) as s, s.begin():
            service.substitute(s, new_id, reason="x", actor="t", now=DISPATCH_AT, registration=reg, ports=ports)
        answers[reg] = (str(exc.value).replace(reg, "REG"), exc.value.where)
    assert answers["R003"] == answers["NOBODY"] == ("registration: no worker with registration 'REG'", "registration")
    with Session(ledger) as s, s.begin():  # by the rotation: S001 (his refusal had a proof: he kept his
        # place; S002 is on the same period), never rio's R001 (ahead of all in rotation numbers)
        again = service.substitute(s, new_id, reason="x", actor="t", now=DISPATCH_AT, ports=ports)
        assert s.execute(select(escala.c.registration).where(escala.c.id == again)).scalar_one() == "S001"


def test_a_view_of_one_port_is_refused_another_ports_gate_and_an_unknown_one(ledger):
    rio_only = RotationPorts(SERVED, view=("rio",))
    for gate in (SANTOS_GATE, "never-seen"):  # no event, not registered: unknown to a view of some ports
        with pytest.raises(BadInput, match=rf"X: gate_id '{gate}' is not a known gate"):
            _dispatch(ledger, [requisition("X", gate_id=gate), requisition("Y", gate_id=RIO_GATE, post="proa")],
                      rio_only)
    registered = RotationPorts(SERVED, {SANTOS_GATE: "santos"}, view=("rio",))  # a santos gate it knows
    with pytest.raises(BadInput, match=rf"X: gate_id '{SANTOS_GATE}' is not a gate of port\(s\) rio"):
        _dispatch(ledger, [requisition("X", gate_id=SANTOS_GATE)], registered)
    with ledger.connect() as c:  # nothing written, the good row neither
        assert c.execute(select(func.count()).select_from(requisitions)).scalar_one() == 0
    _dispatch(ledger, [requisition("Y", gate_id=RIO_GATE)], rio_only)
    assert _taken(ledger) == {RIO_GATE: ["R001"]}


def test_a_ship_in_port_at_another_ports_gate_is_refused(ledger):
    """A requisition for a ship whose call in port is at rio's gate, made at a santos gate, is
    refused (before: dispatched, the ship put at santos too); at rio's gate it is dispatched."""
    from central.calls.service import ShipCall, save_call

    with Session(ledger) as s, s.begin():
        save_call(s, ShipCall("9400001", "Aurora", "long_haul", "berthed", RIO_GATE,
                              DISPATCH_AT - dt.timedelta(days=2), None), actor="t", now=DISPATCH_AT)
    with pytest.raises(BadInput, match="S: ship 9400001 is in port at another port's gate"):
        _dispatch(ledger, [requisition("S", gate_id=SANTOS_GATE, ship="9400001")], RotationPorts(SERVED, REG))
    assert _taken(ledger) == {}
    _dispatch(ledger, [requisition("R", gate_id=RIO_GATE, ship="9400001")], RotationPorts(SERVED, REG))
    assert _taken(ledger) == {RIO_GATE: ["R001"]}


def test_another_ports_entry_is_answered_as_a_missing_one_and_hidden_from_lists(ledger, tmp_path):
    _dispatch(ledger, [requisition("S", gate_id=SANTOS_GATE), requisition("R", gate_id=RIO_GATE)],
              RotationPorts(SERVED, REG))
    rio_only = RotationPorts(SERVED, view=("rio",))
    with Session(ledger) as s, s.begin():
        santos = s.execute(select(escala.c.id).where(escala.c.gate_id == SANTOS_GATE)).scalar_one()
        answers = []
        for entry in (santos, 999_999):
            with pytest.raises(BadInput) as exc:
                service.refuse(s, entry, reason="x", actor="t", now=DISPATCH_AT, ports=rio_only)
            answers.append((str(exc.value).replace(str(entry), "N"), exc.value.where))
        assert answers[0] == answers[1] == ("--entry: no escala entry N", "--entry")
        assert [e.registration for _i, _o, e in service.day_entries(s, DAY, rio_only)] == ["R001"]
        assert len(service.day_entries(s, DAY, RotationPorts(SERVED, view=SERVED))) == 2  # all ports: all
        names = sorted(p.name for p in service.export(s, DAY, tmp_path, rio_only))
    assert names == ["escala-2026-03-10-operator-Op_A.csv", "escala-2026-03-10-ship-9123456.csv"]
    assert "R001" in (tmp_path / names[0]).read_text() and "S001" not in (tmp_path / names[0]).read_text()


def test_merge_of_per_port_results_keeps_every_part():
    from central.rotation.engine import dispatch
    from tests.central.registry.conftest import worker

    a = dispatch([requisition("A", workers=2)], [worker("A1", 1), worker("A2", 2)], {}, {})
    b = dispatch([requisition("B", workers=2, gate_id="g2")], [worker("B1", 1)], {}, {})
    m = merge([a, b])
    assert [x.entry.registration for x in m.assignments] == ["A1", "A2", "B1"]
    assert m.turns == {"A1": 1, "A2": 2, "B1": 1} and [(s.requisition.ref, s.missing) for s in m.shortfalls] == [("B", 1)]


def _config(tmp_path, url: str) -> str:
    from central.ingest.gate_port_file import register_port

    keys = tmp_path / "keys"
    keys.mkdir()
    register_port(keys, SANTOS_GATE, "santos")  # as `portgate central add-gate --port santos`
    path = tmp_path / "central.toml"
    path.write_text(f'database_url = "{url}"\nport = "santos"\nports = ["santos", "rio"]\nkeys_dir = "{keys}"\n')
    return str(path)


def test_the_command_dispatches_per_port_with_config_and_refuses_db_alone(ledger, migrated_url, tmp_path, capsys,
                                                                         monkeypatch):
    path = write_csv(tmp_path / "req.csv", REQ_COLUMNS, [req_row("S", gate_id=SANTOS_GATE, workers="1"),
                                                        req_row("R", gate_id=RIO_GATE, workers="1")])
    args = ["rotation", "dispatch", "--at", DISPATCH_AT.isoformat(), "--date", DAY.isoformat(),
            "--requisitions", str(path), "--actor", "disp"]
    capsys.readouterr()
    assert main([*args, "--db", migrated_url]) == 2
    err = capsys.readouterr().err
    assert "several ports (rio, santos)" in err and "--config" in err
    monkeypatch.setenv("PORTGATE_LANG", "pt")  # the refusal in the command line's language
    assert main([*args, "--db", migrated_url]) == 2
    assert "o livro-razão tem vários portos (rio, santos): dê --config central.toml" in capsys.readouterr().err
    monkeypatch.setenv("PORTGATE_LANG", "en")
    assert _taken(ledger) == {}
    assert main([*args, "--config", _config(tmp_path, migrated_url)]) == 0
    assert json.loads(capsys.readouterr().out)["dispatched"] == 2
    assert _taken(ledger) == {SANTOS_GATE: ["S001"], RIO_GATE: ["R001"]}


def test_the_command_reads_the_gates_registered_in_each_ports_keys_dir(ledger, migrated_url, tmp_path, capsys):
    """``--config`` with ``port_keys_dirs``: a gate registered in rio's keys dir (``add-gate --keys-dir
    DIR --nats-users ... --port rio``) that has sent no event is rio's (before: the home port's)."""
    assert main(["central", "add-gate", "--gate-id", "rio-new", "--keys-dir", str(tmp_path / "keys-rio"),
                 "--nats-users", str(tmp_path / "rio.conf"), "--port", "rio"]) == 0
    config = _config(tmp_path, migrated_url)
    with open(config, "a", encoding="utf-8") as f:
        f.write('port_keys_dirs = { rio = "keys-rio" }\n')
    path = write_csv(tmp_path / "req.csv", REQ_COLUMNS, [req_row("N", gate_id="rio-new", workers="1")])
    capsys.readouterr()
    assert main(["rotation", "dispatch", "--at", DISPATCH_AT.isoformat(), "--date", DAY.isoformat(),
                 "--requisitions", str(path), "--actor", "disp", "--config", config]) == 0
    assert _taken(ledger) == {"rio-new": ["R001"]}


def _lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_the_lists_and_reports_show_the_ports_of_port_else_every_port(ledger, migrated_url, tmp_path, capsys):
    """``rotation list|export|fairness|sizing --config --port P`` (repeatable) show port P's escala rows
    and workers, as the web pages' selector; no ``--port``: every port of the config."""
    config = _config(tmp_path, migrated_url)
    path = write_csv(tmp_path / "req.csv", REQ_COLUMNS, [req_row("S", gate_id=SANTOS_GATE, workers="1"),
                                                        req_row("R", gate_id=RIO_GATE, workers="2")])
    assert main(["rotation", "dispatch", "--at", DISPATCH_AT.isoformat(), "--date", DAY.isoformat(),
                 "--requisitions", str(path), "--actor", "disp", "--config", config]) == 0
    capsys.readouterr()
    listed = {}
    for ports in ((), ("rio",), ("santos",), ("rio", "santos")):
        assert main(["rotation", "list", "--date", DAY.isoformat(), "--config", config,
                     *(a for p in ports for a in ("--port", p))]) == 0
        listed[ports] = sorted(r["registration"] for r in _lines(capsys.readouterr().out))
    assert listed == {(): ["R001", "R002", "S001"], ("rio",): ["R001", "R002"], ("santos",): ["S001"],
                      ("rio", "santos"): ["R001", "R002", "S001"]}
    assert main(["rotation", "export", "--date", DAY.isoformat(), "--out", str(tmp_path / "rio"),
                 "--config", config, "--port", "rio"]) == 0
    written = capsys.readouterr().out.split()
    assert written and all("R00" in open(p, encoding="utf-8").read() for p in written)
    assert not any("S001" in open(p, encoding="utf-8").read() for p in written)
    month = f"{DAY:%Y-%m}"
    assert main(["rotation", "fairness", "--month", month, "--config", config, "--port", "rio"]) == 0
    rows = _lines(capsys.readouterr().out)
    assert {r["registration"]: r["shifts"] for r in rows[:-1]} == {"R001": 1, "R002": 1, "R003": 0}
    assert main(["rotation", "fairness", "--month", month, "--config", config]) == 0
    assert {r["registration"] for r in _lines(capsys.readouterr().out)[:-1]} == set(ROSTER)
    nxt = DAY.replace(month=DAY.month + 1, day=1).isoformat()
    sizing = {}
    for ports in ((), ("rio",), ("santos",)):
        assert main(["rotation", "sizing", "--month", nxt, "--config", config,
                     *(a for p in ports for a in ("--port", p))]) == 0
        sizing[ports] = _lines(capsys.readouterr().out)[0]
    assert sizing[("rio",)] != sizing[("santos",)] and sizing[()] not in (sizing[("rio",)], sizing[("santos",)])
    assert [sizing[p]["registered"] for p in ((), ("rio",), ("santos",))] == [6, 3, 3]


def test_a_port_the_config_does_not_serve_or_port_without_config_is_refused(ledger, migrated_url, tmp_path, capsys):
    config = _config(tmp_path, migrated_url)
    capsys.readouterr()
    for args in (["list", "--date", DAY.isoformat()], ["export", "--date", DAY.isoformat(), "--out", str(tmp_path / "o")],
                 ["fairness", "--month", f"{DAY:%Y-%m}"], ["sizing", "--month", DAY.isoformat()]):
        assert main(["rotation", *args, "--config", config, "--port", "rio", "--port", "recife"]) == 2, args
        err = capsys.readouterr().err
        assert "port(s) recife not served by this office (ports: santos, rio)" in err, err  # rio is served
        assert main(["rotation", *args, "--db", migrated_url, "--port", "rio"]) == 2, args
        assert "--config" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_the_real_entry_point_lists_one_port(ledger, migrated_url, tmp_path):
    """``portgate rotation list --port`` in a process of its own (the console script's module)."""
    import subprocess
    import sys

    config = _config(tmp_path, migrated_url)
    path = write_csv(tmp_path / "req.csv", REQ_COLUMNS, [req_row("S", gate_id=SANTOS_GATE, workers="1"),
                                                        req_row("R", gate_id=RIO_GATE, workers="1")])
    assert main(["rotation", "dispatch", "--at", DISPATCH_AT.isoformat(), "--date", DAY.isoformat(),
                 "--requisitions", str(path), "--actor", "disp", "--config", config]) == 0
    run = subprocess.run([sys.executable, "-m", "app.cli", "rotation", "list", "--date", DAY.isoformat(),
                          "--config", config, "--port", "santos"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert [r["registration"] for r in _lines(run.stdout)] == ["S001"]
    import os

    bad = subprocess.run([sys.executable, "-m", "app.cli", "rotation", "list", "--date", DAY.isoformat(),
                          "--config", config, "--port", "recife"], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PORTGATE_LANG": "pt"})
    assert bad.returncode == 2 and "porto(s) recife não atendido(s) por este escritório (portos: santos, rio)" in bad.stderr


def test_a_config_not_serving_a_port_named_only_by_events_is_refused(migrated_url):
    """Workers all NULL (the home port of whoever reads), a rio gate's events: a config of santos
    alone is refused (``need_served``), one naming rio too is not."""
    from central.rotation.ports import need_served

    engine = make_engine(migrated_url)
    try:
        with engine.begin() as conn:
            write_batch(conn, [_tap("rio", RIO, 1, DISPATCH_AT - dt.timedelta(days=5), [])], [], DISPATCH_AT)
            update_progress(conn, [RIO_GATE], DISPATCH_AT)
        with Session(engine) as s:
            with pytest.raises(BadInput, match=r"the ledger holds port\(s\) rio that this config does not serve"):
                need_served(s, ("santos",))
            need_served(s, SERVED)
    finally:
        engine.dispose()


def test_a_config_of_another_home_port_is_refused_while_null_port_workers_remain(ledger):
    """santos's config (home santos) reads the NULL-port workers first and records santos as the
    ledger's home port (``ledger_home``, 0034); a config of rio's home with the same ports is then
    refused (it would read S001/S003 as rio's), until they are given their port."""
    from central.ledger.schema import ledger_home
    from central.rotation.ports import need_served

    with Session(ledger) as s, s.begin():
        need_served(s, SERVED)
    with Session(ledger) as s, s.begin():
        assert s.execute(select(ledger_home.c.port)).scalars().all() == ["santos"]
        with pytest.raises(BadInput, match="workers without a port are santos's .*not rio's"):
            need_served(s, ("rio", "santos"))
        s.execute(workers.update().where(workers.c.port.is_(None)).values(port="santos"))
        need_served(s, ("rio", "santos"))
