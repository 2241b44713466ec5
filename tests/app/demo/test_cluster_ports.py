"""The cluster demo's office by port (issue 37 item 4): its web application runs on a central.toml
naming both ports (``app.demo.cluster.web_config``) and its users have a port scope
(``add_port_users``). The ledger as ``portgate demo --cluster`` prepares it (both ports' registry,
escala and ship calls on one ledger, here SQLite), one tap of each port's gate ingested under its
port, and the demo's web application (``DemoWeb``, a real uvicorn server) served on it: the one-port
user of paranagua sees only paranagua's gates and ships on the live page, santos's only santos's,
the auditor both (with the port selector)."""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from zoneinfo import ZoneInfo

import httpx
import pytest

from app.demo.cluster import SECOND_PORT, add_port_users, web_config
from app.demo.scenario import DEFAULT_DIR, Scenario
from app.demo.second_port import derive
from app.demo.web import DEMO_PASSWORD, DemoWeb, prepare_ledger
from central.db import make_engine
from central.ingest.event_store import Accepted, update_progress, write_batch
from edge.scripted_clock import set_scripted_time
from wire.events import Event, TapPayload, encode, new_event_id, sign

SANTOS_GATES, PARANAGUA_GATES = ("g-aurora", "g-nordic"), ("pr-aurora", "pr-nordic")


def _tap(port: str, gate: str, at: dt.datetime) -> Accepted:
    payload = TapPayload(uid="0A04A10001", reader_id=f"{gate}-control", reader_kind="control", decision="admit",
                         flags=[], message="", rules_failed=[], registration=None, card_kind="control")
    event = sign(Event(event_id=new_event_id(), port=port, gate_id=gate, boot_id="b1", seq=1, occurred_at=at,
                       clock_trusted=True, mono_ns=1, payload=payload), b"k")
    return Accepted(f"portgate/v1/{port}/gate/{gate}/events", event, encode(event))


@pytest.fixture(scope="module")
def cluster_office(tmp_path_factory):
    """The cluster demo's ledger and office web application; yields (url, the logins added)."""
    root = tmp_path_factory.mktemp("cluster-office")
    scenario = Scenario(DEFAULT_DIR)
    second, _ids = derive(scenario, root / f"scenario-{SECOND_PORT}", SECOND_PORT)
    url = f"sqlite:///{root / 'ledger.db'}"
    day_start = dt.datetime.combine(scenario.spec.day, dt.time(0), ZoneInfo(scenario.spec.timezone))
    prepare_ledger(url, second, day_start, accounts=False)  # as the cluster demo: the second port first
    prepare_ledger(url, scenario, day_start)
    at = day_start.astimezone(dt.UTC) + dt.timedelta(hours=1)
    engine = make_engine(url)
    with engine.begin() as conn:  # each gate's first event, ingested under its port
        for port, gates in (("santos", SANTOS_GATES), (SECOND_PORT, PARANAGUA_GATES)):
            write_batch(conn, [_tap(port, gate, at) for gate in gates], [], at)
            update_progress(conn, list(gates), at)
    engine.dispose()
    central = root / "central.toml"
    central.write_text(f'database_url = "{url}"\nport = "santos"\nkeys_dir = "{root / "keys"}"\n\n'
                       f'[web]\ntz = "{scenario.spec.timezone}"\n')
    ports = ("santos", SECOND_PORT)
    config = web_config(central, ports)
    logins = add_port_users(url, ports)
    clock = root / "clock.json"
    set_scripted_time(clock, at + dt.timedelta(minutes=5))
    web = DemoWeb(url, [clock], scenario.spec.timezone, config)
    base = web.start()
    yield base, logins, config
    web.stop()


def _live(base: str, login: str) -> str:
    with httpx.Client(base_url=base, follow_redirects=False, timeout=60) as client:
        page = client.get("/login").text
        token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
        done = client.post("/login", data={"login": login, "password": DEMO_PASSWORD, "csrf_token": token, "next": "/"})
        assert done.status_code == 303, done.text
        live = client.get("/")
        assert live.status_code == 200, live.text
        return live.text


def _gates(html: str) -> set[str]:
    return set(re.findall(r'data-gate="([^"]+)"', html))


def test_the_web_config_names_both_ports_and_the_users_their_scope(cluster_office):
    _base, logins, config = cluster_office
    assert tomllib.loads(config.read_text())["ports"] == ["santos", "paranagua"]
    assert logins == ("escritorio-santos", "escritorio-paranagua", "auditor")


def test_a_one_port_demo_user_sees_only_his_ports_live_page(cluster_office):
    base, _logins, _config = cluster_office
    paranagua = _live(base, "escritorio-paranagua")
    assert _gates(paranagua) == set(PARANAGUA_GATES), _gates(paranagua)
    assert "9400001" in paranagua and "9300001" not in paranagua  # its port's ships only
    assert 'id="port-select"' not in paranagua  # one port: no selector
    santos = _live(base, "escritorio-santos")
    assert _gates(santos) >= set(SANTOS_GATES) and not _gates(santos) & set(PARANAGUA_GATES), _gates(santos)
    assert "9300001" in santos and "9400001" not in santos


def test_the_auditor_and_the_demos_own_logins_see_every_port(cluster_office):
    base, _logins, _config = cluster_office
    for login in ("auditor", "escritorio", "demo"):
        html = _live(base, login)
        assert _gates(html) >= set(SANTOS_GATES) | set(PARANAGUA_GATES), (login, _gates(html))
        assert 'id="port-select"' in html, login
