"""Two ports' configs on one ledger (issue 37 item 4): a NULL ``workers.port`` is the home port of the
config reading it, so the cluster demo stores every worker's port, and ``portgate rotation`` with a
config that does not serve every port the ledger names refuses (nothing dispatched) instead of
reading another port's workers as its own. Before: ``rotation dispatch --config paranagua/central.toml``
(``port = "paranagua"``, no ``ports``) filled a requisition at paranaguá's gate pr-aurora with a
santos worker. The ledger as ``portgate demo --cluster`` prepares it (``prepare_ledger`` of both
ports), real SQLite and PostgreSQL, through the real entry point (``app.cli.main``)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from app.cli import main
from app.demo.cluster import SECOND_PORT
from app.demo.cluster_office import register_gates
from app.demo.scenario import DEFAULT_DIR, Scenario
from app.demo.second_port import derive
from app.demo.web import prepare_ledger
from central.db import make_engine
from central.registry.schema import workers
from central.rotation.schema import escala
from tests.central.registry.conftest import REQ_COLUMNS, req_row, write_csv


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    """(santos scenario, paranaguá scenario, its id map, the day's start, a folder of each port's
    keys dir with its gates registered): the cluster demo's two ports, the second derived once for
    the module (read only by the tests), the gates registered once (~0.5 s each: copied per test)."""
    scenario = Scenario(DEFAULT_DIR)
    second, ids = derive(scenario, tmp_path_factory.mktemp("scenario") / f"scenario-{SECOND_PORT}", SECOND_PORT)
    day_start = dt.datetime.combine(scenario.spec.day, dt.time(0), ZoneInfo(scenario.spec.timezone))
    registered = tmp_path_factory.mktemp("registered")
    for sc in (scenario, second):
        register_gates(registered / sc.spec.port / "keys", sc.spec.port, [g.gate_id for g in sc.spec.gates])
    return scenario, second, ids, day_start, registered


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def cluster(request, scenarios, ledgers, tmp_path):
    """(url, santos scenario, paranaguá scenario, its id map): a ledger of its own, a copy of the
    shared ledger of both demo ports (``prepare_ledger`` of each, made once per session and kind by
    ``ledgers``: tests/central/conftest.py), each port's keys dir with its gates registered."""
    scenario, second, ids, day_start, registered = scenarios

    def fill(engine) -> None:
        prepare_ledger(engine.url.render_as_string(hide_password=False), second, day_start, accounts=False)
        prepare_ledger(engine.url.render_as_string(hide_password=False), scenario, day_start)

    url = ledgers.url(request, request.param, tmp_path, "rotation_home_port", fill)
    for sc in (scenario, second):
        shutil.copytree(registered / sc.spec.port, tmp_path / sc.spec.port)
    return url, scenario, second, ids


def _config(tmp_path, url: str, port: str, ports: tuple[str, ...] = ()) -> str:
    other = {p: tmp_path / p / "keys" for p in ports if p != port}
    text = f'database_url = "{url}"\nport = "{port}"\nkeys_dir = "{tmp_path / port / "keys"}"\n'
    if ports:
        text += "ports = [" + ", ".join(f'"{p}"' for p in ports) + "]\n"
    if other:
        text += "[port_keys_dirs]\n" + "".join(f'{p} = "{d}"\n' for p, d in other.items())
    path = tmp_path / f"central-{port}-{len(ports)}.toml"
    path.write_text(text)
    return str(path)


def _dispatch_args(tmp_path, second) -> list[str]:
    gate = second.spec.gates[0].gate_id
    day = second.spec.day + dt.timedelta(days=3)
    path = write_csv(tmp_path / "req.csv", REQ_COLUMNS,
                     [req_row("A9", date=day.isoformat(), gate_id=gate, ship="9400001", workers="1")])
    at = dt.datetime.combine(second.spec.day, dt.time(12), dt.UTC).isoformat()
    return ["rotation", "dispatch", "--at", at, "--date", day.isoformat(), "--requisitions", str(path),
            "--actor", "disp"]


def _taken(url: str) -> list[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as c:
            return sorted(c.execute(select(escala.c.registration).where(escala.c.requisition_id.is_not(None))).scalars())
    finally:
        engine.dispose()


def test_the_cluster_demo_stores_every_workers_port(cluster):
    url, scenario, second, _ids = cluster
    engine = make_engine(url)
    try:
        with engine.connect() as c:
            ports = set(c.execute(select(workers.c.port)).scalars())
    finally:
        engine.dispose()
    assert ports == {scenario.spec.port, second.spec.port}


def test_a_config_not_serving_every_port_of_the_ledger_is_refused(cluster, tmp_path, capsys):
    url, scenario, second, ids = cluster
    args = _dispatch_args(tmp_path, second)
    capsys.readouterr()
    assert main([*args, "--config", _config(tmp_path, url, second.spec.port)]) == 2
    err = capsys.readouterr().err
    assert "santos" in err and "does not serve" in err, err
    assert _taken(url) == []
    both = _config(tmp_path, url, second.spec.port, (second.spec.port, scenario.spec.port))
    assert main([*args, "--config", both]) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["dispatched"] == 1
    taken = _taken(url)
    assert len(taken) == 1 and taken[0] in set(ids.registrations.values()), taken
