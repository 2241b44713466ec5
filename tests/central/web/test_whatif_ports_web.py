"""The what-if per port (issue 37 item 4; ``central.web.routes.whatif``) on the two-port office of
test_ports_web (santos home, rio), over the real app and the real gate what-if (the registry's
copies): a port's clerk replays his port's gates' taps only (every gate: his; another port's gate
answers exactly as a gate the ledger does not know, for the rulebook in force, a rulebook run and a
parameter run), and pays again his port's workers' statements only (a statement follows its
worker's port, as on the pay page); an all-ports user runs both over every port. SQLite and
PostgreSQL."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from app.whatif import web_gate_what_if
from central.config import PublishSettings, WebSettings
from central.web.app import create_app
from tests.central.web.conftest import SECRET, csrf_of
from tests.central.web.test_pay_ports_web import RIO_WORKER, pay_office  # noqa: F401 (a fixture)
from tests.central.web.test_ports_web import RIO, SANTOS, T0, _choose, _client, two_ports  # noqa: F401

BOTH = pytest.mark.parametrize("engine", ["sqlite", "postgresql"], indirect=True)
GOOD = (Path(__file__).resolve().parents[3] / "config" / "rulebooks" / "gate-default.toml").read_text(encoding="utf-8")
DAY = T0.date().isoformat()  # santos's and rio's taps (test_ports_web)


def _app(engine):
    return create_app(engine, WebSettings(), SECRET, now=lambda: T0 + dt.timedelta(days=3), background=False,
                      ports=("santos", "rio"), gate_what_if=web_gate_what_if(PublishSettings(source="registry")))


def _gates(html: str) -> set[str]:
    return set(re.findall(r'data-gate="([^"]*)"', html))


def _gate_run(c, gate: str = "", **extra):
    token = csrf_of(c.get("/whatif").text)
    return c.post("/whatif/gate", data={"csrf_token": token, "day": DAY, "gate": gate, "rulebook": GOOD,
                                        "directions": "", **extra})


def _param_run(c, gate: str):
    token = csrf_of(c.get("/whatif").text)
    return c.post("/whatif/param", data={"csrf_token": token, "day": DAY, "gate": gate, "directions": "",
                                         "param": "g7.rest_hours", "value": "8"})


def _alike(theirs: str, missing: str, gate: str) -> None:
    assert theirs.replace(gate, "X") == missing.replace("g-nope", "X")


@BOTH
def test_a_ports_clerk_replays_his_ports_gates_only(two_ports):
    app = _app(two_ports)
    c = _client(app, "clerk-santos")
    r = _gate_run(c)
    assert r.status_code == 200, r.text[-500:]
    assert _gates(r.text) == {SANTOS["gate"]}
    r = _param_run(c, "")
    assert r.status_code == 200 and _gates(r.text) == {SANTOS["gate"]}
    everyone = _client(app, "auditor-all")
    assert _gates(_gate_run(everyone).text) == {SANTOS["gate"], RIO["gate"]}
    _choose(everyone, "rio")
    assert _gates(_gate_run(everyone).text) == {RIO["gate"]}


@BOTH
def test_another_ports_gate_is_answered_as_an_unknown_gate(two_ports):
    c = _client(_app(two_ports), "clerk-santos")
    rio = RIO["gate"]
    theirs, missing = _gate_run(c, rio), _gate_run(c, "g-nope")
    assert theirs.status_code == missing.status_code == 400 and "não é conhecido" in theirs.text
    _alike(theirs.text, missing.text, rio)
    theirs, missing = _param_run(c, rio), _param_run(c, "g-nope")
    assert theirs.status_code == missing.status_code == 400
    _alike(theirs.text, missing.text, rio)
    theirs, missing = c.get(f"/whatif?gate={rio}&day={DAY}"), c.get(f"/whatif?gate=g-nope&day={DAY}")
    assert theirs.status_code == missing.status_code == 200
    _alike(theirs.text, missing.text, rio)
    assert _gate_run(c, SANTOS["gate"]).status_code == 200  # his own gate: as before


def _pay(c) -> tuple[set[str], str]:
    token = csrf_of(c.get("/whatif").text)
    r = c.post("/whatif/pay", data={"csrf_token": token, "from": "2026-03-01", "to": "2026-03-31",
                                    "rulebook": "example-cct-2026"})
    assert r.status_code == 200, r.text[-500:]
    return set(re.findall(r'data-registration="([^"]*)"', r.text)), r.text


@BOTH
def test_a_ports_clerk_pays_again_his_ports_workers_only(pay_office):
    app = _app(pay_office)
    santos, text = _pay(_client(app, "clerk-santos"))
    assert santos and RIO_WORKER not in santos
    counted = re.search(r'id="pay-summary">[^:]*: \d+ de (\d+)', text)
    rio, rio_text = _pay(_client(app, "clerk-rio"))
    assert rio == {RIO_WORKER}
    everyone, all_text = _pay(_client(app, "auditor-all"))
    assert everyone == santos | rio
    total = int(re.search(r'id="pay-summary">[^:]*: \d+ de (\d+)', all_text)[1])
    mine = int(counted[1]) + int(re.search(r'id="pay-summary">[^:]*: \d+ de (\d+)', rio_text)[1])
    assert total == mine and int(counted[1]) < total  # each port's statements, summing to everyone's
