"""In a real browser: a refused edit of a worker shows the service's validation error in
Portuguese on a pt-BR page and in English after the language switch (``central.web.service_texts``);
nothing is written either time. A value too long or too large for its column (``central.bounds``)
and a NUL in the address are refused in Portuguese too."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from central.registry.schema import workers
from testkit.browser import launch_chromium
from tests.central.web.live import LiveOffice, log_in


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    o = LiveOffice(tmp_path_factory.mktemp("office")).start()
    try:
        yield o
    finally:
        o.stop()


@pytest.fixture(scope="module")
def page(office):
    with launch_chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        pg = context.new_page()
        pg.set_default_timeout(20_000)
        log_in(pg, office)
        yield pg
        context.close()


def _bad_exam_date(page, office):
    page.goto(office.url + "/workers/V002")
    page.locator("#e-exam").fill("15/13/2026")  # dd/mm/aaaa, but no 13th month
    page.locator("#edit-form").get_by_role("button").last.click()
    alert = page.get_by_role("alert")
    alert.wait_for()
    return alert.inner_text()


def _exam(office):
    with office.engine.connect() as c:
        return c.execute(select(workers.c.health_exam_date).where(workers.c.registration == "V002")).scalar()


def test_a_pt_br_page_shows_the_validation_error_in_portuguese_and_the_en_page_in_english(office, page):
    before = _exam(office)
    text = _bad_exam_date(page, office)
    assert "data do exame de saúde '15/13/2026' não é uma data válida (dd/mm/aaaa)" in text
    assert "is not" not in text and "health_exam_date" not in text
    assert page.locator("html").get_attribute("lang") == "pt-BR"
    # the switch at the top of the page, then the same refused edit
    page.locator("#lang-select").select_option("en")
    page.locator("form[action='/lang']").get_by_role("button").click()
    page.wait_for_load_state()
    assert page.locator("html").get_attribute("lang") == "en"
    text = _bad_exam_date(page, office)
    assert "health_exam_date '15/13/2026' is not a day written dd/mm/aaaa" in text
    assert _exam(office) == before  # nothing written either time
    page.locator("#lang-select").select_option("pt")
    page.locator("form[action='/lang']").get_by_role("button").click()
    page.wait_for_load_state()


def _edit(page, office, selector: str, value: str) -> str:
    page.goto(office.url + "/workers/V002")
    page.locator(selector).fill(value)
    page.locator("#edit-form").get_by_role("button").last.click()
    alert = page.get_by_role("alert")
    alert.wait_for()
    return alert.inner_text()


def _row(office):
    with office.engine.connect() as c:
        return c.execute(select(workers.c.category, workers.c.rotation_number)
                         .where(workers.c.registration == "V002")).one()


def test_a_value_too_long_or_too_large_for_its_column_is_refused_in_portuguese(office, page):
    before = _row(office)
    text = _edit(page, office, "#e-category", "c" * 100)
    assert "categoria tem mais de 64 caracteres (100)" in text and "longer" not in text
    text = _edit(page, office, "#e-rot", "99999999999")
    assert "número de rodízio 99999999999 está fora do intervalo -2147483648..2147483647" in text
    assert "out of range" not in text and "outside" not in text
    assert _row(office) == before  # nothing written


def test_a_nul_in_the_address_shows_the_refusal_page_in_portuguese(office, page):
    page.goto(office.url + "/workers/%00")
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert "o endereço contém um caractere NUL" in alert.inner_text()


def test_a_wrong_method_shows_the_app_s_error_page_in_portuguese(office, page):
    response = page.goto(office.url + "/whatif/gate")  # a form's target, POST only
    assert response.status == 405
    assert page.locator("h1").inner_text() == "Esta página não aceita este tipo de pedido (método HTTP abaixo)."
    assert "GET /whatif/gate" in page.get_by_role("alert").inner_text()
    assert "Method Not Allowed" not in page.content()
    page.get_by_role("main").get_by_role("link", name="Porto ao vivo").wait_for()
    assert page.get_by_role("link", name="Porto ao vivo").count() == 2  # the signed-in clerk's menu kept too


def test_a_category_typed_with_a_trailing_blank_is_the_same_category(office, page):
    before = _row(office)
    page.goto(office.url + "/workers/V002")
    page.locator("#e-category").fill(before.category.capitalize() + " ")
    page.locator("#edit-form").get_by_role("button").last.click()
    page.wait_for_load_state()
    assert _row(office) == before


def test_the_escala_form_refuses_a_period_not_hh_hh_in_portuguese(office, page):
    """The ship is chosen from the calls in port (its gate id was checked when the call was saved);
    the period the clerk types is checked by the requisition's own rules."""
    import datetime as dt

    from sqlalchemy.orm import Session

    from central.calls.service import ShipCall, save_call
    from central.rotation.schema import escala
    with Session(office.engine) as s, s.begin():
        save_call(s, ShipCall("9300001", "MSC Aurora", "long_haul", "berthed", "g-aurora",
                              dt.datetime(2026, 12, 1, 12, tzinfo=dt.UTC), None), actor="test")
    page.goto(office.url + "/escala?date=2026-12-02")
    form = page.locator("#req-form")
    form.get_by_label("Navio no porto").select_option(label="MSC Aurora (IMO 9300001) · longo curso · atracado · Portaló g-aurora")
    form.get_by_label("Período").fill("7-13")
    form.get_by_label("Operador").fill("Op A")
    form.get_by_label("Posto").fill("portalo")
    form.get_by_role("button", name="Despachar esta requisição e publicar").click()
    error = page.locator('#req-form .field-error[data-field="period"]')  # beside the period (issue 34 item 4)
    error.wait_for()
    assert error.inner_text() == "período '7-13' não é HH-HH (ex.: 19-01)", error.inner_text()
    assert page.locator("#q-period").get_attribute("aria-invalid") == "true"
    assert "escalado(s) e publicado(s)" not in page.content() and page.locator("#escala-errors").count() == 0
    assert page.locator("#q-period").input_value() == "7-13"  # the typed values kept
    assert page.locator("#q-call option:checked").inner_text().startswith("MSC Aurora")
    # a date that does not exist: the same form, the error beside the date, the typed values kept
    page.locator("#req-form").get_by_label("Data").fill("30/02/2026")
    page.locator("#req-form").get_by_role("button", name="Despachar esta requisição e publicar").click()
    error = page.locator('#req-form .field-error[data-field="date"]')
    error.wait_for()
    assert error.inner_text() == "a data '30/02/2026' não é uma data válida", error.inner_text()
    assert page.locator("#q-date").get_attribute("aria-invalid") == "true"
    assert (page.locator("#q-date").input_value(), page.locator("#q-period").input_value(),
            page.locator("#q-operator").input_value()) == ("30/02/2026", "7-13", "Op A")
    with office.engine.connect() as c:
        assert c.execute(select(escala.c.id)).first() is None


def test_the_ship_call_form_takes_a_port_time_and_refuses_a_bad_one_beside_the_arrival(office, page):
    """Issue 34 item 4: the arrival typed ``dd/mm/aaaa hh:mm``; a date that does not exist is the
    same form again, the error beside the arrival and every typed value kept."""
    page.goto(office.url + "/ships")
    page.locator("#s-ship").fill("9300077")
    page.locator("#s-name").fill("Aurora Sete")
    page.locator("#s-voyage").select_option("cabotage")
    page.locator("#s-gate").fill("g-sete")
    page.locator("#s-arrival").fill("31/02/2026 10:00")
    page.locator("#call-form").get_by_role("button").click()
    error = page.locator('#call-form .field-error[data-field="arrival"]')
    error.wait_for()
    assert error.inner_text() == "'31/02/2026 10:00' não é uma data e hora (dd/mm/aaaa hh:mm)", error.inner_text()
    assert page.locator("#s-arrival").get_attribute("aria-invalid") == "true"
    assert (page.locator("#s-ship").input_value(), page.locator("#s-name").input_value(),
            page.locator("#s-voyage").input_value(), page.locator("#s-gate").input_value(),
            page.locator("#s-arrival").input_value()) == ("9300077", "Aurora Sete", "cabotage", "g-sete",
                                                          "31/02/2026 10:00")
    page.locator("#s-arrival").fill("06/12/2026 10:00")
    page.locator("#call-form").get_by_role("button").click()
    page.wait_for_url(office.url + "/ships")
    row = page.locator("tr", has_text="Aurora Sete (9300077)")
    assert "06/12 10:00" in row.inner_text(), row.inner_text()  # port time, as typed
