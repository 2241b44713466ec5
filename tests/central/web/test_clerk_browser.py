"""The clerk's registry and pay jobs in a real browser (Playwright driving Debian's chromium)
against the real app served by uvicorn over a real SQLite ledger (issue 34): add a worker and find
him in the list; a refused add-worker form keeps every typed value with the error beside its
field; mark paid after a confirmation page, then reverse that payment with a reason."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from central.ledger.tables import statements
from central.registry.schema import audit_log, workers
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
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        pg = context.new_page()
        pg.set_default_timeout(20_000)
        log_in(pg, office)
        yield pg
        context.close()


EVIDENCE = {"vision": ("ASO 77", "20/11/2026"), "police_record": ("BO-5", "21/11/2026"),
            "military": ("CR 1", "01/02/2015"), "electoral": ("TE 2", "03/03/2014")}


def _fill_new_worker(page, *, registration: str, name: str, exam: str, birth: str, rotation: str) -> None:
    page.goto(page.url.split("/workers")[0].rstrip("/") + "/workers")
    page.get_by_role("link", name="Cadastrar trabalhador").click()
    page.get_by_label("Matrícula").fill(registration)
    page.get_by_label("Nome", exact=True).fill(name)
    page.get_by_label("Categoria").select_option("vigia")
    page.get_by_label("Exame de saúde").fill(exam)
    page.get_by_label("Número no rodízio").fill(rotation)
    page.get_by_label("Data de nascimento").fill(birth)
    page.get_by_label("Data do registro").fill("01/12/2026")
    for name_, (document, day) in EVIDENCE.items():
        page.locator(f"#f-{name_}").fill(document)
        page.locator(f"#f-{name_}_on").fill(day)


def test_a_clerk_adds_a_worker_and_finds_him_in_the_list(office, page):
    page.goto(office.url + "/workers")
    _fill_new_worker(page, registration="V777", name="Joana Nova", exam="10/11/2026", birth="15/05/1995", rotation="77")
    page.get_by_role("button", name="Cadastrar trabalhador").click()
    page.wait_for_url(office.url + "/workers/V777?added=1")
    assert "com as provas de admissão" in page.locator("#added").inner_text()
    assert "10/11/2026" in page.locator("#w-exam").inner_text()
    page.goto(office.url + "/workers")
    page.get_by_label("Nome, matrícula ou UID do cartão").fill("joana")
    page.locator("#l-category").select_option("vigia")
    page.get_by_role("button", name="Buscar").click()
    row = page.locator('#hits tr[data-registration="V777"]')
    assert "Joana Nova" in row.inner_text() and "09/11/2028" in row.inner_text()  # 24 months (G3)


def test_a_refused_add_worker_form_keeps_the_typed_values_with_the_error_beside_the_field(office, page):
    page.goto(office.url + "/workers")
    _fill_new_worker(page, registration="V778", name="Pedro Recusado", exam="31/02/2026", birth="15/05/1960",
                     rotation="78")
    page.get_by_role("button", name="Cadastrar trabalhador").click()
    page.locator("#form-refused").wait_for()
    assert page.url == office.url + "/workers/new"
    exam_error = page.locator('#f-health_exam_date-error')
    assert "não é uma data válida (dd/mm/aaaa)" in exam_error.inner_text()
    assert "idade 66" in page.locator("#f-birth_date-error").inner_text()
    # the error sits beside its field: right under the input it names
    box_input = page.locator("#f-health_exam_date").bounding_box()
    box_error = exam_error.bounding_box()
    assert 0 <= box_error["y"] - (box_input["y"] + box_input["height"]) < 40
    assert page.locator("#f-health_exam_date").get_attribute("aria-invalid") == "true"
    for selector, typed in (("#f-registration", "V778"), ("#f-name", "Pedro Recusado"),
                            ("#f-health_exam_date", "31/02/2026"), ("#f-birth_date", "15/05/1960"),
                            ("#f-rotation_number", "78"), ("#f-vision", "ASO 77"), ("#f-electoral_on", "03/03/2014")):
        assert page.locator(selector).input_value() == typed, selector
    assert page.locator("#f-category").input_value() == "vigia"
    with office.engine.connect() as c:
        assert c.execute(select(workers.c.registration).where(workers.c.registration == "V778")).first() is None
    # corrected in place, the same form is accepted
    page.locator("#f-health_exam_date").fill("28/02/2026")
    page.locator("#f-birth_date").fill("15/05/1990")
    page.get_by_role("button", name="Cadastrar trabalhador").click()
    page.wait_for_url(office.url + "/workers/V778?added=1")


def test_mark_paid_shows_a_summary_to_confirm_and_a_reversal_undoes_it_on_the_record(office, page):
    from tests.central.web.paydata import seed_pay

    seed_pay(office.engine)
    page.goto(office.url + "/pay?from=2026-03-01&to=2026-03-31")
    row = page.locator('#statements tr[data-worker="V017"]')
    row.locator("summary").click()
    assert "P1" in row.locator("details").inner_text()
    # nothing selected: the same page, the reference kept, the error beside the button
    page.get_by_label("Referência do pagamento").fill("lote-12")
    page.locator("#mark-paid").click()
    page.locator("#m-statement-error").wait_for()
    assert "selecione ao menos um demonstrativo" in page.locator("#m-statement-error").inner_text()
    assert page.get_by_label("Referência do pagamento").input_value() == "lote-12"
    row = page.locator('#statements tr[data-worker="V017"]')
    row.get_by_role("checkbox").check()
    page.locator("#mark-paid").click()
    page.locator("#confirm-form").wait_for()
    assert page.locator("#sum-count").inner_text() == "1"
    assert page.locator("#sum-total").inner_text() == "R$ 696,60"
    assert page.locator("#sum-ref").inner_text() == "lote-12"
    assert re.fullmatch(r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d", page.locator("#sum-date").inner_text())
    with office.engine.connect() as c:  # not yet
        assert c.execute(select(statements.c.paid_at).where(statements.c.registration == "V017")).scalar() is None
    page.locator("#confirm-paid").click()
    page.locator("#pay-done").wait_for()
    row = page.locator('#statements tr[data-worker="V017"]')
    assert row.get_attribute("data-state") == "paid"
    row.locator("summary").click()
    row.get_by_role("link", name="Reverter pagamento").click()
    page.locator("#reverse-form").wait_for()
    page.locator("#confirm-reverse").click()  # no reason: refused in place
    assert page.locator("#v-reason").get_attribute("aria-invalid") == "true" or \
        page.locator("#v-reason").evaluate("e => !e.checkValidity()")
    page.locator("#v-reason").fill("lote pago em duplicidade, conferido com o banco")
    page.locator("#confirm-reverse").click()
    page.locator("#pay-done").wait_for()
    assert "revertido" in page.locator("#pay-done").inner_text()
    assert page.locator('#statements tr[data-worker="V017"]').get_attribute("data-state") == "unpaid"
    with office.engine.connect() as c:
        assert c.execute(select(statements.c.paid_at).where(statements.c.registration == "V017")).scalar() is None
        detail = c.execute(select(audit_log.c.detail).where(audit_log.c.action == "pay.reverse_paid")).scalar()
    assert detail["detail"] == "lote pago em duplicidade, conferido com o banco"
