"""The office sees what no gate reports (issue 33 items 2 and 8): a ship whose gangway gate never
connected or has no gate raises the coverage alarm from the office side (G11, cabotage only for
the periods a watchman was requisitioned), and its gate shows on the live page as never connected;
a gate's status naming a reader in fault raises a reader alarm that ends when the reader is ok."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import msgspec
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.calls import coverage
from central.calls.schema import coverage_alarms
from central.calls.service import ShipCall, save_call
from central.ingest import status as gate_status
from central.ledger import reader_alarms
from central.ledger.schema import reader_alarms as reader_alarms_table
from central.rotation.engine import RotationSettings
from central.rotation.service import _store_entry
from central.web import readmodel
from portgate.records import Berth, EscalaEntry, Voyage
from tests.central.web.conftest import logged_in
from wire.downlink import GateStatus, ReaderHealth

TZ = ZoneInfo("America/Sao_Paulo")
NOW = dt.datetime(2026, 3, 15, 10, 45, tzinfo=dt.UTC)  # 07:45 local, period 07-13
ARRIVAL = dt.datetime(2026, 3, 15, 4, 0, tzinfo=dt.UTC)  # 01:00 local


def _watchman(s, ship: str, name: str, gate_id: str, period: str = "07-13", reg: str = "V010",
              voyage: Voyage = Voyage.CABOTAGE) -> None:
    entry = EscalaEntry(date=dt.date(2026, 3, 15), period=period, ship=ship, ship_name=name, voyage=voyage,
                        berth=Berth.BERTHED, gate_id=gate_id, post="portalo", function="vigia", registration=reg)
    _store_entry(s, entry, operator="Op", requisition_id=None, settings=RotationSettings(tz=TZ), actor="t", now=ARRIVAL)


def test_a_cabotage_ship_with_a_watchman_requisitioned_and_no_gate_heard_raises_the_alarm(engine):
    with Session(engine) as s, s.begin():
        save_call(s, ShipCall("9300003", "Lagoa Azul", "cabotage", "berthed", "g-lagoa", ARRIVAL, None),
                  actor="t", now=ARRIVAL)
        save_call(s, ShipCall("9300004", "Sem Vigia", "cabotage", "berthed", "g-other", ARRIVAL, None),
                  actor="t", now=ARRIVAL)
        _watchman(s, "9300003", "Lagoa Azul", "g-lagoa")
        assert coverage.evaluate(s, NOW, TZ, 30) == 1
        assert coverage.evaluate(s, NOW, TZ, 30) == 0  # idempotent
        rows = s.execute(select(coverage_alarms)).all()
    # only the requisitioned period (07-13, due 07:30 local), not 01-07; no alarm for 9300004
    assert [(r.ship, r.gate_id, r.raised_at.replace(tzinfo=dt.UTC), r.ended_at) for r in rows] == [
        ("9300003", "g-lagoa", dt.datetime(2026, 3, 15, 10, 30, tzinfo=dt.UTC), None)]


def test_a_long_haul_ship_without_a_gate_raises_every_period_of_its_stay(engine):
    with Session(engine) as s, s.begin():
        save_call(s, ShipCall("9300005", "Sem Portaló", "long_haul", "anchored", None, ARRIVAL, None),
                  actor="t", now=ARRIVAL)
        assert coverage.evaluate(s, NOW, TZ, 30) == 2  # 01-07 (from the arrival) and 07-13
        assert {r.gate_id for r in s.execute(select(coverage_alarms))} == {None}


def test_a_gate_never_seen_is_on_the_live_page_and_its_ship_has_no_live_gate(engine, app, clock):
    clock.at = NOW
    with Session(engine) as s, s.begin():
        save_call(s, ShipCall("9300003", "Lagoa Azul", "cabotage", "berthed", "g-lagoa", ARRIVAL, None),
                  actor="t", now=ARRIVAL)
        _watchman(s, "9300003", "Lagoa Azul", "g-lagoa")
        coverage.evaluate(s, NOW, TZ, 30)
    with engine.connect() as conn:
        (gate,) = [g for g in readmodel.gate_rows(conn, NOW, 24) if g.gate_id == "g-lagoa"]
        (ship,) = readmodel.ship_rows(conn, NOW, TZ)
    assert gate.never_seen and gate.online is None
    assert ship.ship == "9300003" and not ship.gate_live and ship.alarm
    c, _token = logged_in(app, "office")
    html = c.get("/").text
    assert 'data-gate="g-lagoa" data-state="never"' in html and "nunca conectado" in html
    assert 'data-ship="9300003" data-gate-live="no"' in html and "SEM PORTALÓ AO VIVO" in html
    assert '<li class="alarm" data-ship="9300003">SEM VIGIA DE PORTALÓ' in html


def _status(state: str, at: dt.datetime, since: dt.datetime) -> GateStatus:
    return GateStatus(port="santos", gate_id="g-a", boot_id="b1", state="online", reason="progress", at=at,
                      readers=[ReaderHealth(reader_id="r-control", kind="control", state="ok", since=ARRIVAL),
                               ReaderHealth(reader_id="r-badge", kind="badge", state=state, since=since,
                                            detail="leitor serial /dev/x desconectado")])


def test_a_reader_in_fault_in_a_gates_status_raises_an_alarm_that_ends_when_it_is_ok(engine, app, clock):
    clock.at = NOW
    fault_at = NOW - dt.timedelta(minutes=3)
    with Session(engine) as s, s.begin():
        gate_status.store(s.connection(), [_status("fault", NOW - dt.timedelta(minutes=2), fault_at)], NOW)
        assert reader_alarms.evaluate(s, NOW) == 1
        assert reader_alarms.evaluate(s, NOW) == 0  # idempotent
    c, _token = logged_in(app, "office")
    html = c.get("/").text
    assert 'data-alarm-gate="g-a" data-reader="r-badge">LEITOR SEM SINAL' in html
    assert 'data-readers="fault"' in html and 'data-reader="r-badge" data-state="fault">r-badge: SEM SINAL' in html
    ok_at = NOW + dt.timedelta(minutes=1)
    with Session(engine) as s, s.begin():
        gate_status.store(s.connection(), [_status("ok", ok_at, ok_at)], ok_at)
        assert reader_alarms.evaluate(s, ok_at) == 1
        (row,) = s.execute(select(reader_alarms_table)).all()
    assert (row.gate_id, row.reader_id, row.kind) == ("g-a", "r-badge", "badge")
    assert row.raised_at.replace(tzinfo=dt.UTC) == fault_at and row.ended_at.replace(tzinfo=dt.UTC) == ok_at
    html = c.get("/").text
    assert "LEITOR SEM SINAL" not in html and 'data-readers="ok"' in html
    listed = c.get("/alarms").text
    assert 'data-gate="g-a" data-reader="r-badge" data-open="no"' in listed
    assert "leitor serial /dev/x desconectado" in listed


def test_reader_alarm_changes_are_decided_from_the_status_alone():
    at = NOW
    fault = {"reader_id": "r1", "kind": "control", "state": "fault", "since": "2026-03-15T10:40:00+00:00"}
    assert reader_alarms.changes("g", None, at, {"r1": 7}) == []  # a status that does not say: nothing
    assert reader_alarms.changes("g", [fault], at, {}) == [
        reader_alarms.Raise("g", "r1", "control", dt.datetime(2026, 3, 15, 10, 40, tzinfo=dt.UTC), "")]
    assert reader_alarms.changes("g", [fault], at, {"r1": 7}) == []  # already raised
    assert reader_alarms.changes("g", [fault | {"state": "unknown"}], at, {"r1": 7}) == []  # not known: kept
    assert reader_alarms.changes("g", [], at, {"r1": 7}) == [reader_alarms.End(7, at)]  # no longer configured
    bad = [{"reader_id": ""}, "x", fault | {"since": "not a time"}]
    assert reader_alarms.changes("g", bad, at, {}) == [reader_alarms.Raise("g", "r1", "control", at, "")]


def test_the_alarm_list_names_the_period_19_01_and_takes_an_acknowledgement(app):
    """Issue 33: /alarms shows a coverage alarm's period as the escala names it (19-01 and its
    local day, not a timestamp); an inspector acknowledges it with a comment, which the list then
    shows; an auditor reads and has no form; no comment is a pt-BR refusal."""
    engine = app.state.web.engine
    start = dt.datetime(2026, 3, 15, 22, 0, tzinfo=dt.UTC)  # 19:00 in São Paulo
    with Session(engine) as s, s.begin():
        call = save_call(s, ShipCall("9300003", "Atlantic", "long_haul", "berthed", "g-c", start, None), actor="t")
        alarm = s.execute(coverage_alarms.insert().values(call_id=call, ship="9300003", gate_id="g-c",
                                                          period_start=start,
                                                          raised_at=start + dt.timedelta(minutes=30))
                          ).inserted_primary_key[0]
    c, token = logged_in(app, "inspector")
    row = c.get("/alarms").text.split(f'id="coverage-{alarm}"')[1].split("</tr>")[0]
    assert 'data-label="Período">19-01 15/03/2026</td>' in row and 'data-acked="no"' in row
    empty = c.post(f"/alarms/coverage/{alarm}/acknowledge", data={"csrf_token": token, "comment": ""})
    assert empty.status_code == 400 and "o comentário é obrigatório" in empty.text
    r = c.post(f"/alarms/coverage/{alarm}/acknowledge", data={"csrf_token": token, "comment": "vigia a caminho"})
    assert r.status_code == 303 and r.headers["location"] == f"/alarms#coverage-{alarm}"
    row = c.get("/alarms").text.split(f'id="coverage-{alarm}"')[1].split("</tr>")[0]
    assert 'data-acked="yes"' in row and "inspector, " in row and "vigia a caminho" in row
    assert 'data-open="yes"' in c.get("/alarms").text.split(f'id="coverage-{alarm}"')[1][:40]
    assert c.post("/alarms/coverage/99999/acknowledge", data={"csrf_token": token, "comment": "x"}).status_code == 400
    assert c.post("/alarms/coverage/x/acknowledge", data={"csrf_token": token, "comment": "x"}).status_code == 404
    a, token_a = logged_in(app, "auditor")
    assert "ack-form" not in a.get("/alarms").text
    assert a.post(f"/alarms/coverage/{alarm}/acknowledge",
                  data={"csrf_token": token_a, "comment": "x"}).status_code == 403


def test_the_live_page_opens_with_a_summary_line_and_keeps_technical_fields_behind_a_toggle(engine, app, clock):
    """Issue 34 item 13: one line first (ships in port, watched and not, workers aboard, open
    alarms, gates offline and never seen); a gate card in plain words with its boot id and clock
    behind 'Detalhes técnicos'; the a-bordo list marked out of date while its gate still has
    records to send."""
    clock.at = NOW
    with Session(engine) as s, s.begin():
        save_call(s, ShipCall("9300003", "Lagoa Azul", "cabotage", "berthed", "g-lagoa", ARRIVAL, None),
                  actor="t", now=ARRIVAL)
        _watchman(s, "9300003", "Lagoa Azul", "g-lagoa")
        save_call(s, ShipCall("9300001", "Aurora", "cabotage", "berthed", "g-a", ARRIVAL, None),
                  actor="t", now=ARRIVAL)
        behind = _status("ok", NOW - dt.timedelta(seconds=5), ARRIVAL)
        gate_status.store(s.connection(), [msgspec.structs.replace(behind, outbox_depth=3)], NOW)
        coverage.evaluate(s, NOW, TZ, 30)
    c, _token = logged_in(app, "office")
    html = c.get("/").text
    summary = html.split('id="summary"')[1].split("</p>")[0]
    assert 'data-ships="2"' in summary and 'data-uncovered="1"' in summary and 'data-never="1"' in summary
    assert "navios no porto" in summary and "sem vigia" in summary and "nunca conectados" in summary
    card = html.split('data-gate="g-a"')[1].split("</article>")[0]
    assert "<summary>Detalhes técnicos</summary>" in card
    assert card.index("Detalhes técnicos") < card.index("<code>b1</code>")  # the boot id is technical
    assert card.index('class="outbox">3<') < card.index("Detalhes técnicos")
    aboard = html.split('data-ship="9300001"')[1].split("</article>")[0]
    assert 'data-stale="yes"' in aboard and "pode estar desatualizado: 3 registro(s)" in aboard
