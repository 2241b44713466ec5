"""Enrol mode on a chosen gate from the worker page (issue 34), the office's side on SQLite and
PostgreSQL: the command sent to the gate, the gate's ENROL read offered and bound (``issue_card``),
every step audited, and each failure path: an offline gate, a gate already enrolling, the broker not
taking the command, the timeout, a known card read meanwhile, a confirm with no card. The gate's
side and the whole path through mosquitto are in test_enrol_gate_browser.py; here the sender is a
recorder (and a broker fault a real broker does not give on demand)."""

from __future__ import annotations

import datetime as dt
import itertools
import re

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.ingest.event_store import Accepted, write_batch
from central.ledger.schema import gate_status
from central.registry.schema import audit_log, cards
from central.registry.store import transition_card
from central.web.app import create_app
from central.config import WebSettings
from portgate.errors import BrokerUnavailable
from tests.central.web.conftest import SECRET, engine_of, logged_in
from wire.events import Event, TapPayload, encode, new_event_id, sign

NEW = "0C0C0C0C01"
_seq = itertools.count(1)


@pytest.fixture
def sent():
    return []


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """The web suite's ``engine``; a test that uses ``registry`` starts with the demo registry in it
    (a copy of a ledger the session filled once: tests/central/web/conftest.py's FILLS, issue 32)."""
    yield from engine_of(request, tmp_path, ledgers, "demo_registry" if "registry" in request.fixturenames else None)


@pytest.fixture
def registry(engine, users, clock):
    with Session(engine) as s, s.begin():
        transition_card(s, "0A04A10008", "lost", actor="t", now=clock())  # V008 needs a new control card
        for gate_id, state in (("g-c", "online"), ("g-b", "offline")):
            s.execute(gate_status.insert().values(port="santos", gate_id=gate_id, state=state, reason="birth", boot_id="b",
                                                  since=clock(), at=clock(), received_at=clock()))
    return engine


def _app(engine, clock, sender):
    return create_app(engine, WebSettings(enrol_timeout_s=60), SECRET, now=clock, background=False,
                      send_command=sender)


@pytest.fixture
def office(registry, clock, sent):
    c, token = logged_in(_app(registry, clock, lambda gate_id, cmd: sent.append((gate_id, cmd))), "office")
    return c, token


def _tap(engine, uid, *, rules, registration=None, gate_id="g-c", at=None):
    at = at or dt.datetime.now(dt.UTC)
    payload = TapPayload(uid=uid, reader_id="r-control", reader_kind="control", decision="deny", rules_failed=rules,
                         message="NEGADO", registration=registration, card_kind="control" if registration else None)
    event = sign(Event(event_id=new_event_id(), port="santos", gate_id=gate_id, boot_id="b1", seq=next(_seq),
                       occurred_at=at, clock_trusted=True, mono_ns=1, payload=payload), b"k")
    with engine.begin() as conn:
        write_batch(conn, [Accepted(f"portgate/v1/santos/gate/{gate_id}/events", event, encode(event))], [], at)
    return event.event_id


def _actions(engine, reg):
    with engine.connect() as c:
        return [(r.action, r.actor) for r in c.execute(
            select(audit_log).where(audit_log.c.subject == reg, audit_log.c.action.like("enrol.%")).order_by(audit_log.c.id))]


def _start(c, token, reg="V008", gate="g-c", kind="control"):
    return c.post(f"/workers/{reg}/enrol", data={"gate_id": gate, "kind": kind, "csrf_token": token})


def _session_id(html):
    return int(re.search(r'/enrol/(\d+)/cancel', html).group(1))


def test_the_gates_enrol_read_is_offered_and_bound_to_the_worker(office, registry, clock, sent):
    c, token = office
    r = _start(c, token)
    assert r.status_code == 303, r.text
    [(gate_id, cmd)] = sent
    assert (gate_id, cmd.action, cmd.registration, cmd.timeout_s) == ("g-c", "start", "V008", 60)
    assert cmd.until == clock() + dt.timedelta(seconds=60) and cmd.session.startswith("enrol-")
    panel = c.get("/workers/V008/enrol").text
    assert 'id="enrol-waiting"' in panel and 'hx-trigger="every 2s"' in panel
    event_id = _tap(registry, NEW, rules=["G1", "ENROL"])
    panel = c.get("/workers/V008/enrol").text
    assert f'data-uid="{NEW}"' in panel and f"Vincular o cartão {NEW} a V008" in panel
    sid = _session_id(panel)
    r = c.post(f"/workers/V008/enrol/{sid}/confirm", data={"csrf_token": token})
    assert r.status_code == 303 and r.headers["location"] == f"/workers/V008?card=issued-{NEW}"
    with registry.connect() as conn:
        row = conn.execute(select(cards).where(cards.c.uid == NEW)).one()
    assert (row.registration, row.kind, row.status) == ("V008", "control", "active")
    assert _actions(registry, "V008") == [("enrol.start", "web:office"), ("enrol.read", "gate:g-c"),
                                          ("enrol.bound", "web:office")]
    with registry.connect() as conn:
        read = conn.execute(select(audit_log.c.detail).where(audit_log.c.action == "enrol.read")).scalar()
    assert (read["uid"], read["gate_id"], read["event_id"]) == (NEW, "g-c", event_id)
    page = c.get("/workers/V008").text
    assert 'data-ended="bound"' in page and 'id="enrol-start"' in page  # another may start now


def test_an_offline_gate_is_refused_beside_the_gate_field_and_nothing_is_sent(office, registry, sent):
    c, token = office
    r = _start(c, token, gate="g-b")
    assert r.status_code == 400
    assert 'id="en-gate_id-error"' in r.text and "o portaló g-b está sem conexão" in r.text
    assert 'aria-invalid="true"' in r.text and sent == [] and _actions(registry, "V008") == []


def test_a_gate_already_enrolling_refuses_a_second_worker(office, registry, sent):
    c, token = office
    assert _start(c, token).status_code == 303
    r = _start(c, token, reg="V009")
    assert r.status_code == 400 and "já está em modo de cadastro para outro trabalhador" in r.text
    assert len(sent) == 1


def test_a_command_the_broker_does_not_take_ends_the_session_and_says_so(registry, clock):
    def down(gate_id, cmd):
        raise BrokerUnavailable("MQTT broker 127.0.0.1:1 not reachable: Connection refused")

    c, token = logged_in(_app(registry, clock, down), "office")
    r = _start(c, token)
    assert r.status_code == 503 and "o portaló g-c não foi avisado" in r.text
    assert _actions(registry, "V008") == [("enrol.start", "web:office"), ("enrol.cancel", "system")]
    assert 'id="enrol-start"' in r.text  # the clerk may try again


def test_without_a_link_to_the_gates_the_start_is_refused(registry, clock):
    c, token = logged_in(_app(registry, clock, None), "office")
    r = _start(c, token)
    assert r.status_code == 400 and "não há ligação MQTT com os portalós" in r.text


def test_with_no_card_read_the_session_expires_at_its_deadline(office, registry, clock):
    c, token = office
    _start(c, token)
    clock.at += dt.timedelta(seconds=59)
    assert 'id="enrol-waiting"' in c.get("/workers/V008/enrol").text
    clock.at += dt.timedelta(seconds=2)
    panel = c.get("/workers/V008/enrol").text
    assert 'data-ended="expired"' in panel and "hx-trigger" not in panel  # the poll stops
    assert _actions(registry, "V008")[-1] == ("enrol.expired", "system")


def test_a_known_card_read_meanwhile_is_named_not_offered_and_cancel_tells_the_gate(office, registry, sent):
    c, token = office
    _start(c, token)
    _tap(registry, "0A04A10003", rules=["G6"], registration="V003")
    panel = c.get("/workers/V008/enrol").text
    assert 'id="enrol-known"' in panel and "V003" in panel and "enrol-read" not in panel
    sid = _session_id(panel)
    r = c.post(f"/workers/V008/enrol/{sid}/confirm", data={"csrf_token": token})
    assert r.status_code == 400 and "ainda não leu cartão" in r.text
    r = c.post(f"/workers/V008/enrol/{sid}/cancel", data={"csrf_token": token})
    assert r.status_code == 303
    assert [(g, m.action, m.session) for g, m in sent] == [("g-c", "start", f"enrol-{sid}"), ("g-c", "cancel", f"enrol-{sid}")]
    assert _actions(registry, "V008")[-1] == ("enrol.cancel", "web:office")


def test_other_roles_cannot_start_enrol_mode(registry, clock, sent):
    app = _app(registry, clock, lambda g, m: sent.append(m))
    for role in ("inspector", "auditor"):
        c, token = logged_in(app, role)
        assert _start(c, token).status_code == 403
        assert 'id="enrol"' not in c.get("/workers/V008").text
    assert sent == []
