"""The office's registry and pay screens in a real browser (Playwright driving Debian's chromium)
against the real app served by uvicorn over a real SQLite ledger: search by a DEZ10 UID, an
audited edit, an upload with two bad rows (both named, nothing written), a photo upload."""

from __future__ import annotations

import io
import random

import pytest
from PIL import Image
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from central.registry.photos import GATE_MAX_BYTES
from central.registry.schema import audit_log, workers
from tests.central.web.live import LiveOffice, log_in


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    o = LiveOffice(tmp_path_factory.mktemp("office")).start()
    try:
        yield o
    finally:
        o.stop()


@pytest.fixture(scope="module")
def page(office, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    log_in(pg, office)
    yield pg
    context.close()


def test_search_by_a_card_uid_in_decimal10_form(office, page):
    page.goto(office.url + "/workers")
    page.get_by_label("Nome, matrícula ou UID do cartão").fill("0077660161")  # DEZ10 of card 0A04A10001
    page.get_by_role("button", name="Buscar").click()
    row = page.locator('#hits tr[data-registration="V001"]')
    assert "uid decimal10" in row.inner_text()
    row.get_by_role("link", name="V001").click()
    page.wait_for_url(office.url + "/workers/V001")
    assert "0A04A10001" in page.locator("#cards").inner_text()


def test_editing_a_worker_writes_an_audit_entry(office, page):
    page.goto(office.url + "/workers/V001")
    page.locator("#e-name").fill("Ana Lima de Souza")
    page.locator("#e-exam").fill("2026-01-15")
    page.locator("#edit-form").get_by_role("button", name="Salvar").click()
    page.locator("#saved").wait_for()
    assert "2 campo(s)" in page.locator("#saved").inner_text()
    assert "15/01/2026" in page.locator("#w-exam").inner_text()
    with Session(office.engine) as s:
        row = s.execute(select(audit_log).where(audit_log.c.action == "worker.edit",
                                                audit_log.c.subject == "V001")).one()
    assert row.actor == "web:escritorio"
    assert row.detail["changed"]["name"] == ["Ana Lima", "Ana Lima de Souza"]


def test_an_upload_with_two_bad_rows_names_both_and_writes_nothing(office, page, tmp_path):
    csv_file = tmp_path / "novos.csv"
    csv_file.write_text(
        "registration,name,category,status,suspended_from,suspended_until,health_exam_date,"
        "booklet_revalidated_year,rotation_number\n"
        "N001,Nova Um,vigia,active,,,2026-01-10,,90\n"
        "N002,Nova Dois,vigia,aposentado,,,2026-01-10,,91\n"
        "N003,Nova Tres,vigia,active,,,10/01/2026,,92\n", encoding="utf-8")
    with office.engine.connect() as c:
        before = c.execute(select(func.count()).select_from(workers)).scalar()
    page.goto(office.url + "/workers/upload")
    page.locator("#u-workers").set_input_files(str(csv_file))
    page.get_by_role("button", name="Enviar").click()
    errors = page.locator("#upload-errors")
    errors.wait_for()
    text = errors.inner_text()
    assert "novos.csv:3" in text and "status" in text
    assert "novos.csv:4" in text and "health_exam_date" in text
    assert "nada foi gravado" in text
    with office.engine.connect() as c:
        assert c.execute(select(func.count()).select_from(workers)).scalar() == before
        assert c.execute(select(func.count()).select_from(workers).where(workers.c.registration == "N001")).scalar() == 0


def test_a_photo_upload_is_reencoded_under_the_gate_cap(office, page, tmp_path):
    rnd = random.Random(7)
    img = Image.new("RGB", (1500, 2000), (90, 120, 160))
    px = img.load()
    for x in range(0, 1500, 3):
        for y in range(0, 2000, 3):
            px[x, y] = (rnd.randrange(256), rnd.randrange(256), rnd.randrange(256))
    src = tmp_path / "foto.png"
    img.save(src, "PNG")
    assert src.stat().st_size > 10 * GATE_MAX_BYTES
    page.goto(office.url + "/workers/V003")
    page.locator("#p-file").set_input_files(str(src))
    page.get_by_role("button", name="Enviar foto").click()
    page.locator("#w-photo").wait_for()
    natural = page.locator("#w-photo").evaluate("img => img.naturalWidth")
    assert 0 < natural <= 600
    gate = office.photos / "V003.jpg"
    assert gate.is_file() and gate.stat().st_size <= GATE_MAX_BYTES
    with Image.open(io.BytesIO(gate.read_bytes())) as g:
        assert g.format == "JPEG" and max(g.size) <= 320


@pytest.fixture(scope="module")
def paid_ledger(office):
    from tests.central.web.paydata import seed_pay

    seed_pay(office.engine)
    return office


def test_a_payslip_download_holds_the_worked_example_total_and_rule_ids(paid_ledger, page, tmp_path):
    from pypdf import PdfReader

    office = paid_ledger
    page.goto(office.url + "/pay?from=2026-03-01&to=2026-03-31&worker=V017")
    assert "R$ 696,60" in page.locator("#statements").inner_text()
    with page.expect_download() as info:
        page.locator('a[data-slip="V017"]').first.click()
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    assert path.name == "contracheque-V017-2026-03-01-2026-03-31.pdf"
    text = "\n".join(p.extract_text() for p in PdfReader(str(path)).pages)
    assert "R$ 696,60" in text
    for rule in ("P1", "P2", "P3", "P4", "P7"):
        assert f"\n{rule} 83.611 art." in text, rule
    from app.cli import main

    key = tmp_path / "k"
    key.write_bytes(__import__("tests.central.web.live", fromlist=["SLIP_KEY"]).SLIP_KEY)
    assert main(["pay", "verify-slip", "--db", office.url_db, "--key-file", str(key), str(path)]) == 0


def test_marking_a_batch_paid(paid_ledger, page):
    """After V017's shift was corrected and pay run again (its first statement superseded, the
    fresh tester's finding), "select all" and confirm pay the three current payable statements:
    the superseded one is neither listed, counted, summed nor paid."""
    from decimal import Decimal

    from central.ledger.tables import statements
    from central.pay.payslip import brl
    from tests.central.web.paydata import supersede_chief

    office = paid_ledger
    old, new = supersede_chief(office.engine)
    page.goto(office.url + "/pay?from=2026-03-01&to=2026-03-31")
    boxes = page.locator('#paid-form input[name="pay_worker"]')
    assert boxes.count() == 3  # V008's statement is on hold: not selectable
    assert page.locator('#statements [data-worker="V017"] .statement').count() == 1
    assert page.locator(f'#statements [data-statement="{new}"]').count() == 1
    assert page.locator(f'#statements [data-statement="{old}"]').count() == 0
    with page.expect_navigation():  # a link to the page with every box ticked: count() does not wait
        page.locator("#select-all").click()  # every payable worker ticked
    assert page.locator('#paid-form input[name="pay_worker"]:checked').count() == 3
    page.locator("#m-ref").fill("folha-2026-03")
    page.get_by_role("button", name="Marcar como pagos").click()
    page.locator("#confirm-form").wait_for()  # the summary first
    assert page.locator("#sum-count").inner_text() == "3"
    with office.engine.connect() as c:
        owed = sum(c.execute(select(statements.c.total_cents).where(
            statements.c.superseded_at.is_(None), statements.c.registration != "V008")).scalars())
    assert page.locator("#sum-total").inner_text() == brl(Decimal(owed) / 100)  # 1.020,60 for V017, not 696,60 more
    page.locator("#confirm-paid").click()
    page.locator("#pay-done").wait_for()
    assert "3 marcado(s) como pago(s)" in page.locator("#pay-done").inner_text()
    assert page.locator('#statements td.state[data-state="paid"]').count() == 3
    with office.engine.connect() as c:
        refs = dict(c.execute(select(statements.c.statement_id, statements.c.paid_ref)).all())
    assert refs.pop(old) is None  # the superseded version stays unpaid: history, not owed
    assert {sid.split("/")[0]: ref for sid, ref in refs.items()} == {
        "V001": "folha-2026-03", "V003": "folha-2026-03", "V017": "folha-2026-03", "V008": None}


def test_the_report_charts_render_in_the_browser(paid_ledger, page):
    page.goto(paid_ledger.url + "/reports?month=2026-03")
    images = page.locator("section.report img")
    assert images.count() == 5
    for i in range(5):
        img = images.nth(i)
        img.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete", arg=img.element_handle())
        assert img.evaluate("img => img.naturalWidth") == 760, img.get_attribute("src")


PHONE_PAGES = ("/", "/workers", "/workers/V001", "/escala", "/pay", "/whatif", "/reports", "/flags", "/cases")


def test_the_office_pages_fit_a_phone_without_scrolling_sideways(office, browser):
    """At 390 px (a phone on the quay) no office page is wider than the screen: the forms' fields
    wrap under each other instead of running off to the right, and a 255-letter name with no space
    wraps in the heading, the search hits and the tables."""
    with Session(office.engine) as s, s.begin():
        s.execute(workers.update().where(workers.c.registration == "V002").values(name="W" * 255))
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        pg = context.new_page()
        pg.set_default_timeout(20_000)
        log_in(pg, office)
        wide = {}
        for path in (*PHONE_PAGES, "/workers/V002", "/workers?q=V002"):
            pg.goto(office.url + path)
            width = pg.evaluate("() => document.documentElement.scrollWidth")
            if width > 390:
                wide[path] = (width, pg.evaluate("""() => [...document.querySelectorAll('form, input, select')]
                    .filter(el => el.getBoundingClientRect().right > 391).map(el => el.id || el.tagName)"""))
    finally:
        context.close()
    assert wide == {}, wide
