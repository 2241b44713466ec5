"""The audit log per port (issue 37 item 4; ``audit_log.port``, migration 0031,
``central.registry.audit_ports``). On the two-port office of test_ports_web (santos home, rio), with
entries written by the real services: a port's clerk finds the entries about his port's workers,
cards, cases, flags, alarms and ship calls, never rio's nor an entry of every port (an office user's
account, an entry made before 0031); another port's subject answers as a subject with no entry;
an all-ports auditor sees every entry and narrows them with the selector. A worker made and given a
port in one command takes his entries with him. SQLite and PostgreSQL (the filter is SQL)."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from central.audit import ALL, audit_log
from central.calls import acks, service as calls
from central.calls.schema import ship_calls
from central.ledger.corrections import record_meal
from central.ledger.schema import events, reader_alarms
from central.ledger.tables import shifts
from central.registry import flag_reviews
from central.registry.changes import audit
from central.registry.schema import cards, workers
from central.registry.worker_ports import set_port
from tests.central.web.test_ports_web import (  # noqa: F401 (two_ports: a fixture)
    RIO,
    SANTOS,
    T0,
    _app,
    _choose,
    _client,
    two_ports,
)

BOTH = pytest.mark.parametrize("engine", ["sqlite", "postgresql"], indirect=True)
RANGE = "from=2026-11-01&to=2026-12-31"  # the entries at T0, the users' (made today) too


def _event(engine, port: str) -> str:
    with engine.connect() as c:
        return c.execute(select(events.c.event_id).where(events.c.port == port, events.c.seq == 2)).scalar_one()


def _write(engine) -> None:
    """Entries about each port's objects, through the services that write them."""
    with Session(engine) as s, s.begin():
        for ids in (SANTOS, RIO):
            audit(s, actor="web:test", action="worker.edit", subject=ids["worker"], detail={}, now=T0)
            s.execute(insert(cards).values(uid=f"C{ids['worker']}", kind="control", registration=ids["worker"],
                                           status="active", updated_at=T0))
            audit(s, actor="web:test", action="card.lost", subject=f"C{ids['worker']}", detail={}, now=T0)
            alarm = s.execute(select(reader_alarms.c.id).where(reader_alarms.c.gate_id == ids["gate"])).scalar_one()
            acks.acknowledge(s, "reader", alarm, f"seen {ids['reader']}", actor="web:test", now=T0)
            call = s.execute(select(ship_calls).where(ship_calls.c.gate_id == ids["gate"])).first()
            calls.set_departure(s, call.id, T0 + dt.timedelta(days=2), actor="web:test", now=T0)
        for port in ("santos", "rio"):
            flag_reviews.acknowledge(s, _event(engine, port), f"seen at {port}", actor="web:test", now=T0)
        audit(s, actor="web:test", action="worker.edit", subject="GONE01", detail={}, now=T0)  # no such worker
    with engine.begin() as c:  # an entry written before 0031: the column's default, every port's
        c.execute(insert(audit_log).values(at=T0, actor="old", action="worker.edit", subject=SANTOS["worker"],
                                           detail={"before": "0031"}))


def _ports(engine) -> dict[tuple[str, str], str | None]:
    with engine.connect() as c:
        return {(r.action, r.subject): r.port for r in c.execute(
            select(audit_log.c.action, audit_log.c.subject, audit_log.c.port).where(audit_log.c.actor != "old"))}


@BOTH
def test_each_entry_takes_the_port_of_the_object_it_names(two_ports):
    _write(two_ports)
    got = _ports(two_ports)
    for port, ids in (("santos", SANTOS), ("rio", RIO)):
        assert got["worker.edit", ids["worker"]] == port
        assert got["card.lost", f"C{ids['worker']}"] == port
        assert got["ship_call.departure", ids["ship"]] == port
        assert got["flag.acknowledge", _event(two_ports, port)] == port
    alarms = [p for (a, _s), p in got.items() if a == "alarm.acknowledge"]
    assert sorted(alarms) == ["rio", "santos"]
    assert got["worker.edit", "GONE01"] == ALL  # an object the office does not hold: every port's
    assert got["user.add", "clerk-santos"] == ALL  # an office account: no port's object
    with two_ports.connect() as c:
        assert c.execute(select(audit_log.c.port).where(audit_log.c.actor == "old")).scalar_one() == ALL


def _shift(c, sid: str, gate: str | None, admit: str | None) -> None:
    c.execute(insert(shifts).values(shift_id=sid, registration="X", ship="9300001", work_date=T0.date(),
                                    period="13-19", function="vigia", berth="berthed", gate_id=gate,
                                    period_start=T0, period_end=T0 + dt.timedelta(hours=6), closed_by="none",
                                    admit_event_id=admit, rebuilt_at=T0))


@BOTH
def test_a_meal_correction_takes_its_shifts_port_and_an_unknown_gates_alarm_every_ports(two_ports):
    with two_ports.begin() as c:
        _shift(c, "by-admit", None, _event(two_ports, "rio"))  # its admit event's port
        _shift(c, "by-gate", SANTOS["gate"], None)  # no admit: its gate's
        _shift(c, "by-nothing", "never-seen", None)  # a gate with no event: every port's
        alarm = c.execute(insert(reader_alarms).values(gate_id="never-seen", reader_id="r", kind="control",
                                                       raised_at=T0, ended_at=None, detail="x")).inserted_primary_key[0]
    for sid in ("by-admit", "by-gate", "by-nothing"):
        record_meal(two_ports, sid, worked=True, actor="web:test", reason="worked", now=T0)
    with Session(two_ports) as s, s.begin():
        acks.acknowledge(s, "reader", alarm, "seen", actor="web:test", now=T0)
    got = _ports(two_ports)
    assert [got["ledger.correct-meal", sid] for sid in ("by-admit", "by-gate", "by-nothing")] == ["rio", "santos", ALL]
    assert got["alarm.acknowledge", f"reader:{alarm}"] == ALL


@BOTH
def test_a_worker_given_a_port_in_the_command_that_made_him_takes_its_entries_along(two_ports):
    with Session(two_ports) as s, s.begin():  # an earlier command: santos's worker (NULL: the home port)
        s.execute(insert(workers).values(registration="NEW001", name="Nova", category="vigia", status="active",
                                         updated_at=T0))
        audit(s, actor="web:test", action="worker.add", subject="NEW001", detail={}, now=T0)
    with Session(two_ports) as s, s.begin():  # one command: an edit, then the move to rio
        audit(s, actor="web:test", action="worker.edit", subject="NEW001", detail={}, now=T0)
        audit(s, actor="web:test", action="worker.edit", subject=SANTOS["worker"], detail={}, now=T0)
        assert set_port(s, "NEW001", "rio", actor="web:test", now=T0, served=("santos", "rio"))
    with two_ports.connect() as c:
        rows = c.execute(select(audit_log.c.action, audit_log.c.subject, audit_log.c.port)
                         .where(audit_log.c.subject.in_(["NEW001", SANTOS["worker"]])).order_by(audit_log.c.id)).all()
    assert [tuple(r) for r in rows] == [("worker.add", "NEW001", None), ("worker.edit", "NEW001", "rio"),
                                        ("worker.edit", SANTOS["worker"], "santos"), ("worker.port", "NEW001", "rio")]


def _subjects(html: str) -> set[str]:
    return set(re.findall(r'data-subject="([^"]*)"', html))


@BOTH
def test_a_ports_clerk_sees_his_ports_entries_only(two_ports):
    _write(two_ports)
    rio_event, santos_event = _event(two_ports, "rio"), _event(two_ports, "santos")
    app = _app(two_ports)
    for user in ("clerk-santos", "legacy"):  # legacy: no ports, the home port (santos)
        c = _client(app, user)
        r = c.get(f"/audit?{RANGE}")
        assert r.status_code == 200, user
        seen = _subjects(r.text)
        assert {SANTOS["worker"], f"C{SANTOS['worker']}", SANTOS["ship"], santos_event} <= seen, user
        assert not seen & {RIO["worker"], f"C{RIO['worker']}", RIO["ship"], rio_event, "GONE01", "clerk-santos"}
        assert "0031" not in r.text  # the entry made before 0031: every port's
        assert "só para quem vê todos os portos" in r.text and 'id="audit-port-note"' in r.text  # says so
        csv = c.get(f"/audit.csv?{RANGE}").text
        assert SANTOS["worker"] in csv and RIO["worker"] not in csv and rio_event not in csv
        assert "0031" not in csv and "clerk-santos" not in csv.replace("web:clerk-santos", "")


@BOTH
def test_another_ports_subject_is_answered_as_a_subject_with_no_entry(two_ports):
    _write(two_ports)
    c = _client(_app(two_ports), "clerk-santos")
    for other in (RIO["worker"], _event(two_ports, "rio")):
        theirs = c.get(f"/audit?{RANGE}&subject={other}")
        missing = c.get(f"/audit?{RANGE}&subject=NOBODY9")
        assert theirs.status_code == missing.status_code == 200
        assert theirs.text.replace(other, "X") == missing.text.replace("NOBODY9", "X")
        assert c.get(f"/audit.csv?{RANGE}&subject={other}").text == c.get(f"/audit.csv?{RANGE}&subject=NOBODY9").text


@BOTH
def test_an_all_ports_user_sees_every_entry_and_narrows_them_by_port(two_ports):
    _write(two_ports)
    c = _client(_app(two_ports), "auditor-all")
    page = c.get(f"/audit?{RANGE}").text
    assert 'id="port-form"' in page
    assert {SANTOS["worker"], RIO["worker"], "GONE01", "clerk-santos"} <= _subjects(page)
    assert "0031" in page and 'id="audit-port-note"' not in page  # the old entry, for him; nothing hidden
    _choose(c, "rio")
    narrowed = c.get(f"/audit?{RANGE}").text
    assert 'id="audit-port-note"' in narrowed
    seen = _subjects(narrowed)
    assert RIO["worker"] in seen and not seen & {SANTOS["worker"], "GONE01", "clerk-santos"}
    _choose(c, "*")
    assert SANTOS["worker"] in c.get(f"/audit.csv?{RANGE}").text
