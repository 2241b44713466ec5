"""The payslip's header and its verification without a terminal (issue 34 item 9), on the office
app served by uvicorn over SQLite with the demo registry and RULES.md P worked examples
(tests/central/web/live.py), driven by a real chromium:

- the office's PDF of V017 prints the paying entity (name, CNPJ, address of the port
  configuration), his CPF and PIS/NIS, the ship's name beside its number and the period; its QR
  code (decoded from the PDF's image with zxing-cpp) and the short URL printed beside it are the
  same address;
- a phone with no session opens that address and reads the total, the period and the worker's
  initials, nothing more (no name, registration, CPF), with 0 axe violations at 390 px;
- the worker's own payslip (/w/contracheque.pdf) carries the same address;
- a forged code is "not found" (404) and says nothing else; ``portgate pay verify-slip`` still
  passes the printed PDF and refuses one whose QR image was swapped.
"""

from __future__ import annotations

import datetime as dt
import io
import re

import pytest
import zxingcpp
from pypdf import PdfReader
from sqlalchemy.orm import Session

from central.calls.schema import ship_calls
from central.pay.verify_slip import verify
from central.web.workeraccounts import add_account
from testkit.axe import axe_violations
from tests.central.web.live import SLIP_KEY, LiveOffice, log_in
from tests.central.web.paydata import seed_pay

PHONE = {"width": 390, "height": 844}
WORKER_PASSWORD = "senha do vigia 17"
Q = "from=2026-03-01&to=2026-03-31"
URL = re.compile(r"(http://127\.0\.0\.1:\d+/v/[0-9A-Z]{20})")


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    o = LiveOffice(tmp_path_factory.mktemp("slip-office")).start()
    try:
        seed_pay(o.engine)
        now = dt.datetime(2026, 3, 15, tzinfo=dt.UTC)
        with Session(o.engine) as s, s.begin():
            add_account(s, "V017", password=WORKER_PASSWORD, actor="test")
            s.execute(ship_calls.insert().values(ship="9300002", ship_name="Nordic Star", voyage="long_haul",
                                                 berth="anchored", gate_id="g2", arrival=now, departure=None,
                                                 updated_at=now, actor="test"))
        yield o
    finally:
        o.stop()


def _pdf_text(data: bytes) -> str:
    return re.sub(r"\s+", " ", "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(data)).pages))


def _qr_urls(data: bytes) -> list[str]:
    """The text of every QR code in the PDF's images (decoded by zxing-cpp)."""
    found = []
    for page in PdfReader(io.BytesIO(data)).pages:
        for image in page.images:
            big = image.image.convert("L").resize((image.image.width * 8, image.image.height * 8), 0)
            found += [r.text for r in zxingcpp.read_barcodes(big)]
    return found


@pytest.fixture(scope="module")
def office_slip(office, browser):
    desk = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        op = desk.new_page()
        log_in(op, office)
        r = op.request.get(f"{office.url}/pay/slip/V017.pdf?{Q}")
        assert r.status == 200 and r.headers["content-type"] == "application/pdf"
        return r.body()
    finally:
        desk.close()


def test_the_office_slip_prints_the_employer_ids_ship_name_period_and_one_address(office_slip):
    text = _pdf_text(office_slip)
    assert "OGMO do Porto Exemplo (fictício)" in text and "CNPJ 11.222.333/0001-81" in text
    assert "Av. do Exemplo, 100" in text
    assert "CPF: 000.000.017-59" in text and "PIS/NIS: 000.00000.17-5" in text
    assert "Período: 01/03/2026 a 31/03/2026" in text
    assert "navio Nordic Star (9300002)" in text  # the ship's name beside its number
    printed = URL.findall(text)
    assert len(printed) == 1
    assert _qr_urls(office_slip) == printed  # the QR code holds the printed address


def test_a_phone_without_login_opens_the_address_and_sees_total_period_initials_only(office, office_slip,
                                                                                    browser, tmp_path):
    [url] = URL.findall(_pdf_text(office_slip))
    context = browser.new_context(viewport=PHONE, locale="pt-BR", bypass_csp=True)
    try:
        pg = context.new_page()
        pg.goto(url)
        assert pg.url == url  # no redirect to the login
        result = pg.locator("#verify-result")
        assert result.get_attribute("data-state") == "valid"
        assert pg.locator("#v-total").inner_text() == "R$ 696,60"
        assert pg.locator("#v-period").inner_text() == "01/03/2026 a 31/03/2026"
        assert pg.locator("#v-initials").inner_text() == "Q. A."
        body = pg.locator("main").inner_text()
        for secret in ("Quitéria", "Almeida", "V017", "000.000.017-59", "9300002", "vigia"):
            assert secret not in body
        assert pg.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
        assert axe_violations(pg) == []
        pg.screenshot(path=str(tmp_path / "verify-valid.png"), full_page=True)
        forged = url[:-4] + ("AAAA" if not url.endswith("AAAA") else "BBBB")
        r = pg.goto(forged)
        assert r.status == 404
        assert pg.locator("#verify-result").get_attribute("data-state") == "unknown"
        assert "R$" not in pg.locator("main").inner_text()
        assert axe_violations(pg) == []
        pg.goto(office.url + "/v")  # the short code typed by hand, dashes and lower case
        token = url.rsplit("/", 1)[1]
        pg.get_by_label("Código curto do contracheque (20 letras e números)").fill(
            "-".join(token[i:i + 4] for i in range(0, 20, 4)).lower())
        pg.get_by_role("button", name="Verificar").click()
        assert pg.locator("#v-total").inner_text() == "R$ 696,60"
    finally:
        context.close()


def test_the_workers_own_payslip_carries_the_same_address(office, office_slip, browser):
    context = browser.new_context(viewport=PHONE, locale="pt-BR")
    try:
        pg = context.new_page()
        pg.goto(office.url + "/login")
        pg.get_by_label("Usuário").fill("V017")
        pg.get_by_label("Senha").fill(WORKER_PASSWORD)
        pg.get_by_role("button", name="Entrar").click()
        pg.wait_for_url(office.url + "/w/")
        r = pg.request.get(f"{office.url}/w/contracheque.pdf?{Q}")
        assert r.status == 200
        mine = r.body()
    finally:
        context.close()
    assert URL.findall(_pdf_text(mine)) == URL.findall(_pdf_text(office_slip))
    assert _qr_urls(mine) == _qr_urls(office_slip)


def test_verify_slip_passes_the_printed_pdf_and_refuses_a_swapped_qr_code(office, office_slip, tmp_path):
    good = tmp_path / "slip.pdf"
    good.write_bytes(office_slip)
    assert verify(good, office.engine, SLIP_KEY).ok
    reader = PdfReader(io.BytesIO(office_slip))
    from pypdf import PdfWriter
    from PIL import Image

    writer = PdfWriter(clone_from=reader)
    for image in writer.pages[-1].images:
        image.replace(Image.new("1", image.image.size, 1))  # a blank square over the QR code
    bad = tmp_path / "swapped.pdf"
    with bad.open("wb") as fh:
        writer.write(fh)
    verdict = verify(bad, office.engine, SLIP_KEY)
    assert not verdict.ok and verdict.problems[0].startswith("V017: ")
