"""Issue 37 item 4: one escala per served port (``central.broadcast.port_escala``). On a two-port
office (santos home, paranaguá) each port's gates get only the escala entries at their port's gates,
snapshot and deltas (before: every port's entries went to every gate). A real paranaguá gate
(``edge.store.Store`` + ``edge.sync.Sync`` replaying the chain from a real mosquitto) never holds
santos's escala; a single-port office publishes as before (every entry, the versions of before).
Real SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt

from sqlalchemy.orm import Session

from central.broadcast.port_escala import ESCALA_PORT
from central.broadcast.registry_source import DAY_SHIFT
from central.ingest.event_store import update_progress, write_batch
from central.rotation.engine import Requisition
from central.rotation.ports import RotationPorts
from central.rotation.service import dispatch_day
from portgate.records import Berth, Voyage
from tests.central.broadcast.conftest import ACTOR, day_start, today
from tests.central.broadcast.test_port_rosters import SERVED, ParanaguaGate, two_ports  # noqa: F401
from tests.central.broadcast.test_registry_downlink import local_noon
from tests.central.ingest.conftest import broker, keys_dir  # noqa: F401
from tests.central.web.test_ports_web import _tap
from testkit.wait import wait_until

SANTOS_GATE = "s-g1"  # santos's by its events
PARA_GATE = "p-g9"  # paranaguá's by its events
PARA_IDS = {"gate": PARA_GATE, "worker": "V003", "ship": "9400009", "reader": "p-reader"}
SANTOS_IDS = {"gate": SANTOS_GATE, "worker": "V001", "ship": "9300009", "reader": "s-reader"}


def _req(day: dt.date, gate: str) -> Requisition:
    return Requisition(ref=f"r-{gate}-{day}", date=day, period="07-13", operator="Op A", ship="9123456",
                       ship_name="Ship A", voyage=Voyage.LONG_HAUL, berth=Berth.BERTHED, gate_id=gate,
                       post="portalo", function="vigia", workers=1, category="vigia")


def _dispatch(office, day: dt.date) -> None:
    with Session(office.engine) as s, s.begin():
        dispatch_day(s, day, [_req(day, SANTOS_GATE), _req(day, PARA_GATE)], actor=ACTOR, now=day_start(day),
                     ports=RotationPorts(SERVED))


def test_a_paranagua_gate_gets_its_ports_escala_only(two_ports, tmp_path, keys_dir):  # noqa: F811
    office, ingest, listener = two_ports
    at = dt.datetime.now(dt.UTC) - dt.timedelta(days=2)
    with office.engine.begin() as conn:  # each gate has sent an event of its port: it is that port's gate
        write_batch(conn, [_tap("paranagua", PARA_IDS, 1, at, []), _tap("santos", SANTOS_IDS, 1, at, [])], [], at)
        update_progress(conn, [PARA_GATE, SANTOS_GATE], at)
    _dispatch(office, today())
    gate = ParanaguaGate(tmp_path, keys_dir, "p-g1")
    try:
        gate.start(listener.broker, store=gate.store)
        noon = local_noon(today())
        wait_until(lambda: gate.store.dispatches("V003", noon), what="paranaguá's escala at the paranaguá gate")
        assert [e.gate_id for e in gate.store.dispatches("V003", noon)] == [PARA_GATE]
        assert gate.store.dispatches("V001", noon) == []  # dispatched at santos's s-g1: not sent here
        tomorrow = today() + dt.timedelta(days=1)
        _dispatch(office, tomorrow)  # a delta of both ports' entries
        wait_until(lambda: any(e.date == tomorrow for e in gate.store.dispatches("V003", local_noon(tomorrow))),
                   what="tomorrow's paranaguá entry at the paranaguá gate")
        assert gate.store.dispatches("V001", local_noon(tomorrow)) == []
        assert gate.store.dispatches("V002", local_noon(tomorrow)) == []
    finally:
        gate.stop()
    now = dt.datetime.now(dt.UTC)
    for port, gate_id in (("santos", SANTOS_GATE), ("paranagua", PARA_GATE)):
        snap = ingest.by_port[port].publisher.snapshot("escala", now)
        assert {e.gate_id for e in snap.entries} == {gate_id}, (port, snap.entries)
        assert snap.version % DAY_SHIFT > ESCALA_PORT  # above the all-ports escala of the same day


def test_a_single_port_office_publishes_every_entry_at_the_versions_of_before(broker, office):  # noqa: F811
    office.add_workers(2)
    office.dispatch(today(), gate_id="g1")
    office.dispatch(today() + dt.timedelta(days=1), gate_id="g2")
    ingest = office.start(broker)
    snap = ingest.publisher.snapshot("escala", dt.datetime.now(dt.UTC))
    assert {e.gate_id for e in snap.entries} == {"g1", "g2"}
    assert snap.version // DAY_SHIFT == ingest.publisher._today(dt.datetime.now(dt.UTC)).toordinal()
    assert snap.version % DAY_SHIFT < ESCALA_PORT
