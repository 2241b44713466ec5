"""Enrol mode on an office of several ports (issues 34 and 37; ``registry_scope.gate_offered``): the
worker page's gate list (``en-gate_id``) and its panel offer only the gates of the worker's port, and
a start naming another port's gate (online or not) or a gate that does not exist is refused alike
(403, no session, nothing sent). On the two-port ledger of test_ports_web.py (santos home, rio)."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.config import WebSettings
from central.ledger.schema import gate_status
from central.registry.schema import audit_log
from central.web.app import create_app
from central.web.users import add_user
from tests.central.web.conftest import PASSWORD, SECRET, csrf_of
from tests.central.web.test_ports_web import RIO, SANTOS, T0, _client, two_ports  # noqa: F401 (a fixture)

# the gates' last status: each port's gate (its events say its port), a rio gate with no event yet
# (registered at rio by add-gate --port) and a gate whose port nobody knows
STATUS = {SANTOS["gate"]: "online", RIO["gate"]: "online", "rio-new": "offline", "nowhere": "online"}
# the port each status row is stored under (0035); "nowhere": a row made before 0035 of a gate with no event
STATUS_PORT = {SANTOS["gate"]: "santos", RIO["gate"]: "rio", "rio-new": "rio", "nowhere": ""}


@pytest.fixture
def office(two_ports):
    with Session(two_ports) as s, s.begin():
        add_user(s, "clerk-rio", role="office", password=PASSWORD, actor="test", ports="rio")
        add_user(s, "office-all", role="office", password=PASSWORD, actor="test", ports="*")
        for gate_id, state in STATUS.items():
            s.execute(gate_status.insert().values(port=STATUS_PORT[gate_id], gate_id=gate_id, state=state,
                                                  reason="birth", boot_id="b",
                                                  since=T0, at=T0, received_at=T0))
    return two_ports


@pytest.fixture
def sent():
    return []


@pytest.fixture
def app(office, sent):
    app = create_app(office, WebSettings(enrol_timeout_s=60), SECRET, now=lambda: T0, background=False,
                     send_command=lambda gate_id, cmd: sent.append((gate_id, cmd)), ports=("santos", "rio"))
    app.state.web.gate_registry = {"rio-new": "rio"}
    return app


def _offered(html: str) -> list[str]:
    select_ = re.search(r'<select id="en-gate_id".*?</select>', html, re.S)
    assert select_, "no gate list on the page"
    return re.findall(r'<option value="([^"]+)"', select_.group(0))


def _starts(engine) -> int:
    with engine.connect() as c:
        return len(c.execute(select(audit_log.c.id).where(audit_log.c.action == "enrol.start")).all())


@pytest.mark.parametrize("user, reg, want", [
    ("clerk-santos", SANTOS["worker"], [SANTOS["gate"]]),
    ("clerk-rio", RIO["worker"], ["rio-new", RIO["gate"]]),
    # every port in view: the worker's port's gates and a gate of no known port, not the other port's
    ("office-all", SANTOS["worker"], ["nowhere", SANTOS["gate"]]),
    ("office-all", RIO["worker"], ["nowhere", "rio-new", RIO["gate"]]),
])
def test_the_gate_list_offers_the_workers_ports_gates_only(app, user, reg, want):
    c = _client(app, user)
    assert sorted(_offered(c.get(f"/workers/{reg}").text)) == sorted(want)
    assert sorted(_offered(c.get(f"/workers/{reg}/enrol").text)) == sorted(want)  # the panel htmx polls


@pytest.mark.parametrize("gate", [RIO["gate"], "rio-new", "no-such-gate"])  # online, offline, none
def test_a_start_at_another_ports_gate_is_refused_and_nothing_is_sent(app, office, sent, gate):
    c = _client(app, "clerk-santos")
    token = csrf_of(c.get(f"/workers/{SANTOS['worker']}").text)
    r = c.post(f"/workers/{SANTOS['worker']}/enrol", data={"gate_id": gate, "kind": "control", "csrf_token": token})
    assert r.status_code == 403, r.text
    assert 'id="en-gate_id-error"' in r.text
    assert f"o portaló {gate} não é um portaló do porto de {SANTOS['worker']}: escolha um da lista" in r.text
    assert sent == [] and _starts(office) == 0
    assert RIO["gate"] not in _offered(r.text)  # the refused page's list is the santos one too
    r = c.post(f"/workers/{SANTOS['worker']}/enrol",
               data={"gate_id": SANTOS["gate"], "kind": "control", "csrf_token": token})
    assert r.status_code == 303 and [g for g, _ in sent] == [SANTOS["gate"]]  # his own port's gate: as before


def test_an_all_ports_clerk_cannot_start_a_rio_gate_for_a_santos_worker(app, office, sent):
    c = _client(app, "office-all")
    token = csrf_of(c.get(f"/workers/{SANTOS['worker']}").text)
    r = c.post(f"/workers/{SANTOS['worker']}/enrol", data={"gate_id": RIO["gate"], "kind": "control",
                                                           "csrf_token": token})
    assert r.status_code == 403 and sent == [] and _starts(office) == 0
