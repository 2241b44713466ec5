"""The registry's CSV upload names new categories on purpose (issue 37 item 4; the command line's
``registry import --new-category NAME``), in a real browser (Playwright driving Debian's chromium,
axe) against the real app under uvicorn over a real SQLite ledger, at 1280 and 390 px. A workers.csv
of a category the registry does not know (``arrumador``) is refused as on the command line (the row
named, nothing written) until the new field names it; a category the field does not name is still
refused while the named one is accepted, and the field keeps what was typed."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from central.registry.schema import workers
from testkit.axe import axe_violations, describe
from tests.central.web.live import LiveOffice, log_in

HEADER = ("registration,name,category,status,suspended_from,suspended_until,health_exam_date,"
          "booklet_revalidated_year,rotation_number\n")


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    o = LiveOffice(tmp_path_factory.mktemp("newcat")).start()
    try:
        yield o
    finally:
        o.stop()


def _categories(office, regs: list[str]) -> dict[str, str]:
    with office.engine.connect() as c:
        return dict(c.execute(select(workers.c.registration, workers.c.category)
                              .where(workers.c.registration.in_(regs))).all())


def _send(pg, csv_file, named: str) -> None:
    pg.locator("#u-workers").set_input_files(str(csv_file))
    pg.get_by_label("Novas categorias que este envio pode abrir (separadas por vírgula)").fill(named)
    with pg.expect_navigation():  # a POST answering the same URL: read the new page
        pg.get_by_role("button", name="Enviar").click()


@pytest.mark.parametrize("width", [1280, 390])
def test_a_new_category_is_opened_only_when_named(office, browser, width, tmp_path):
    a, b = f"A{width}", f"B{width}"
    new, other = f"arrumador{width}", f"conferente{width}"  # the module's office is shared: one per width
    one = tmp_path / "arrumadores.csv"
    one.write_text(HEADER + f"{a},Arrumador Um,{new},active,,,2026-01-10,,{width + 1}\n", encoding="utf-8")
    two = tmp_path / "dois.csv"
    two.write_text(HEADER + f"{b},Conferente Dois,{other},active,,,2026-01-10,,{width + 2}\n"
                   + f"{a},Arrumador Um,{new},active,,,2026-01-10,,{width + 1}\n", encoding="utf-8")
    context = browser.new_context(viewport={"width": width, "height": 900}, bypass_csp=True)
    try:
        pg = context.new_page()
        pg.set_default_timeout(20_000)
        log_in(pg, office)
        pg.goto(office.url + "/workers/upload")
        assert axe_violations(pg, impacts=("serious", "critical")) == [], describe(axe_violations(pg))
        pg.screenshot(path=str(tmp_path / f"upload-{width}.png"), full_page=True)
        _send(pg, one, "")  # not named: refused as the command line without --new-category
        errors = pg.locator("#upload-errors").inner_text()
        assert "arrumadores.csv:2" in errors and f"'{new}' não é um dos valores" in errors, errors
        assert _categories(office, [a]) == {}
        _send(pg, two, f" {new} ,")  # one named, the other not: the whole file refused, B named
        errors = pg.locator("#upload-errors").inner_text()
        assert "dois.csv:2" in errors and f"'{other}' não é um dos valores" in errors, errors
        assert "dois.csv:3" not in errors, errors
        assert pg.locator("#u-new-categories").input_value() == f" {new} ,"  # as typed
        assert _categories(office, [a, b]) == {}
        assert axe_violations(pg, impacts=("serious", "critical")) == [], describe(axe_violations(pg))
        pg.screenshot(path=str(tmp_path / f"upload-refused-{width}.png"), full_page=True)
        _send(pg, one, new)
        assert pg.locator("#upload-done").get_attribute("data-changed") == "1"
        assert _categories(office, [a, b]) == {a: new}
    finally:
        context.close()
