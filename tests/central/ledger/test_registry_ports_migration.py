"""Migration 0029 (the registry's port, issue 37 item 4) on SQLite and PostgreSQL: a 0028 ledger's
workers get no stored port (NULL: the office's home port), its cases the port of their event where
the ledger holds it (a case opened from a flag, a confiscation), else none; the downgrade takes the
columns away and keeps the worker name search's triggers (SQLite, 0027), and a second upgrade
gives the same ports again."""

from __future__ import annotations

import datetime as dt

from alembic import command
from sqlalchemy import inspect, text

from central.db import make_engine
from central.ingest import event_store
from central.ledger.migrate import alembic_config, head, upgrade
from wire.events import Event, TapPayload, encode, new_event_id, sign

T = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)


def _tap(port: str, gate: str, seq: int) -> event_store.Accepted:
    ev = sign(Event(event_id=new_event_id(), port=port, gate_id=gate, boot_id="b", seq=seq, occurred_at=T,
                    clock_trusted=True, mono_ns=seq,
                    payload=TapPayload(uid=f"{seq:08X}", reader_id="r1", reader_kind="control", decision="deny",
                                       flags=["BORROWED_CARD"], registration="W1")), b"k")
    return event_store.Accepted(f"portgate/v1/{port}/gate/{gate}/events", ev, encode(ev))


def _case(c, event_id: str | None, source: str | None) -> None:
    c.execute(text(
        "INSERT INTO cases (event_id, source_event_id, card_uid, registration, inspector_uid, gate_id, reason_flag, "
        "article, occurred_at, status, decision, opened_at) VALUES (:e, :s, 'AA', 'W1', '', 'g', 'BORROWED_CARD', "
        "'83.611 art. 20', :t, 'open', '', :t)"), {"e": event_id, "s": source, "t": T})


def _ports(engine) -> tuple[list, list]:
    with engine.connect() as c:
        return (c.execute(text("SELECT registration, port FROM workers ORDER BY registration")).all(),
                c.execute(text("SELECT event_id, port FROM cases ORDER BY id")).all())


def test_workers_are_of_the_home_port_and_cases_of_their_events_port(db_url):
    rio, santos = _tap("rio", "rio-g1", 1), _tap("santos", "s-g1", 1)
    upgrade(db_url, "0028")
    engine = make_engine(db_url)
    try:
        with engine.begin() as c:  # a 0028 ledger: two ports' events, a worker, three cases
            event_store.write_batch(c, [rio, santos], [], T)
            c.execute(text("INSERT INTO workers (registration, name, category, status, updated_at) "
                           "VALUES ('W1', 'Ana Souza', 'vigia', 'active', :t)"), {"t": T})
            _case(c, rio.event.event_id, rio.event.event_id)  # opened from rio's flag
            _case(c, santos.event.event_id, None)  # a confiscation at santos (no source_event_id)
            _case(c, new_event_id(), None)  # its event is not in the ledger
        assert upgrade(db_url) == head() == "0029"
        unknown = _ports(engine)[1][2][0]
        expected = ([("W1", None)], [(rio.event.event_id, "rio"), (santos.event.event_id, "santos"), (unknown, None)])
        assert _ports(engine) == expected
        names = {ix["name"] for ix in inspect(engine).get_indexes("workers")}
        assert "ix_workers_port_name_registration" in names
        command.downgrade(alembic_config(db_url), "0028")
        assert "port" not in {col["name"] for col in inspect(engine).get_columns("workers")}
        assert "port" not in {col["name"] for col in inspect(engine).get_columns("cases")}
        if engine.dialect.name == "sqlite":  # the name search's triggers survive the downgrade
            with engine.connect() as c:
                triggers = set(c.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger' "
                                              "AND tbl_name = 'workers'")).scalars())
            assert {"workers_name_search_insert", "workers_name_search_update",
                    "workers_name_search_delete"} <= triggers
        assert upgrade(db_url) == "0029"
        assert _ports(engine) == expected
    finally:
        engine.dispose()
