"""The live page's gates by the port of their status (issue 37 item 4; ``gate_status`` keyed by port +
gate id, 0035), on SQLite and PostgreSQL, through the ingest's own ``central.ingest.status.store``:
a gate id whose statuses came under two ports is one card per port, each shown to that port's clerk
only (with its own state), an all-ports user sees both with their port; a gate that connected but
sent no event yet, registered nowhere, is its status's port's (before 0035 it was "sem porto
registrado" and hidden from its own port's clerk)."""

from __future__ import annotations

import datetime as dt
import re

from sqlalchemy.orm import Session

from central.ingest import status
from central.web.users import add_user
from tests.central.web.conftest import PASSWORD
from tests.central.web.test_ports_web import SANTOS, T0, _app, _client, two_ports  # noqa: F401 (a fixture)
from wire.downlink import GateStatus

TWIN = "g-twin"  # one gate id at santos and at rio
FRESH = "rio-fresh"  # connected at rio, no event yet, no add-gate --port


def _store(engine) -> None:
    def st(port: str, gate_id: str, state: str) -> GateStatus:
        return GateStatus(port=port, gate_id=gate_id, boot_id="b", state=state, reason="birth", at=T0)

    with engine.begin() as conn:
        status.store(conn, [st("santos", TWIN, "online"), st("rio", TWIN, "offline"), st("rio", FRESH, "online")], T0)
    with Session(engine) as s, s.begin():
        add_user(s, "clerk-rio", role="office", password=PASSWORD, actor="test", ports="rio")


def _cards(html: str) -> list[tuple[str, str, str]]:
    """(gate id, port, state) of every gate card of the live page."""
    return [(g, p, st) for g, st, p in re.findall(
        r'<article class="gate[^"]*" data-gate="([^"]+)" data-state="([^"]+)" data-readers="[^"]*" data-port="([^"]*)"',
        html)]


def test_each_ports_clerk_sees_the_gates_of_his_ports_statuses_only(two_ports):
    _store(two_ports)
    app = _app(two_ports)
    santos = _cards(_client(app, "clerk-santos").get("/").text)
    assert (TWIN, "santos", "online") in santos and SANTOS["gate"] in {g for g, _p, _s in santos}
    assert all(g != FRESH for g, _p, _s in santos) and (TWIN, "rio", "offline") not in santos, santos
    rio = _cards(_client(app, "clerk-rio").get("/").text)
    assert (TWIN, "rio", "offline") in rio and (FRESH, "rio", "online") in rio, rio
    assert all(p != "santos" for _g, p, _s in rio) and SANTOS["gate"] not in {g for g, _p, _s in rio}, rio
    every = _client(app, "auditor-all").get("/").text
    cards = _cards(every)
    assert {(TWIN, "santos", "online"), (TWIN, "rio", "offline"), (FRESH, "rio", "online")} <= set(cards), cards
    assert 'data-port="none"' not in every  # a status's port is a port: not "sem porto registrado"
    assert re.search(rf'data-gate="{FRESH}".*?<small class="port">rio</small>', every, re.S)


def test_a_one_port_office_shows_its_statuses_without_port_labels(two_ports):
    _store(two_ports)
    html = _client(_app(two_ports, ports=("santos",)), "legacy").get("/").text
    assert (TWIN, "santos", "online") in _cards(html)
    assert '<small class="port">' not in html
