"""The escala page on the demo day in a real browser (issue 34 item 5), at 1440x900 and at a phone's
390 px: the day's escala grouped by ship and period with the workers' names; a refusal (R3) and a
late substitution done through a row's menu (a <details>, opened by keyboard and by pointer) end to
end; a requisition whose ship is chosen from the ship calls in port; at 390 px each stacked row
keeps its column labels; axe-core finds no serious or critical violation, menu open or closed.

The session's demo day is read-only (tests/conftest.py ``demo_day``): its ledger is copied (SQLite
backup) and the office application served on the copy, its clock on the demo day."""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3
import threading
import time
from pathlib import Path

import pytest
import uvicorn
from sqlalchemy import select

from app.demo.mosquitto import free_port
from app.demo.web import DEMO_PASSWORD, OFFICE_USER
from central.config import load_central_config
from central.db import make_engine
from central.registry.schema import penalties
from central.rotation.schema import escala, refusals
from central.web.app import create_app
from testkit.axe import axe_violations, describe

DAY = "2026-03-15"
DEMO = Path(__file__).resolve().parents[3] / "config" / "demo"
NAMES = dict(line.split(",")[:2] for line in (DEMO / "workers.csv").read_text(encoding="utf-8").splitlines()[1:])


@pytest.fixture(scope="module")
def office(demo_day, tmp_path_factory):
    """The office app over a copy of the demo day's ledger, at 10:00 of the demo day (port time)."""
    config = load_central_config(str(demo_day.run_dir / "central.toml"))
    source = make_engine(config.database_url).url.database
    copy = tmp_path_factory.mktemp("escala-demo") / "ledger.db"
    with contextlib.closing(sqlite3.connect(source)) as src, contextlib.closing(sqlite3.connect(copy)) as dst:
        src.backup(dst)
    engine = make_engine(f"sqlite:///{copy}")
    app = create_app(engine, config.web, b"x" * 32, background=False,
                     now=lambda: dt.datetime(2026, 3, 15, 13, 0, tzinfo=dt.UTC))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", engine
    finally:
        server.should_exit = True
        thread.join(10)
        engine.dispose()


def _page(browser, url: str, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)  # axe inline
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(url + "/login")
    page.get_by_label("Usuário").fill(OFFICE_USER)
    page.get_by_label("Senha").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(url + "/")
    return context, page


def _active(engine, period: str, ship: str) -> set[str]:
    with engine.connect() as c:
        return set(c.execute(select(escala.c.registration).where(
            escala.c.status == "active", escala.c.period == period, escala.c.ship == ship)).scalars())


def _serious(page) -> str:
    """'' when axe-core finds no serious or critical violation, else one line per violation."""
    found = axe_violations(page, impacts=("serious", "critical"))
    return describe(found) if found else ""


def test_refusal_and_substitution_through_the_row_menu_and_a_requisition_by_the_ship_select(office, browser):
    url, engine = office
    context, page = _page(browser, url, 1440, 900)
    try:
        page.goto(url + f"/escala?date={DAY}")
        groups = page.locator("#escala section.escala-group")
        assert groups.count() == 12  # 3 ships x 4 periods of escala.csv
        night = page.locator('section.escala-group[data-ship="9300001"][data-period="19-01"]')
        assert "MSC Aurora" in night.locator("h3").inner_text()
        row = night.locator('tr[data-registration="V015"]')
        assert row.locator("td.worker-name").inner_text() == NAMES["V015"]
        assert _serious(page) == ""

        # refusal by keyboard: the summary takes the focus, Enter opens the menu, the fields follow
        menu = row.locator("details.row-menu")
        assert not menu.evaluate("d => d.open")
        row.locator("summary").focus()
        page.keyboard.press("Enter")
        assert menu.evaluate("d => d.open")
        assert _serious(page) == ""  # the open menu too
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.name") == "reason"
        page.keyboard.type("não compareceu ao chamado")
        menu.get_by_role("button", name="Registrar a recusa").click()
        page.locator("#escala-done").wait_for()
        assert "V015" not in _active(engine, "19-01", "9300001")
        with engine.connect() as c:
            refusal = c.execute(select(refusals).where(refusals.c.registration == "V015")).one()
            infraction = c.execute(select(penalties).where(penalties.c.registration == "V015",
                                                           penalties.c.rule == "R3")).one()
        assert refusal.reason == "não compareceu ao chamado" and refusal.infraction == 1 and infraction
        night = page.locator('section.escala-group[data-ship="9300001"][data-period="19-01"]')
        assert night.locator('tr[data-registration="V015"]').count() == 0
        assert night.locator("tbody tr").count() == 2  # the next in the rotation took the place

        # substitution by pointer, naming nobody: the next eligible of the rotation
        afternoon = page.locator('section.escala-group[data-ship="9300001"][data-period="13-19"]')
        row = afternoon.locator('tr[data-registration="V012"]')
        row.get_by_text("Recusa ou substituição").click()
        form = row.locator("form.substitute-form")
        form.get_by_label("Motivo").fill("passou mal")
        form.get_by_role("button", name="Substituir").click()
        page.locator("#escala-done").wait_for()
        now_on = _active(engine, "13-19", "9300001")
        assert "V012" not in now_on and len(now_on) == 2 and "V011" in now_on
        newcomer = (now_on - {"V011"}).pop()
        shown = page.locator('section.escala-group[data-ship="9300001"][data-period="13-19"]'
                             f' tr[data-registration="{newcomer}"] td.worker-name').inner_text()
        assert shown == NAMES[newcomer]

        # the requisition: the ship chosen from the calls in port, nothing typed for it
        form = page.locator("#req-form")
        options = form.get_by_label("Navio no porto").locator("option").all_inner_texts()
        assert any(o.startswith("Nordic Star (IMO 9300002)") and "g-nordic" in o for o in options), options
        nordic = next(o for o in options if o.startswith("Nordic Star"))
        form.get_by_label("Navio no porto").select_option(label=nordic)
        form.get_by_label("Período").fill("13-19")
        form.get_by_label("Operador").fill("Operadora Demo")
        form.get_by_label("Posto").fill("proa")
        form.get_by_role("button", name="Despachar esta requisição e publicar").click()
        result = page.locator("#dispatch-result")
        result.wait_for()
        assert "1 escalado(s) e publicado(s)" in result.inner_text()
        with engine.connect() as c:
            added = c.execute(select(escala).where(escala.c.status == "active", escala.c.post == "proa")).one()
        assert (added.ship, added.ship_name, added.gate_id, added.berth) == (
            "9300002", "Nordic Star", "g-nordic", "anchored")
        assert _serious(page) == ""
    finally:
        context.close()


def test_at_390_px_the_rows_are_cards_that_keep_their_labels_and_the_menu_works(office, browser):
    url, engine = office
    context, page = _page(browser, url, 390, 844)
    try:
        page.goto(url + f"/escala?date={DAY}")
        row = page.locator('section.escala-group[data-ship="9300002"][data-period="07-13"] tr[data-registration="V007"]')
        labels = row.locator("td").evaluate_all(
            "tds => tds.map(td => getComputedStyle(td, '::before').content)")
        assert labels == ['"Posto: "', '"Matrícula: "', '"Nome: "', '"Recusa / substituição: "'], labels
        assert row.evaluate("tr => getComputedStyle(tr).display") == "block"
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, width  # no sideways scrolling of the page
        assert _serious(page) == ""
        row.locator("summary").click()
        box = row.locator("form.refuse-form").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
        assert _serious(page) == ""
        # a refused refusal at 390 px: the menu comes back open with the error beside the reason
        row.locator("form.refuse-form").get_by_label("Comprovante médico").fill("ASO 77")
        row.locator("form.refuse-form").get_by_label("Motivo").evaluate("i => i.removeAttribute('required')")
        row.locator("form.refuse-form").get_by_role("button", name="Registrar a recusa").click()
        error = page.locator('tr[data-registration="V007"] .field-error[data-field="reason"]')
        error.wait_for()
        assert error.inner_text() == "informe o motivo"
        again = page.locator('tr[data-registration="V007"]')
        assert again.locator("details.row-menu").evaluate("d => d.open")
        assert again.locator("form.refuse-form").get_by_label("Comprovante médico").input_value() == "ASO 77"
        assert "V007" in _active(engine, "07-13", "9300002")
        assert _serious(page) == ""
    finally:
        context.close()


def _counts(engine) -> tuple[int, ...]:
    from central.registry.schema import audit_log, downlink_changes
    from central.rotation.schema import requisitions
    from sqlalchemy import func

    with engine.connect() as c:
        return tuple(c.execute(select(func.count()).select_from(t)).scalar()
                     for t in (escala, refusals, penalties, requisitions, downlink_changes, audit_log))


def _post_stale(page, row: str, action: str, fields: dict[str, str]) -> None:
    """Send ``action`` of the escala row ``row`` as the row's menu of a page opened before its period
    ended would (the page as it is now offers none): a form posted by the browser, with the page's
    CSRF token and date."""
    page.locator(row).evaluate("""(tr, [action, fields]) => {
        const form = document.createElement('form');
        form.method = 'post';
        form.action = `/escala/entry/${tr.dataset.entry}/${action}`;
        const token = document.querySelector('input[name=csrf_token]').value;
        const date = new URLSearchParams(location.search).get('date');
        for (const [name, value] of Object.entries({...fields, csrf_token: token, date})) {
            const input = document.createElement('input');
            input.name = name; input.value = value; form.appendChild(input);
        }
        document.body.appendChild(form);
        form.submit();
    }""", [action, fields])
    page.wait_for_load_state()


def test_a_period_that_has_ended_is_not_changed_and_its_rows_offer_no_menu(office, browser):
    """At 10:00 of the demo day (the app's clock) the 01-07 period ended at 07:00: its rows offer
    no refusal or substitution; one sent from a page opened before the end is refused beside the
    row, nothing written; a requisition for it likewise, the error beside the period; the English
    page says it in English."""
    url, engine = office
    context, page = _page(browser, url, 1440, 900)
    try:
        before = _counts(engine)
        page.goto(url + f"/escala?date={DAY}")
        v001 = 'section.escala-group[data-ship="9300001"][data-period="01-07"] tr[data-registration="V001"]'
        row = page.locator(v001)
        assert row.locator("details, form").count() == 0  # ended: no menu
        assert row.locator(".row-ended").inner_text() == "Período encerrado: sem alterações"
        _post_stale(page, v001, "refuse", {"reason": "não veio", "health_proof": "ASO 9"})
        error = page.locator(f'{v001} .field-error[data-field="entry"]')
        error.wait_for()
        assert error.inner_text().endswith("(15/03/2026 01-07) terminou em 15/03/2026 07:00 (hora do porto): "
                                           "a escala de um período encerrado não é alterada"), error.inner_text()
        assert page.locator(v001).locator("details, form").count() == 0
        assert _serious(page) == ""
        _post_stale(page, v001, "substitute", {"reason": "atrasado", "registration": "V020"})
        page.locator(f'{v001} .field-error[data-field="entry"]').wait_for()
        assert "V001" in _active(engine, "01-07", "9300001") and _counts(engine) == before

        # a requisition for the ended period: the form as typed, the error beside the period
        form = page.locator("#req-form")
        nordic = next(o for o in form.get_by_label("Navio no porto").locator("option").all_inner_texts()
                      if o.startswith("Nordic Star"))
        form.get_by_label("Navio no porto").select_option(label=nordic)
        form.get_by_label("Período").fill("01-07")
        form.get_by_label("Operador").fill("Operadora Demo")
        form.get_by_label("Posto").fill("popa")
        form.get_by_role("button", name="Despachar esta requisição e publicar").click()
        error = page.locator('#req-form .field-error[data-field="period"]')
        error.wait_for()
        assert error.inner_text() == ("o período 01-07 de 15/03/2026 terminou em 15/03/2026 07:00 (hora do porto): "
                                      "não se escala para um período encerrado")
        form = page.locator("#req-form")
        assert form.get_by_label("Período").get_attribute("aria-invalid") == "true"
        assert (form.get_by_label("Período").input_value(), form.get_by_label("Operador").input_value(),
                form.get_by_label("Posto").input_value()) == ("01-07", "Operadora Demo", "popa")
        assert form.get_by_label("Navio no porto").evaluate("s => s.selectedOptions[0].text") == nordic
        assert _counts(engine) == before
        assert _serious(page) == ""

        # the English page: the service's own words
        page.locator("#lang-select").select_option("en")  # the switch at the top of the page
        page.locator("form[action='/lang']").get_by_role("button").click()
        page.wait_for_load_state()
        page.goto(url + f"/escala?date={DAY}")
        assert page.locator("html").get_attribute("lang") == "en"
        v002 = 'section.escala-group[data-ship="9300001"][data-period="01-07"] tr[data-registration="V002"]'
        assert page.locator(v002).locator(".row-ended").inner_text() == "Period over: no changes"
        _post_stale(page, v002, "refuse", {"reason": "no"})
        error = page.locator('section.escala-group[data-period="01-07"] tr[data-registration="V002"] '
                             '.field-error[data-field="entry"]')
        error.wait_for()
        assert "(Mar 15, 2026 01-07) ended at Mar 15, 2026, 7:00 AM port time: a past escala is not changed" in error.inner_text()
        assert _counts(engine) == before
    finally:
        context.close()


def test_a_requisition_for_an_unknown_function_is_refused_beside_the_function(office, browser):
    """``vigia_xefe`` is no function of the office (no category fills it): the requisition form
    comes back as typed, the error beside the function, nothing dispatched."""
    url, engine = office
    context, page = _page(browser, url, 1440, 900)
    try:
        before = _counts(engine)
        page.goto(url + f"/escala?date={DAY}")
        form = page.locator("#req-form")
        nordic = next(o for o in form.get_by_label("Navio no porto").locator("option").all_inner_texts()
                      if o.startswith("Nordic Star"))
        form.get_by_label("Navio no porto").select_option(label=nordic)
        form.get_by_label("Período").fill("19-01")
        form.get_by_label("Operador").fill("Operadora Demo")
        form.get_by_label("Posto").fill("popa")
        form.get_by_label("Função").fill("vigia_xefe")
        form.get_by_label("Trabalhadores").fill("2")
        form.get_by_role("button", name="Despachar esta requisição e publicar").click()
        error = page.locator('#req-form .field-error[data-field="function"]')
        error.wait_for()
        assert error.inner_text().startswith("a função 'vigia_xefe' é desconhecida do escritório (nenhuma "
                                             "categoria a exerce): as funções são "), error.inner_text()
        assert "vigia_chefe" in error.inner_text() and "estivador" in error.inner_text()
        form = page.locator("#req-form")
        assert form.get_by_label("Função").get_attribute("aria-invalid") == "true"
        assert (form.get_by_label("Período").input_value(), form.get_by_label("Função").input_value(),
                form.get_by_label("Trabalhadores").input_value()) == ("19-01", "vigia_xefe", "2")
        assert _counts(engine) == before
        assert _serious(page) == ""
    finally:
        context.close()
