"""The registry's port (issue 37 item 4, ``central.registry.worker_ports``): a workers.csv's ``port``
cell and ``portgate registry import --port`` give a worker his port (none: the home port, NULL), a
web user's import stays within his ports, a port never reaches the gates' roster, a case is of its
event's port, and ``in_ports`` selects the rows of a view."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cli import main
from central.registry import store, worker_ports
from central.registry.api import changes_since
from central.registry.cases import open_from_event
from central.registry.confiscation import record_confiscation
from central.registry.schema import audit_log, cases, workers
from central.registry.store import PortScope
from portgate.errors import BadInput
from tests.central.registry.conftest import WORKER_COLUMNS, worker_rows, write_csv
from tests.central.registry.test_confiscation import confiscation, event

NOW = dt.datetime(2026, 12, 6, 12, tzinfo=dt.UTC)
SERVED = ("santos", "rio")


def _ports(engine) -> dict[str, str | None]:
    with engine.connect() as c:
        return dict(c.execute(select(workers.c.registration, workers.c.port)).all())


def _import(engine, path, **kw):
    with Session(engine) as s, s.begin():
        return store.import_files(s, workers_csv=path, actor="ana", now=NOW, **kw)


def _file(tmp_path, ports: list[str | None], name="workers.csv"):
    rows = worker_rows(len(ports))
    for row, port in zip(rows, ports):
        row["port"] = port or ""
    return write_csv(tmp_path / name, (*WORKER_COLUMNS, "port"), rows)


def test_the_port_cell_else_the_import_port_else_the_home_port(engine, tmp_path):
    assert _import(engine, _file(tmp_path, ["rio", None, None])) == {"workers": 3, "cards": 0, "unchanged": 0}
    assert _ports(engine) == {"V001": "rio", "V002": None, "V003": None}
    # the same rows again with --port santos: the rows without a cell move to santos, V001 stays rio
    counts = _import(engine, _file(tmp_path, ["rio", None, None]), port="santos")
    assert _ports(engine) == {"V001": "rio", "V002": "santos", "V003": "santos"}
    assert counts == {"workers": 2, "cards": 0, "unchanged": 1}
    with engine.connect() as c:
        moved = c.execute(select(audit_log.c.subject).where(audit_log.c.action == "worker.port")).scalars().all()
    assert sorted(moved) == ["V001", "V002", "V003"]  # V001 on its first import, then the two moves
    with Session(engine) as s:  # the roster the gates get has no port
        assert all("port" not in ch.body for ch in changes_since(s, "roster", 0))


def test_the_home_port_named_is_stored_counted_and_audited_without_a_move(engine, tmp_path):
    _import(engine, _file(tmp_path, [None]))
    with Session(engine) as s:
        rows = len(changes_since(s, "roster", 0))
    # the same port, now stored (a row changed: counted, one worker.port row, never "nothing
    # changed"); not a move: no roster change rows
    assert _import(engine, _file(tmp_path, ["santos"]), ports=PortScope(served=SERVED)) == {
        "workers": 1, "cards": 0, "unchanged": 0}
    assert _ports(engine) == {"V001": "santos"}
    with Session(engine) as s:
        assert [r.detail for r in s.execute(select(audit_log.c.detail).where(audit_log.c.action == "worker.port"))] \
            == [{"changed": {"port": ["", "santos"]}}]
        assert len(changes_since(s, "roster", 0)) == rows
    assert _import(engine, _file(tmp_path, ["santos"]), ports=PortScope(served=SERVED)) == {
        "workers": 0, "cards": 0, "unchanged": 1}  # stored now: the same file again changes nothing


def test_a_bad_port_cell_is_a_bad_row_and_nothing_is_written(engine, tmp_path):
    path = _file(tmp_path, ["rio", "a/b", "vitoria"])
    with pytest.raises(BadInput) as exc:
        _import(engine, path, ports=PortScope(allowed=SERVED, served=SERVED))
    lines = str(exc.value).splitlines()
    assert any(line.startswith("workers.csv:3: port 'a/b' is not a valid id") for line in lines), lines
    assert "workers.csv:4: port 'vitoria' is not one of santos, rio" in lines
    assert _ports(engine) == {}


def test_a_one_port_user_imports_his_ports_workers_only(engine, tmp_path):
    _import(engine, _file(tmp_path, ["rio", "santos"]))
    clerk = PortScope(allowed=("santos",), scope=("santos",), served=SERVED)
    with pytest.raises(BadInput) as exc:  # V001 is rio's: a santos clerk neither restates nor moves him
        _import(engine, _file(tmp_path, [None, None]), port="santos", ports=clerk)
    assert str(exc.value) == "workers.csv:2: registration V001 is a worker of another port"
    cards = write_csv(tmp_path / "cards.csv", ("uid", "kind", "registration", "status"), [
        dict(uid="1A2B3C4D", kind="control", registration="V001", status="active"),
        dict(uid="11223344", kind="control", registration="V002", status="active")])
    with Session(engine) as s, s.begin(), pytest.raises(BadInput) as exc:
        store.import_files(s, cards_csv=cards, actor="ana", now=NOW, ports=clerk)
    assert str(exc.value) == "cards.csv:2: registration V001 is a worker of another port"
    rows = worker_rows(2)[1:]  # V002 alone: santos's
    assert _import(engine, write_csv(tmp_path / "mine.csv", WORKER_COLUMNS, rows), port="santos",
                   ports=clerk)["unchanged"] == 1
    assert _ports(engine) == {"V001": "rio", "V002": "santos"}


def test_a_one_port_users_import_does_not_name_another_ports_card_holder(engine, tmp_path):
    """A santos clerk's cards.csv giving his worker a card registered to rio's V001 is refused as
    another port's card, without naming V001 (before: "card ... is active and held by V001")."""
    _import(engine, _file(tmp_path, ["rio", "santos"]))
    cards = write_csv(tmp_path / "cards.csv", ("uid", "kind", "registration", "status"), [
        dict(uid="1A2B3C4D", kind="control", registration="V001", status="active")])
    with Session(engine) as s, s.begin():
        store.import_files(s, cards_csv=cards, actor="ana", now=NOW)
    mine = write_csv(tmp_path / "mine.csv", ("uid", "kind", "registration", "status"), [
        dict(uid="1A2B3C4D", kind="control", registration="V002", status="active")])
    clerk = PortScope(allowed=("santos",), scope=("santos",), served=SERVED)
    with Session(engine) as s, s.begin(), pytest.raises(BadInput) as exc:
        store.import_files(s, cards_csv=mine, actor="ana", now=NOW, ports=clerk)
    assert str(exc.value) == ("mine.csv:2: card 1A2B3C4D is registered at another port: an import does not "
                              "give it to V002 (give V002 a card with a new uid)")
    with Session(engine) as s, s.begin(), pytest.raises(BadInput) as exc:  # every port's user: as before
        store.import_files(s, cards_csv=mine, actor="ana", now=NOW, ports=PortScope(served=SERVED))
    assert "held by V001" in str(exc.value)


def test_registry_import_port_option(tmp_path, db_url, capsys):
    path = write_csv(tmp_path / "workers.csv", WORKER_COLUMNS, worker_rows(2))
    assert main(["registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(path), "--port", "rio"]) == 0
    assert main(["registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(path),
                 "--port", "a/b"]) == 2
    assert "--port 'a/b' is not a valid id" in capsys.readouterr().err
    from central import db

    engine = db.make_engine(db_url)
    try:
        assert _ports(engine) == {"V001": "rio", "V002": "rio"}
    finally:
        engine.dispose()


def test_in_ports_selects_a_views_rows(engine, tmp_path):
    _import(engine, _file(tmp_path, ["rio", None, "santos"]))

    def shown(ports, served=SERVED):
        with engine.connect() as c:
            return sorted(c.execute(select(workers.c.registration).where(
                worker_ports.in_ports(workers.c.port, ports, served))).scalars())

    assert shown(("santos",)) == ["V002", "V003"]  # NULL is the home port's
    assert shown(("rio",)) == ["V001"]
    assert shown(("santos", "rio")) == shown(None) == ["V001", "V002", "V003"]
    assert shown(("rio",), ("rio", "santos")) == ["V001", "V002"]  # home rio: the NULL row is rio's
    with engine.connect() as c:
        assert worker_ports.worker_in(c, "V001", ("rio",), SERVED)
        assert not worker_ports.worker_in(c, "V001", ("santos",), SERVED)
        assert not worker_ports.worker_in(c, "NOBODY", ("santos",), SERVED)


def test_a_case_is_of_its_events_port(engine):
    from central.ingest import event_store
    from tests.central.ledger.test_registry_ports_migration import _tap

    tap = _tap("rio", "rio-g1", 1)
    with engine.begin() as c:
        event_store.write_batch(c, [tap], [], NOW)
    with Session(engine) as s, s.begin():
        store.save_worker(s, store.Worker("V001", "Ana", "vigia", store.WorkerStatus.ACTIVE), actor="t", now=NOW,
                          action="test")
        flagged = open_from_event(s, tap.event.event_id, flag="BORROWED_CARD", charge="x", article=None,
                                  evidence="", actor="t", now=NOW)
        confiscated = record_confiscation(s, event(confiscation()))  # a santos gate's
    with engine.connect() as c:
        assert dict(c.execute(select(cases.c.id, cases.c.port)).all()) == {flagged: "rio", confiscated: "santos"}
