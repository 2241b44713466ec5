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
    assert "cartão emprestado (G4)" in html  # "j/l" kept on one line (issue 34 item 14)
    assert 'data-label="Mensagem">83.611 art. 20 <span class="nb">j/l</span></td>' in html
    assert "BORROWED_CARD (" not in html  # never the raw code on a pt-BR page


def _queue(c, **params) -> tuple[dict[str, str], dict[str, int]]:
    """The queue's rows (event -> state) and the counts per state, as the page shows them."""
    import re

    html = c.get("/flags", params=params).text
    rows = dict(re.findall(r'data-event="([^"]+)" data-flags="[^"]*" data-state="(\w+)"', html))
    counts = {s: int(n) for s, n in re.findall(r'<li data-state="(\w+)">.*?<span class="n">(\d+)</span>', html)}
    return rows, counts


def test_a_flag_is_new_then_seen_with_a_comment_then_handled_and_the_queue_filters_and_counts(app):
    """Issue 33: new -> acknowledged with a comment (seen) -> closed as no infraction (handled); a
    comment is required; a handled flag takes no further review; every step is in the audit log."""
    from sqlalchemy import select

    from central.registry.schema import audit_log

    engine = app.state.web.engine
    a = add_flag_event(engine, flags=["BORROWED_CARD"], registration="V008", badge_registration="V009")
    b = add_flag_event(engine, flags=["NOT_DISPATCHED"], registration="V020")
    c, token = logged_in(app, "inspector")
    assert _queue(c) == ({a: "new", b: "new"}, {"new": 2, "seen": 0, "handled": 0})

    empty = c.post(f"/flags/{b}/acknowledge", data={"csrf_token": token, "comment": "  "})
    assert empty.status_code == 400 and "o comentário é obrigatório" in empty.text
    r = c.post(f"/flags/{b}/acknowledge", data={"csrf_token": token, "comment": "falou com o vigia"})
    assert r.status_code == 303 and r.headers["location"] == f"/flags/{b}"
    page = c.get(f"/flags/{b}").text
    assert 'data-state="seen"' in page and "falou com o vigia" in page and 'id="review-form"' in page
    assert _queue(c) == ({a: "new", b: "seen"}, {"new": 1, "seen": 1, "handled": 0})
    assert _queue(c, state="seen")[0] == {b: "seen"}

    r = c.post(f"/flags/{b}/close", data={"csrf_token": token, "comment": "escalado por telefone",
                                          "back": "/flags?state=seen"})
    assert r.status_code == 303 and r.headers["location"] == "/flags?state=seen"
    assert _queue(c, state="handled") == ({b: "handled"}, {"new": 1, "seen": 0, "handled": 1})
    page = c.get(f"/flags/{b}").text
    assert "sem infração, por inspector" in page and 'id="review-form"' not in page
    again = c.post(f"/flags/{b}/acknowledge", data={"csrf_token": token, "comment": "de novo"})
    assert again.status_code == 400 and "já foi tratada (sem infração)" in again.text
    with engine.connect() as conn:
        actions = [r.action for r in conn.execute(select(audit_log.c.action).where(audit_log.c.subject == b))]
    assert actions == ["flag.acknowledge", "flag.no_infraction"]


def test_a_case_opened_in_one_step_carries_the_flagged_read_and_handles_the_flag(app):
    """Issue 33 / R7: one button opens the case; its charge is the flag's name, its article the
    flag's (83.611 art. 20 j/l for a borrowed card), its evidence the flagged read (gate, seq, port
    time, card), never '—'; the flag is then handled."""
    engine = app.state.web.engine
    a = add_flag_event(engine, flags=["BORROWED_CARD"], registration="V008", badge_registration="V009")
    c, token = logged_in(app, "inspector")
    r = c.post(f"/flags/{a}/case", data={"csrf_token": token})
    assert r.status_code == 303 and r.headers["location"].startswith("/cases/")
    case = c.get(r.headers["location"]).text
    assert "cartão emprestado (G4)" in case and "83.611 art. 20 j/l" in case
    assert "leitura sinalizada: g1 seq" in case and "<dd>—" not in case.split(">evidência<")[-1][:40]
    rows, counts = _queue(c)
    assert rows[a] == "handled" and counts["handled"] == 1
    assert c.post(f"/flags/{a}/close", data={"csrf_token": token, "comment": "x"}).status_code == 400
    # the queue links the case for whoever may open it; the office clerk (403 on /cases) reads its number
    case_id = r.headers["location"].rsplit("/", 1)[1]
    assert f'href="/cases/{case_id}"' in c.get("/flags?state=handled").text
    office, _ = logged_in(app, "office")
    queue = office.get("/flags?state=handled").text
    assert f"#{case_id}" in queue and 'href="/cases/' not in queue
    assert office.get(f"/cases/{case_id}").status_code == 403


def test_only_an_inspector_reviews_a_flag_and_a_forged_request_is_refused(app):
    a = add_flag_event(app.state.web.engine, flags=["ROTATION_JUMP"], registration="V020")
    for role in ("office", "auditor"):
        c, token = logged_in(app, role)
        assert c.post(f"/flags/{a}/acknowledge", data={"csrf_token": token, "comment": "x"}).status_code == 403
        assert c.post(f"/flags/{a}/case", data={"csrf_token": token}).status_code == 403
    c, token = logged_in(app, "inspector")
    assert c.post(f"/flags/{a}/acknowledge", data={"comment": "x"}).status_code == 403  # no CSRF token
    assert c.post("/flags/no-such-event/acknowledge", data={"csrf_token": token, "comment": "x"}).status_code == 400
    plain = add_flag_event(app.state.web.engine, flags=[], registration="V001", decision="admit")
    r = c.post(f"/flags/{plain}/close", data={"csrf_token": token, "comment": "x"})
    assert r.status_code == 400 and "não tem ocorrência" in r.text
    assert _queue(c)[0] == {a: "new"}
    bad = c.get("/flags", params={"state": "lido"})
    assert bad.status_code == 400 and "não é um dos valores new, seen, handled" in bad.text


def test_the_queue_exports_csv_with_its_filters_and_no_formula(app):
    """The CSV carries the page's filters, codes as codes, times in UTC ISO and the review; a comment
    typed as a formula comes out as text (a leading apostrophe)."""
    import csv
    import io

    engine = app.state.web.engine
    a = add_flag_event(engine, flags=["BORROWED_CARD"], registration="V008", badge_registration="V009")
    b = add_flag_event(engine, flags=["NOT_DISPATCHED"], registration="V020")
    c, token = logged_in(app, "inspector")
    c.post(f"/flags/{a}/acknowledge", data={"csrf_token": token, "comment": "=HYPERLINK(\"http://x\")"})
    r = c.get("/flags.csv")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.text)))  # a pt-BR session: pt-BR headers
    assert {x["evento"]: x["estado"] for x in rows} == {a: "seen", b: "new"}
    [seen] = [x for x in rows if x["evento"] == a]
    assert seen["comentário"] == "'=HYPERLINK(\"http://x\")" and seen["ocorrências"] == "BORROWED_CARD"
    assert seen["revisto_por"] == "web:inspector" and seen["instante_utc"].endswith("+00:00")
    only = list(csv.DictReader(io.StringIO(c.get("/flags.csv", params={"state": "new"}).text)))
    assert [x["evento"] for x in only] == [b]
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    english = list(csv.DictReader(io.StringIO(c.get("/flags.csv").text)))
    assert [{k: x[k] for k in ("event_id", "state", "flags", "reviewed_by")} for x in english if x["event_id"] == a] \
        == [{"event_id": a, "state": "seen", "flags": "BORROWED_CARD", "reviewed_by": "web:inspector"}]
    assert 'href="/flags.csv?state=new"' in c.get("/flags", params={"state": "new"}).text


def test_a_second_case_for_a_flag_opened_meanwhile_is_refused_naming_the_first(app):
    """Two inspectors on the same flag: the second one's form (sent after the first opened the
    case) answers 409 with a link to the case; what he typed opens nothing."""
    a = add_flag_event(app.state.web.engine, flags=["BORROWED_CARD"], registration="V008")
    c, token = logged_in(app, "inspector")
    first = c.post(f"/flags/{a}/case", data={"csrf_token": token}).headers["location"]
    r = c.post("/cases", data={"csrf_token": token, "event_id": a, "flag": "BORROWED_CARD",
                               "charge": "Outra acusação digitada"})
    assert r.status_code == 409 and "Já existe um processo" in r.text and f'href="{first}"' in r.text
    assert "Outra acusação" not in c.get(first).text
