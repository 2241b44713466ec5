"""The inspectors' flag queue: filters, the taps around a flag, opening a case from it."""

from __future__ import annotations

from tests.central.web.conftest import logged_in
from tests.central.web.events import add_flag_event

__all__ = ["add_flag_event"]


def test_the_queue_filters_by_flag_gate_worker_ship_and_date(app):
    engine = app.state.web.engine
    borrowed = add_flag_event(engine, flags=["BORROWED_CARD"], registration="V008", badge_registration="V009")
    jump = add_flag_event(engine, flags=["ROTATION_JUMP"], registration="V020", gate_id="g2", ship="9300002")
    add_flag_event(engine, flags=[], registration="V001", decision="admit")  # not a flag
    c, _ = logged_in(app, "inspector")

    def shown(**params):
        html = c.get("/flags", params=params).text
        return {e for e in (borrowed, jump) if f'data-event="{e}"' in html}

    assert shown() == {borrowed, jump}
    assert shown(flag="BORROWED_CARD") == {borrowed}
    assert shown(gate="g2") == {jump}
    assert shown(worker="V009") == {borrowed}  # the badge's holder finds it too
    assert shown(ship="9300002") == {jump}
    today = app.state.web.now().astimezone(app.state.web.tz).date()
    assert shown(date=today.isoformat()) == {borrowed, jump}
    assert shown(date="2001-01-01") == set()
    r = c.get("/flags", params={"flag": "NOT_A_FLAG"})
    assert r.status_code == 400 and "NOT_A_FLAG" in r.text


def test_a_flag_links_to_the_taps_around_it(app):
    engine = app.state.web.engine
    before = add_flag_event(engine, flags=[], registration="V001", decision="admit")
    flagged = add_flag_event(engine, flags=["BORROWED_CARD"])
    c, _ = logged_in(app, "auditor")
    html = c.get(f"/flags/{flagged}").text
    assert "cartão emprestado (G4)" in html and "V001" in html
    assert 'id="open-case"' not in html  # an auditor reads, never opens a case
    assert c.get("/flags/no-such-event").status_code == 404
    assert before


def test_every_flag_the_queue_lists_is_in_the_drop_down_and_filters():
    from central.web.flagsmodel import FLAGS
    from wire.flags import Flag
    assert set(Flag) <= set(FLAGS) and "CONFISCATION" in FLAGS


def test_not_dispatched_meal_worked_and_meal_mode_filter_and_are_offered(app):
    engine = app.state.web.engine
    made = {code: add_flag_event(engine, flags=[code], registration="V008")
            for code in ("NOT_DISPATCHED", "MEAL_WORKED", "MEAL_MODE")}
    c, _ = logged_in(app, "inspector")
    page = c.get("/flags").text
    for code, event in made.items():
        assert f'<option value="{code}">' in page, code
        r = c.get("/flags", params={"flag": code})
        assert r.status_code == 200, (code, r.text)
        assert {e for e in made.values() if f'data-event="{e}"' in r.text} == {event}
    assert "não escalado (G6)</option>" in page and "refeição trabalhada (P6)</option>" in page


def test_an_unknown_flag_is_refused_naming_the_flags_in_the_pages_language(app):
    c, token = logged_in(app, "inspector")
    r = c.get("/flags", params={"flag": "NOPE"})
    assert r.status_code == 400
    assert "&#39;NOPE&#39;" in r.text or "'NOPE'" in r.text
    assert "cartão emprestado (BORROWED_CARD)" in r.text and "não escalado (NOT_DISPATCHED)" in r.text
    assert "não é uma das ocorrências" in r.text
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    r = c.get("/flags", params={"flag": "NOPE"})
    assert r.status_code == 400 and "is not one of" in r.text and "NOT_DISPATCHED" in r.text


def test_the_case_form_names_its_flag_choices_in_the_pages_language(app):
    flagged = add_flag_event(app.state.web.engine, flags=["BORROWED_CARD"])
    c, _ = logged_in(app, "inspector")
    html = c.get(f"/flags/{flagged}").text
    assert 'id="open-case"' in html
    assert '<option value="BORROWED_CARD">cartão emprestado (G4)</option>' in html  # the code is the value


def test_a_confiscation_s_message_is_its_article_its_reason_in_the_flag_column(app):
    import datetime as dt

    from central.ingest.event_store import Accepted, write_batch
    from wire.events import ConfiscationPayload, Event, encode, new_event_id, sign

    at = dt.datetime.now(dt.UTC)
    payload = ConfiscationPayload(uid="AA000008", registration="V008", inspector_uid="FF000001",
                                  inspector_registration="F001", reason_flag="BORROWED_CARD",
                                  article="83.611 art. 20 j/l")
    event = sign(Event(event_id=new_event_id(), port="santos", gate_id="g1", boot_id="b9", seq=1,
                       occurred_at=at, clock_trusted=True, mono_ns=1, payload=payload), b"k")
    with app.state.web.engine.begin() as conn:
        write_batch(conn, [Accepted("portgate/v1/santos/gate/g1/events", event, encode(event))], [], at)
    c, _ = logged_in(app, "inspector")
    html = c.get("/flags", params={"flag": "CONFISCATION"}).text
    assert f'data-event="{event.event_id}"' in html
    assert "cartão emprestado (G4)" in html and "<td>83.611 art. 20 j/l</td>" in html
    assert "BORROWED_CARD (" not in html  # never the raw code on a pt-BR page
