"""Confiscation (G10): the card is blocked at every gate, a case is opened, the DTM report."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.registry import store
from central.registry.api import changes_since, roster_snapshot
from central.registry.confiscation import list_cases, record_confiscation, return_card
from central.registry.schema import penalties
from app.cli import main
from portgate.errors import BadInput
from tests.central.registry.conftest import worker
from wire.events import AlertPayload, ConfiscationPayload, Event, new_event_id
from portgate.records import Card, CardKind, CardStatus
from portgate.timeutil import as_utc

AT = dt.datetime(2026, 3, 10, 10, 15, tzinfo=dt.UTC)


def event(payload, event_id=None) -> Event:
    return Event(event_id=event_id or new_event_id(), port="santos", gate_id="g1", boot_id="b1",
                 seq=7, occurred_at=AT, clock_trusted=True, mono_ns=1, payload=payload)


def confiscation(uid="1A2B3C4D", registration="V001"):
    return ConfiscationPayload(uid=uid, registration=registration, inspector_uid="99887766",
                               inspector_registration="F01", reason_flag="ROTATION_JUMP",
                               article="83.611 art. 20 i")


@pytest.fixture
def registry(engine):
    with Session(engine) as s, s.begin():
        now = store.utcnow()
        store.save_worker(s, worker("V001", 1), actor="ana", now=now, action="test")
        store.save_card(s, Card("1A2B3C4D", CardKind.CONTROL, "V001", CardStatus.ACTIVE),
                        event="issued", actor="ana", now=now)
    return engine


def test_confiscation_blocks_the_card_everywhere_opens_a_case_and_records_the_infraction(registry):
    with Session(registry) as s:
        version, *_ = roster_snapshot(s)
    with Session(registry) as s, s.begin():
        case_id = record_confiscation(s, event(confiscation()))
    with Session(registry) as s:
        [change] = changes_since(s, "cards", version)
        assert (change.key, change.body["status"], change.actor) == (
            "1A2B3C4D", "confiscated", "inspector:F01")
        [case] = list_cases(s, "open")
        assert (case["id"], case["reason_flag"], case["article"]) == (
            case_id, "ROTATION_JUMP", "83.611 art. 20 i")
        [p] = s.execute(select(penalties)).all()
        assert (p.kind, p.rule, p.case_id) == ("infraction", "G10", case_id)


def test_a_redelivered_confiscation_event_is_applied_once(registry):
    e = event(confiscation())
    with Session(registry) as s, s.begin():
        first = record_confiscation(s, e)
    with Session(registry) as s, s.begin():
        assert record_confiscation(s, e) == first
    with Session(registry) as s:
        assert len(list_cases(s)) == 1
        assert len(changes_since(s, "cards", 0)) == 2  # issued + confiscated


def test_an_unknown_card_still_opens_a_case_without_a_change(registry):
    with Session(registry) as s, s.begin():
        record_confiscation(s, event(confiscation(uid="0F0F0F0F", registration=None)))
    with Session(registry) as s:
        assert [c["card_uid"] for c in list_cases(s)] == ["0F0F0F0F"]
        assert len(changes_since(s, "cards", 0)) == 1


def test_a_non_confiscation_event_is_bad_input(registry):
    with Session(registry) as s, pytest.raises(BadInput):
        record_confiscation(s, event(AlertPayload(code="X")))


def test_case_report_for_the_labour_office_and_sanctions_linked_to_the_case(registry, db_url,
                                                                            capsys):
    with Session(registry) as s, s.begin():
        case_id = record_confiscation(s, event(confiscation()))
    assert main(["registry", "suspend", "V001", "--db", db_url, "--actor", "dtm", "--from",
                 "2026-03-20", "--days", "30", "--reason", "burla do rodízio", "--case",
                 str(case_id)]) == 0
    capsys.readouterr()
    assert main(["registry", "case-report", str(case_id), "--db", db_url, "--actor", "x"]) == 0
    text = capsys.readouterr().out
    assert "Delegacia do Trabalho Marítimo" in text and "83.611 art. 20 i" in text
    assert "Penalidade: suspension" in text and "2026-03-20 a 2026-04-18" in text
    assert main(["registry", "cases", "--db", db_url, "--actor", "x", "--status", "open"]) == 0
    assert '"ROTATION_JUMP"' in capsys.readouterr().out
    assert main(["registry", "case-report", "999", "--db", db_url, "--actor", "x"]) == 2


def test_returning_the_card_reactivates_it_and_closes_the_case(registry):
    with Session(registry) as s, s.begin():
        record_confiscation(s, event(confiscation()))
    with Session(registry) as s, s.begin():
        return_card(s, "1A2B3C4D", decision="DTM: arquivado", actor="dtm")
    with Session(registry) as s:
        assert changes_since(s, "cards", 0)[-1].body["status"] == "active"
        [case] = list_cases(s)
        assert (case["status"], case["decision"]) == ("closed", "DTM: arquivado")


def test_the_case_card_history_and_infraction_carry_the_event_s_time_not_the_office_s_clock(registry):
    """Issue 34 item 15: the event of 10/03/2026 received long after (today's office clock, a demo's
    scripted day) opens a case dated 10/03/2026, and the card's history and the record say so too."""
    from central.registry.schema import audit_log, card_events, cases

    with Session(registry) as s, s.begin():
        case_id = record_confiscation(s, event(confiscation()))
    with Session(registry) as s:
        opened = s.execute(select(cases.c.opened_at).where(cases.c.id == case_id)).scalar_one()
        history = s.execute(select(card_events.c.at).where(card_events.c.uid == "1A2B3C4D",
                                                           card_events.c.event == "confiscated")).scalar_one()
        infraction = s.execute(select(penalties.c.created_at).where(penalties.c.case_id == case_id)).scalar_one()
        audited = s.execute(select(audit_log.c.at).where(audit_log.c.actor == "inspector:F01")).scalars().all()
    assert [as_utc(t) for t in (opened, history, infraction)] == [AT, AT, AT]
    assert audited and {as_utc(t) for t in audited} == {AT}
