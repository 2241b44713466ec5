"""Migration 0035 (each gate's status under its port, issue 37 item 4) on SQLite and PostgreSQL, on a
0034 ledger that already holds statuses and events: a row takes its gate's events' port, a gate whose
events name two ports gets one row per port, a gate with no event keeps its row under ``''`` until its
next status names the port; afterwards the key is port + gate id (the same id at two ports is two
rows, the same port and id twice is refused); the downgrade keeps one row per gate id (the newest)
and a second upgrade gives the ports again."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from alembic import command
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from central.db import make_engine
from central.ingest import status
from central.ledger.gate_ports import gate_ports
from central.ledger.migrate import alembic_config, upgrade
from wire.downlink import GateStatus

T = dt.datetime(2026, 11, 10, 15, 0, tzinfo=dt.UTC)


def _event(c, n: int, port: str, gate_id: str) -> None:
    c.execute(text(
        "INSERT INTO events (event_id, port, gate_id, boot_id, seq, occurred_at, clock_trusted, mono_ns, type, "
        "payload, mac, raw, received_at) VALUES (:e, :p, :g, 'b', :n, :t, true, 0, 'alert', :pl, 'm', :raw, :t)"),
        {"e": f"00000000-0000-4000-8000-{n:012d}", "p": port, "g": gate_id, "n": n, "t": T,
         "pl": json.dumps({"code": "X"}), "raw": b"{}"})


def _old_status(c, gate_id: str, state: str, received: dt.datetime) -> None:
    c.execute(text("INSERT INTO gate_status (gate_id, state, reason, boot_id, since, at, outbox_depth, received_at) "
                   "VALUES (:g, :s, 'birth', 'b', :t, :t, 3, :r)"), {"g": gate_id, "s": state, "t": T, "r": received})


def _rows(engine) -> list[tuple]:
    with engine.connect() as c:
        return [tuple(r) for r in c.execute(text(
            "SELECT port, gate_id, state, outbox_depth FROM gate_status ORDER BY gate_id, port"))]


def _fill_0034(engine) -> None:
    with engine.begin() as c:
        _event(c, 1, "santos", "g1")
        _event(c, 2, "santos", "g2")  # g2: moved from santos to paranagua, events at both
        _event(c, 3, "paranagua", "g2")
        _event(c, 4, "santos", "g4")  # g4: events, no status
        _old_status(c, "g1", "online", T)
        _old_status(c, "g2", "offline", T)
        _old_status(c, "g3", "online", T)  # connected, never sent an event
        c.execute(text("INSERT INTO gate_progress (gate_id, highest_seq, contiguous_seq, updated_at) "
                       "VALUES ('g1', 1, 1, :t), ('g2', 3, 3, :t), ('g4', 4, 4, :t)"), {"t": T})


def _status(port: str, gate_id: str, at: dt.datetime) -> GateStatus:
    return GateStatus(port=port, gate_id=gate_id, boot_id="b2", state="online", reason="birth", at=at, outbox_depth=0)


def test_existing_statuses_take_their_events_ports_and_the_key_is_port_and_gate(db_url):
    upgrade(db_url, "0034")
    engine = make_engine(db_url)
    try:
        _fill_0034(engine)
        assert upgrade(db_url, "0035") == "0035"
        assert _rows(engine) == [("santos", "g1", "online", 3), ("paranagua", "g2", "offline", 3),
                                 ("santos", "g2", "offline", 3), ("", "g3", "online", 3)]
        pk = inspect(engine).get_pk_constraint("gate_status")
        assert pk["constrained_columns"] == ["port", "gate_id"]
        with engine.begin() as c:
            assert gate_ports(c) == {"g1": "santos", "g2": "santos", "g4": "santos"}  # g3: '' is no port
            status.store(c, [_status("paranagua", "g3", T + dt.timedelta(minutes=1)),
                             _status("paranagua", "g1", T + dt.timedelta(minutes=1))], T + dt.timedelta(minutes=1))
            assert gate_ports(c)["g3"] == "paranagua"  # no event: its status's port
        assert _rows(engine) == [("paranagua", "g1", "online", 0), ("santos", "g1", "online", 3),
                                 ("paranagua", "g2", "offline", 3), ("santos", "g2", "offline", 3),
                                 ("paranagua", "g3", "online", 0)]  # the '' row replaced, not kept beside
        with pytest.raises(IntegrityError), engine.begin() as c:
            c.execute(text("INSERT INTO gate_status (port, gate_id, state, reason, boot_id, since, at, received_at) "
                           "VALUES ('santos', 'g1', 'online', 'birth', 'b', :t, :t, :t)"), {"t": T})
    finally:
        engine.dispose()


def test_the_downgrade_keeps_the_newest_row_of_each_gate_and_a_second_upgrade_the_ports(db_url):
    upgrade(db_url, "0034")
    engine = make_engine(db_url)
    try:
        _fill_0034(engine)
        upgrade(db_url, "0035")
        later = T + dt.timedelta(minutes=5)
        with engine.begin() as c:
            status.store(c, [_status("paranagua", "g2", later)], later)  # paranagua's g2 row is the newest
        command.downgrade(alembic_config(db_url), "0034")
        assert "port" not in {col["name"] for col in inspect(engine).get_columns("gate_status")}
        with engine.connect() as c:
            assert [tuple(r) for r in c.execute(text(
                "SELECT gate_id, state, outbox_depth FROM gate_status ORDER BY gate_id"))] == [
                ("g1", "online", 3), ("g2", "online", 0), ("g3", "online", 3)]
        assert upgrade(db_url, "0035") == "0035"
        assert _rows(engine) == [("santos", "g1", "online", 3), ("paranagua", "g2", "online", 0),
                                 ("santos", "g2", "online", 0), ("", "g3", "online", 3)]
    finally:
        engine.dispose()
