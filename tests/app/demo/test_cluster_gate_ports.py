"""The cluster demo's gates are registered with their own port (issue 37 item 5;
``app.demo.cluster_office.register_gates``, the web central.toml's ``port_keys_dirs``): before any gate has
sent an event, paranaguá's office user sees paranaguá's gates on the live page and santos's user
does not (without the registration they were the home port's, santos's, until their first event).
The ledger as ``portgate demo --cluster`` prepares it (SQLite here), the demo's web application
(``DemoWeb``, a real uvicorn server) on the web central.toml naming both ports, the runs of both
ports built as ``ClusterDay.start`` builds them (not started: no NATS or Patroni needed)."""

from __future__ import annotations

import datetime as dt
import json
from zoneinfo import ZoneInfo

import pytest

from app.demo.cluster import SECOND_PORT, ClusterPortRun, add_port_users
from app.demo.cluster_office import register_gates
from app.demo.scenario import DEFAULT_DIR, Scenario
from app.demo.second_port import derive
from app.demo.web import DemoWeb, prepare_ledger
from central.ingest.nats_users import STATE_FILE, registered_ports
from edge.scripted_clock import set_scripted_time
from tests.app.demo.test_cluster_ports import PARANAGUA_GATES, SANTOS_GATES, _gates, _live


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    """(url of the web application, the paranaguá run, the santos run): no gate has sent an event."""
    root = tmp_path_factory.mktemp("cluster-gates")
    scenario = Scenario(DEFAULT_DIR)
    second, ids = derive(scenario, root / f"scenario-{SECOND_PORT}", SECOND_PORT)
    url = f"sqlite:///{root / 'ledger.db'}"
    runs = [ClusterPortRun(root / SECOND_PORT, second, nats=None, ledger_url=url, ids=ids, first_node=1),
            ClusterPortRun(root / "santos", scenario, nats=None, ledger_url=url, serves_web=True)]
    runs[1].peers = [runs[0]]
    for run in runs:  # what ClusterPortRun.start does first
        register_gates(run.dir / "keys", run.scenario.spec.port, run.gate_ids())
    day_start = dt.datetime.combine(scenario.spec.day, dt.time(0), ZoneInfo(scenario.spec.timezone))
    prepare_ledger(url, second, day_start, accounts=False)
    prepare_ledger(url, scenario, day_start)
    central = runs[1].dir / "central.toml"
    central.write_text(f'database_url = "{url}"\nport = "santos"\nkeys_dir = "{runs[1].dir / "keys"}"\n\n'
                       f'[web]\ntz = "{scenario.spec.timezone}"\n')
    config = runs[1]._web_config()  # web_config with ports and port_keys_dirs, as the demo writes it
    add_port_users(url, runs[1].served_ports())
    clock = root / "clock.json"
    set_scripted_time(clock, day_start.astimezone(dt.UTC) + dt.timedelta(hours=1, minutes=5))
    web = DemoWeb(url, [clock], scenario.spec.timezone, config)  # no extra dirs: what office serve reads
    base = web.start()
    yield base, runs
    web.stop()


def test_each_gate_is_registered_with_its_own_port(office):
    _base, (paranagua, santos) = office
    assert registered_ports(paranagua.dir / "keys") == dict.fromkeys(paranagua.gate_ids(), SECOND_PORT)
    assert {g.gate_id for g in paranagua.scenario.spec.gates} < set(paranagua.gate_ids())
    assert set(registered_ports(santos.dir / "keys").values()) == {"santos"}
    from central.config import load_central_config

    web = load_central_config(santos._web_config())
    assert web.registry_dirs == (str(santos.dir / "keys"), str(paranagua.dir / "keys"))
    state = json.loads((paranagua.dir / "keys" / STATE_FILE).read_text())
    assert state["port"] == SECOND_PORT and set(PARANAGUA_GATES) <= set(state["users"])


def test_a_ports_user_sees_his_gates_before_their_first_event(office):
    base, _runs = office
    paranagua = _gates(_live(base, "escritorio-paranagua"))
    assert set(PARANAGUA_GATES) <= paranagua and not paranagua & set(SANTOS_GATES), paranagua
    santos = _gates(_live(base, "escritorio-santos"))
    assert set(SANTOS_GATES) <= santos and not santos & set(PARANAGUA_GATES), santos
    everyone = _gates(_live(base, "auditor"))
    assert set(SANTOS_GATES) | set(PARANAGUA_GATES) <= everyone


def test_a_gate_only_the_escala_names_is_its_ports_too(office):
    """pr-lagoa (Lagoa Azul, IMO 9400003) never connects: registered with paranaguá's gates, it and
    its ship are not shown to santos's clerk (before: the home port's, on santos's live page and in
    his escala form's ships)."""
    base, (paranagua, _santos) = office
    santos_live = _live(base, "escritorio-santos")
    assert "pr-lagoa" not in _gates(santos_live) and "9400003" not in santos_live
    assert "pr-lagoa" in _gates(_live(base, "escritorio-paranagua"))
    assert "pr-lagoa" in paranagua.gate_ids() and "pr-lagoa" in registered_ports(paranagua.dir / "keys")
