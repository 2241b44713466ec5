"""A defence whose answer is lost after the server saved it, sent again from the phone's draft,
in a real browser at 360 px (Playwright, Debian's chromium) against the office app served by uvicorn
(``test_worker_browser``'s ``office``, a fresh one for this module): one defence, one ``case.defence``
row (``central.web.resend``); a refusal on a worker's address in the worker's layout fits the phone."""

from __future__ import annotations

import contextlib

from sqlalchemy import func, select

from central.registry.schema import audit_log
from testkit.wait import wait_until
from tests.central.web.test_worker_browser import (  # noqa: F401 (fixtures)
    WORKER_PASSWORD, fits, office, phone, shot, worker_log_in)


def _defences(office) -> int:
    with office.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(audit_log)
                            .where(audit_log.c.action == "case.defence")).scalar_one()


def test_a_defence_saved_whose_answer_was_lost_is_not_stored_again(office, browser, tmp_path):
    context, pg = phone(browser)
    case_url = office.url + f"/w/processos/{office.case_id}"
    typed = "Saí às 10h por ordem do contramestre; a resposta se perdeu."
    before = _defences(office)
    try:
        worker_log_in(pg, office.url, "V008", WORKER_PASSWORD)
        pg.goto(case_url)
        pg.get_by_label("Sua defesa").fill(typed)

        def lose_answer(route):  # the server gets the defence and saves it; its answer never arrives
            route.fetch(max_redirects=0)
            route.abort()

        pg.route("**/defesa", lose_answer)
        with contextlib.suppress(Exception):
            pg.get_by_role("button", name="Enviar defesa").click(timeout=10_000)
        wait_until(lambda: _defences(office) == before + 1, 120, what="the first send saved")
        pg.unroute("**/defesa")
        pg.goto(case_url)  # he opens the page again: the draft is still on the phone, and he sends it
        assert pg.get_by_label("Sua defesa").input_value() == typed
        pg.get_by_role("button", name="Enviar defesa").click()
        pg.locator("#saved").wait_for()
        assert pg.locator("#defence").inner_text().count(typed) == 1
        assert pg.get_by_label("Sua defesa").input_value() == ""  # recorded: the draft is gone
        assert _defences(office) == before + 1
        fits(pg)
        pg.goto(office.url + "/w/nada")  # a refusal on a worker's address: his layout, a way back
        assert pg.title() == "portgate — trabalhador" and pg.locator("#back").get_attribute("href") == "/w/"
        fits(pg)
        shot(pg, "refusal", tmp_path)
    finally:
        context.close()
