"""The cases pages in the page's language: a case's flag by its pt-BR name with the rule id (the
code only in a data attribute), a decision refused with its field and values in Portuguese, an
unknown attachment named in Portuguese; English pages in English."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from sqlalchemy.orm import Session

from central.config import WebSettings
from central.registry import cases, store
from central.web.app import create_app
from portgate.records import Worker, WorkerStatus
from tests.central.web.conftest import SECRET, logged_in
from tests.central.web.events import add_flag_event

T0 = dt.datetime(2026, 3, 15, 10, 0, tzinfo=dt.UTC)


def _open_case(engine) -> int:
    event_id = add_flag_event(engine, flags=["BORROWED_CARD"], registration="V008", at=T0)
    with Session(engine) as s, s.begin():
        store.save_worker(s, Worker("V008", "Vigia", "vigia", WorkerStatus.ACTIVE, rotation_number=8),
                          actor="t", now=T0, action="worker.import")
        return cases.open_from_event(s, event_id, flag="BORROWED_CARD", charge="Empréstimo do cartão", article="",
                                     evidence="seq 1", actor="web:f", now=T0)


def _visible(html: str) -> str:
    """The page's text without its tags and attributes (what a person reads)."""
    return re.sub(r"<[^>]*>", " ", html)


def test_a_case_s_flag_is_named_in_portuguese_on_the_list_the_case_and_the_worker(app):
    case_id = _open_case(app.state.web.engine)
    c, _ = logged_in(app, "inspector")
    for path in ("/cases", f"/cases/{case_id}", "/flags", "/flags?flag=BORROWED_CARD"):
        html = c.get(path).text
        assert "cartão emprestado (G4)" in _visible(html), path
        assert "BORROWED_CARD" not in _visible(html), path
    assert 'data-flag="BORROWED_CARD"' in c.get("/cases").text
    worker = logged_in(app, "office")[0].get("/workers/V008").text
    assert "cartão emprestado (G4)" in worker and "— aberto" in worker


def test_in_english_a_case_s_flag_reads_borrowed_card(engine, users, clock):
    app = create_app(engine, WebSettings(lang="en"), SECRET, now=clock, background=False)
    case_id = _open_case(engine)
    c, _ = logged_in(app, "inspector")
    assert "borrowed card (G4)" in c.get(f"/cases/{case_id}").text


def test_a_decision_that_is_not_one_of_the_kinds_is_refused_in_portuguese(app):
    case_id = _open_case(app.state.web.engine)
    c, token = logged_in(app, "inspector")
    c.post(f"/cases/{case_id}/defence", data={"csrf_token": token, "defence": "emprestei"})
    r = c.post(f"/cases/{case_id}/decide", data={"csrf_token": token, "kind": "talvez"})
    assert r.status_code == 400
    text = _visible(r.text)
    assert "decisão: a decisão &#39;talvez&#39; não é uma de nenhuma (none), repreensão (reprimand)" in text
    assert "decision" not in text


@pytest.mark.parametrize("attachment", ["99999999999999999999", "5"])
def test_an_unknown_attachment_is_named_in_portuguese(app, attachment):
    case_id = _open_case(app.state.web.engine)
    c, _ = logged_in(app, "inspector")
    r = c.get(f"/cases/{case_id}/attachments/{attachment}")
    assert r.status_code == 404 and "anexo: nenhum anexo" in r.text and "no attachment" not in r.text


def test_the_case_page_is_the_due_process_record_with_dates_in_the_port_s_calendar(app):
    """Issue 33 item 6 (R7): the accused's name, who opened the case and when, and the timeline:
    charge, defence, decision and notice, appeal (pending, until its last day dd/mm/aaaa in the
    port's calendar), final; a suspension out of the rulebook's range is refused in pt-BR."""
    import datetime as dt

    from sqlalchemy.orm import Session

    from central.registry import store
    from portgate.records import Worker, WorkerStatus
    from tests.central.web.events import add_flag_event

    engine = app.state.web.engine
    with Session(engine) as s, s.begin():
        store.save_worker(s, Worker("V008", "Ana Vigia", "vigia", WorkerStatus.ACTIVE, rotation_number=8),
                          actor="t", now=dt.datetime.now(dt.UTC), action="worker.import")
    event = add_flag_event(engine, flags=["BORROWED_CARD"], registration="V008")
    c, token = logged_in(app, "inspector")
    case_url = c.post(f"/flags/{event}/case", data={"csrf_token": token}).headers["location"]
    page = c.get(case_url).text
    assert "Ana Vigia (V008)" in page and 'id="opened">inspector · ' in page
    steps = page.split('id="timeline"')[1].split("</ol>")[0]
    assert 'data-step="charge" class="done"' in steps and 'data-step="defence" class="pending"' in steps
    assert "pendente" in steps and "T" not in steps.split("Acusação</strong>:")[1].split("</li>")[0]
    case_id = case_url.rsplit("/", 1)[1]
    c.post(f"/cases/{case_id}/defence", data={"csrf_token": token, "defence": "não fui eu"})
    refused = c.post(f"/cases/{case_id}/decide", data={"csrf_token": token, "kind": "suspension", "days": "45",
                                                        "start": "2026-03-20"})
    assert refused.status_code == 400 and "a suspensão vai de" in refused.text and "não 45 (R4)" in refused.text
    c.post(f"/cases/{case_id}/decide", data={"csrf_token": token, "kind": "suspension", "days": "10",
                                             "start": "2026-03-20"})
    page = c.get(case_url).text
    now = app.state.web.now().astimezone(app.state.web.tz).date()
    last = (now + dt.timedelta(days=30)).strftime("%d/%m/%Y")
    assert f"recurso até {last}" in page and "20/03/2026" in page
    steps = page.split('id="timeline"')[1].split("</ol>")[0]
    assert 'data-step="decision" class="done"' in steps
    assert f'<span class="deadline">{last}</span>' in steps.split('data-step="appeal"')[1]
