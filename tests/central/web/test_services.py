"""The central services behind the web pages: cases under R7, the office coverage alarm (G11),
ship calls, the gates' stored statuses, and a confiscation opening its case whatever the source."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.calls import coverage
from central.calls.schema import coverage_alarms
from central.calls.service import ShipCall, import_csv, save_call
from central.ingest import status as gate_status
from central.ledger.schema import gate_status as gate_status_table
from central.registry import cases, store
from central.registry.schema import penalties, workers
from portgate.errors import BadInput
from portgate.records import Worker, WorkerStatus
from tests.central.web.events import add_flag_event
from wire.downlink import GateStatus

TZ = ZoneInfo("America/Sao_Paulo")
T0 = dt.datetime(2026, 3, 15, 10, 0, tzinfo=dt.UTC)  # 07:00 local


def _worker(s, reg="V008"):
    store.save_worker(s, Worker(reg, "Vigia", "vigia", WorkerStatus.ACTIVE, rotation_number=8),
                      actor="t", now=T0, action="worker.import")


def _case(engine, s):
    event_id = add_flag_event(engine, flags=["BORROWED_CARD"], registration="V008", at=T0)
    _worker(s)
    return cases.open_from_event(s, event_id, flag="BORROWED_CARD", charge="lent card", article="",
                                 evidence="seq 1", actor="web:f", now=T0)


def test_no_penalty_without_the_prior_defence_and_none_before_final(engine):
    with Session(engine) as s, s.begin():
        case_id = _case(engine, s)
        assert cases.get_case(s, case_id).article == "83.611 art. 20 j/l"
        with pytest.raises(BadInput, match="prior defence"):
            cases.decide(s, case_id, "suspension", days=10, start=T0.date(), actor="web:f", now=T0)
        cases.record_defence(s, case_id, "I lent it", attachments=[("a.txt", "text/plain", b"x")], actor="web:f", now=T0)
        with pytest.raises(BadInput, match="10 to 30 days"):
            cases.decide(s, case_id, "suspension", days=31, start=T0.date(), actor="web:f", now=T0)
        cases.decide(s, case_id, "suspension", days=10, start=T0.date(), actor="web:f", now=T0)
        assert s.execute(select(penalties)).all() == []  # not final: nothing on the record
        assert cases.finalize_expired(s, actor="sys", now=T0 + dt.timedelta(days=29)) == []
        assert cases.finalize_expired(s, actor="sys", now=T0 + dt.timedelta(days=31)) == [case_id]
        row = s.execute(select(workers).where(workers.c.registration == "V008")).one()
        assert row.status == "suspended" and row.suspended_until == T0.date() + dt.timedelta(days=9)


@pytest.mark.parametrize("text,reason", [
    ("a\x00b", "defence contains a NUL character"),
    ("x" * (cases.MAX_TEXT + 1), f"defence is longer than {cases.MAX_TEXT} characters ({cases.MAX_TEXT + 1})"),
])
def test_a_defence_with_a_nul_or_over_the_limit_is_refused_and_nothing_is_recorded(engine, text, reason):
    with Session(engine) as s, s.begin():
        case_id = _case(engine, s)
        with pytest.raises(BadInput) as caught:
            cases.record_defence(s, case_id, text, actor="web:f", now=T0)
        assert caught.value.reason == reason and caught.value.where == "defence"
        assert cases.get_case(s, case_id).defence in (None, "")
        with pytest.raises(BadInput, match="appeal contains a NUL"):
            cases.record_defence(s, case_id, "ok", actor="web:f", now=T0)
            cases.decide(s, case_id, "reprimand", actor="web:f", now=T0)
            cases.file_appeal(s, case_id, "a\x00", actor="web:f", now=T0)


def test_an_appeal_is_accepted_within_30_days_and_an_overturned_one_leaves_no_penalty(engine):
    with Session(engine) as s, s.begin():
        case_id = _case(engine, s)
        cases.record_defence(s, case_id, "not me", actor="web:f", now=T0)
        cases.decide(s, case_id, "suspension", days=15, start=T0.date(), actor="web:f", now=T0)
        with pytest.raises(BadInput, match="appeal window closed"):
            cases.file_appeal(s, case_id, "late", actor="web:f", now=T0 + dt.timedelta(days=31))
        cases.file_appeal(s, case_id, "unfair", actor="web:f", now=T0 + dt.timedelta(days=29))
        with pytest.raises(BadInput, match="cannot take step waive"):
            cases.waive_appeal(s, case_id, actor="web:f", now=T0)
        cases.decide_appeal(s, case_id, "overturned", actor="web:f", now=T0 + dt.timedelta(days=40))
        assert cases.get_case(s, case_id).status == "final"
        assert s.execute(select(penalties)).all() == []


def test_the_appeal_window_is_30_days_of_the_port_s_calendar_from_the_notice(engine):
    """R7 / 83.611 art. 21 §2: notice at 23:30 of 15/03 in São Paulo (02:30 UTC of 16/03); the 30
    days are counted in the port's calendar: the appeal is taken until 23:59:59 of 14/04 local
    (02:59:59 UTC of 15/04) and refused at 00:00 of 15/04 local, naming 14/04/2026 as the last day
    (a UTC count from the notice's instant would have ended at 02:30 UTC of 15/04, 23:30 local of
    14/04, and named 2026-04-15)."""
    notice = dt.datetime(2026, 3, 16, 2, 30, tzinfo=dt.UTC)
    with Session(engine) as s, s.begin():
        case_id = _case(engine, s)
        cases.record_defence(s, case_id, "not me", actor="web:f", now=T0)
        cases.decide(s, case_id, "reprimand", actor="web:f", now=notice)
        row = cases.get_case(s, case_id)
        assert cases.appeal_last_day(row, TZ) == dt.date(2026, 4, 14)
        assert cases.appeal_deadline(row, TZ) == dt.datetime(2026, 4, 15, 2, 59, 59, 999999, tzinfo=dt.UTC)
        with pytest.raises(BadInput) as late:
            cases.file_appeal(s, case_id, "late", actor="web:f", now=dt.datetime(2026, 4, 15, 3, 0, tzinfo=dt.UTC),
                              tz=TZ)
        assert late.value.reason == "the appeal window closed on 2026-04-14"
        assert cases.finalize_expired(s, actor="sys", now=dt.datetime(2026, 4, 15, 2, 59, tzinfo=dt.UTC), tz=TZ) == []
        cases.file_appeal(s, case_id, "in time", actor="web:f", now=dt.datetime(2026, 4, 15, 2, 59, tzinfo=dt.UTC),
                          tz=TZ)
        assert cases.get_case(s, case_id).status == "appealed"


def test_a_case_needs_a_flag_the_event_carries(engine):
    with Session(engine) as s, s.begin():
        event_id = add_flag_event(engine, flags=["ROTATION_JUMP"], at=T0)
        _worker(s)
        with pytest.raises(BadInput, match="does not carry flag BORROWED_CARD"):
            cases.open_from_event(s, event_id, flag="BORROWED_CARD", charge="x", article="", evidence="",
                                  actor="web:f", now=T0)
        with pytest.raises(BadInput, match="no event"):
            cases.open_from_event(s, "nope", flag="ROTATION_JUMP", charge="x", article="", evidence="",
                                  actor="web:f", now=T0)
        first = cases.open_from_event(s, event_id, flag="ROTATION_JUMP", charge="x", article="", evidence="",
                                      actor="web:f", now=T0)
        assert cases.open_from_event(s, event_id, flag="ROTATION_JUMP", charge="x", article="", evidence="",
                                     actor="web:f", now=T0) == first


def test_coverage_gaps_raise_after_the_grace_and_end_at_the_first_gangway_admit():
    arrival = dt.datetime(2026, 3, 15, 9, 0, tzinfo=dt.UTC)  # 06:00 local, period 01-07
    grace = dt.timedelta(minutes=30)
    now = dt.datetime(2026, 3, 15, 11, 0, tzinfo=dt.UTC)  # 08:00 local
    gaps = coverage.gaps(arrival, None, [], now, TZ, grace)
    assert [(g.period_start, g.raised_at, g.ended_at) for g in gaps] == [
        (arrival, arrival + grace, None),  # the arrival's period: 06:00 + 30 min
        (dt.datetime(2026, 3, 15, 10, 0, tzinfo=dt.UTC), dt.datetime(2026, 3, 15, 10, 30, tzinfo=dt.UTC), None),
    ]
    admit = dt.datetime(2026, 3, 15, 10, 45, tzinfo=dt.UTC)
    gaps = coverage.gaps(arrival, None, [(admit, None, "e1")], now, TZ, grace)
    assert [g.ended_at for g in gaps] == [admit, admit]
    # a watchman aboard at the due time: no alarm for that period
    gaps = coverage.gaps(arrival, None, [(arrival, None, "e0")], now, TZ, grace)
    assert gaps == []
    # a departure ends an alarm still open, and later periods raise nothing
    gone = dt.datetime(2026, 3, 15, 10, 40, tzinfo=dt.UTC)
    gaps = coverage.gaps(arrival, gone, [], now, TZ, grace)
    assert [g.ended_at for g in gaps] == [gone, gone]


def test_evaluate_writes_one_alarm_per_call_and_period_and_cabotage_raises_none(engine):
    now = dt.datetime(2026, 3, 15, 10, 45, tzinfo=dt.UTC)
    with Session(engine) as s, s.begin():
        save_call(s, ShipCall("9300002", "Nordic", "long_haul", "anchored", "g-b",
                              dt.datetime(2026, 3, 15, 10, 0, tzinfo=dt.UTC), None), actor="t", now=now)
        save_call(s, ShipCall("9300003", "Lagoa", "cabotage", "berthed", "g-c",
                              dt.datetime(2026, 3, 15, 10, 0, tzinfo=dt.UTC), None), actor="t", now=now)
        assert coverage.evaluate(s, now, TZ, 30) == 1
        assert coverage.evaluate(s, now, TZ, 30) == 0  # idempotent
    add_flag_event(engine, flags=[], registration="V003", gate_id="g-b", decision="admit",
                   at=now + dt.timedelta(minutes=1), ship="9300002")
    with Session(engine) as s, s.begin():
        assert coverage.evaluate(s, now + dt.timedelta(minutes=2), TZ, 30) == 1
        (row,) = s.execute(select(coverage_alarms)).all()
    assert row.ship == "9300002" and row.ended_at is not None and row.ended_by_event


def test_ships_csv_import_names_every_bad_row(engine, tmp_path):
    path = tmp_path / "ships.csv"
    path.write_text("ship,ship_name,voyage,berth,gate_id,arrival,departure\n"
                    "9300001,Aurora,long_haul,berthed,g-a,2026-03-15T06:00:00-03:00,\n"
                    "93X,Bad,long_haul,berthed,g-a,2026-03-15T06:00:00-03:00,\n"
                    "9300002,Nordic,ferry,berthed,g-b,2026-03-15T06:00:00,\n")
    with Session(engine) as s, s.begin():
        with pytest.raises(BadInput) as err:
            import_csv(s, path, actor="t")
    text = str(err.value)
    assert "ships.csv:3: ship: ship '93X' is not an IMO number" in text or "ships.csv:3" in text
    assert "ships.csv:4" in text and "ships.csv:2" not in text
    path.write_text("ship,ship_name,voyage,berth,gate_id,arrival,departure\n"
                    "9300001,Aurora,long_haul,berthed,g-a,2026-03-15T06:00:00-03:00,2026-03-16T06:00:00-03:00\n")
    with Session(engine) as s, s.begin():
        assert import_csv(s, path, actor="t") == 1
        assert import_csv(s, path, actor="t") == 1  # the same call again: updated, not doubled


def test_the_newest_gate_status_is_kept_and_a_last_will_marks_the_gate_offline(engine):
    def st(state, reason, at, boot="b1", **kw):
        return GateStatus(port="santos", gate_id="g1", boot_id=boot, state=state, reason=reason, at=at, **kw)

    t = T0
    with engine.begin() as conn:
        gate_status.store(conn, [st("online", "birth", t, outbox_depth=5, clock_trusted=True)], t)
        gate_status.store(conn, [st("online", "progress", t + dt.timedelta(seconds=5), outbox_depth=0)], t)
        gate_status.store(conn, [st("online", "progress", t + dt.timedelta(seconds=2), outbox_depth=9)], t)  # late
        row = conn.execute(select(gate_status_table)).one()
        assert row.outbox_depth == 0 and row.state == "online"
        later = t + dt.timedelta(minutes=1)
        gate_status.store(conn, [st("offline", "will", t)], later)  # the Will: sent at connect time
        row = conn.execute(select(gate_status_table)).one()
    assert row.state == "offline" and row.outbox_depth == 0
    assert row.since.replace(tzinfo=dt.UTC) == later


def test_a_confiscation_opens_its_case_with_the_csv_downlink_source(tmp_path):
    """The demo's office publishes from CSV files; its confiscations still reach ``cases``."""
    import msgspec

    from central.config import CentralConfig, IngestSettings
    from central.db import make_engine
    from central.ingest.keys import KeyRing, add_gate
    from central.ingest.writer import LedgerWriter
    from central.ledger.migrate import upgrade_engine
    from central.registry.confiscation import list_cases
    from portgate.config import read_secret
    from wire.events import ConfiscationPayload, Event, encode, new_event_id, sign
    from wire.connection import MqttConfig

    keys = tmp_path / "keys"
    keys.mkdir()
    key_path = add_gate(keys, "g1")
    engine = make_engine(f"sqlite:///{tmp_path / 'l.db'}")
    upgrade_engine(engine)
    config = CentralConfig(database_url="sqlite://", port="santos", keys_dir=str(keys),
                           mqtt=MqttConfig(port=1), ingest=IngestSettings(relay_presence=False, writer="thread"))
    assert config.publish.source == "csv"
    writer = LedgerWriter(config, engine, KeyRing(str(keys)))
    event = sign(Event(event_id=new_event_id(), port="santos", gate_id="g1", boot_id="b", seq=1, occurred_at=T0,
                       clock_trusted=True, mono_ns=1,
                       payload=ConfiscationPayload(uid="0A04A10008", registration="V008", inspector_uid="0F1F5CA001",
                                                   inspector_registration="F001", reason_flag="BORROWED_CARD",
                                                   article="83.611 art. 20 j/l")), read_secret(key_path, what="gate key"))
    out = writer.process(1, [("portgate/v1/santos/gate/g1/events", encode(event))])
    assert out.stats.get("cases_opened") == 1
    with Session(engine) as s:
        (case,) = list_cases(s)
    assert case["registration"] == "V008" and case["reason_flag"] == "BORROWED_CARD" and case["status"] == "open"
    engine.dispose()
    assert msgspec


def test_the_office_records_a_departure_in_the_web_form_and_ships_csv_from_the_command_line(app, tmp_path):
    from central.calls.schema import ship_calls
    from app.cli import main
    from tests.central.web.conftest import logged_in

    c, token = logged_in(app, "office")
    form = {"ship": "9300009", "ship_name": "Aurora", "voyage": "long_haul", "berth": "berthed", "gate_id": "g9",
            "arrival": "2026-03-15T06:00:00-03:00", "departure": "", "csrf_token": token}
    assert c.post("/ships", data=form).status_code == 303
    with Session(app.state.web.engine) as s:
        call_id = s.execute(select(ship_calls.c.id)).scalar_one()
    r = c.post(f"/ships/{call_id}/departure", data={"departure": "2026-03-15T05:00:00-03:00", "csrf_token": token})
    assert r.status_code == 400 and "a saída não é depois da chegada" in r.text
    r = c.post(f"/ships/{call_id}/departure", data={"departure": "2026-03-16T06:00:00-03:00", "csrf_token": token})
    assert r.status_code == 303
    with Session(app.state.web.engine) as s:
        assert s.execute(select(ship_calls.c.departure)).scalar_one() is not None
    if app.state.web.engine.dialect.name != "sqlite":
        return
    cfg = tmp_path / "central.toml"
    cfg.write_text(f'database_url = "{app.state.web.engine.url}"\nport = "santos"\nkeys_dir = "{tmp_path}"\n')
    ships = tmp_path / "ships.csv"
    ships.write_text("ship,ship_name,voyage,berth,gate_id,arrival,departure\n"
                     "9300010,Nordic,long_haul,anchored,g10,2026-03-15T06:00:00-03:00,\n")
    assert main(["office", "import-ships", "--config", str(cfg), "--ships", str(ships)]) == 0
    ships.write_text("ship,ship_name,voyage,berth,gate_id,arrival,departure\nX,,,,,,\n")
    assert main(["office", "import-ships", "--config", str(cfg), "--ships", str(ships)]) == 2
    with Session(app.state.web.engine) as s:
        assert s.execute(select(ship_calls.c.ship).order_by(ship_calls.c.ship)).scalars().all() == ["9300009", "9300010"]


def test_an_alarm_is_acknowledged_with_a_comment_and_stays_raised(engine):
    """Issue 33: a coverage or reader alarm is acknowledged with a comment (the latest one kept,
    every one in the audit log); the acknowledgement does not end it; refusals name the field."""
    from central.calls import acks
    from central.calls.schema import coverage_alarms
    from central.ledger.schema import reader_alarms
    from central.registry.schema import audit_log

    with Session(engine) as s, s.begin():
        call = save_call(s, ShipCall("9300003", "Atlantic", "long_haul", "berthed", "g-c", T0, None), actor="t")
        cov = s.execute(coverage_alarms.insert().values(call_id=call, ship="9300003", gate_id="g-c",
                                                        period_start=T0, raised_at=T0)).inserted_primary_key[0]
        rdr = s.execute(reader_alarms.insert().values(gate_id="g-a", reader_id="r-badge", kind="badge",
                                                      raised_at=T0, detail="sem sinal")).inserted_primary_key[0]
        acks.acknowledge(s, "coverage", cov, "vigia a caminho", actor="web:f", now=T0)
        acks.acknowledge(s, "coverage", cov, "vigia chegou às 07:40", actor="web:f", now=T0 + dt.timedelta(minutes=9))
        acks.acknowledge(s, "reader", rdr, "técnico chamado", actor="web:o", now=T0)
        for kind, alarm, comment, reason in (("coverage", cov, " ", "the comment is required"),
                                             ("reader", 999, "x", "no reader alarm 999"),
                                             ("clock", 1, "x", "alarm kind 'clock' is not one of")):
            with pytest.raises(BadInput, match=reason):
                acks.acknowledge(s, kind, alarm, comment, actor="web:f", now=T0)
    with Session(engine) as s:
        got = acks.acks(s, "coverage", [cov])[cov]
        assert (got.comment, got.actor) == ("vigia chegou às 07:40", "web:f")
        assert acks.acks(s, "reader", [rdr])[rdr].comment == "técnico chamado"
        assert s.execute(select(coverage_alarms.c.ended_at).where(coverage_alarms.c.id == cov)).scalar() is None
        assert s.execute(select(audit_log.c.subject).where(audit_log.c.action == "alarm.acknowledge")).scalars().all() == [
            f"coverage:{cov}", f"coverage:{cov}", f"reader:{rdr}"]
