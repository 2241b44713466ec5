"""The worker's own pages (issue 35) in a real browser (Playwright driving Debian's chromium) at
360 px, a cheap phone:

- on a ledger with data (the office app served by uvicorn over SQLite with the demo registry and
  RULES.md P worked examples, tests/central/web/live.py): the office prints an activation code, the
  worker activates his account, logs in, sees his escala, a shift with its taps, V017's statement of
  R$ 696,60 and downloads its payslip; a worker writes his defence (a photo attached), the
  connection drops on the way and nothing typed is lost, and the inspector sees it on the case page;
- on a real port (tests/central/web/port.py: mosquitto, ``central run``, two ``edge run`` gates,
  ``office serve``): a worker reports his card lost and the gate refuses it.

Screenshots of every page go to the test's directory (``PORTGATE_SHOTS`` to keep them).
"""

from __future__ import annotations

import datetime as dt
import io
import os
import sqlite3
import contextlib
import re
import time
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.ledger.schema import events
from central.registry import cases as case_svc
from central.registry.schema import audit_log
from central.rotation.engine import RotationSettings
from central.rotation.service import _store_entry
from central.web.users import add_user
from central.web.workeraccounts import add_account
from portgate.records import Berth, EscalaEntry, Voyage
from tests.central.web.live import LiveOffice, log_in
from tests.central.web.paydata import seed_pay
from tests.central.web.port import Port, TZ, wait_until

PHONE = {"width": 360, "height": 740}
WORKER_PASSWORD = "senha do vigia 17"
INSPECTOR_PASSWORD = "inspector password 9"
DEBOUNCE_S = 3  # the gate rulebook's g9.debounce_s: the same card read again sooner is one read
# No time limit here: the lost card -> blocked at every gate figure (the 2 s) is bench/card_block.py's.


def _shots() -> Path | None:
    return Path(os.environ["PORTGATE_SHOTS"]) if os.environ.get("PORTGATE_SHOTS") else None


def shot(page, name: str, tmp: Path) -> None:
    target = _shots() or tmp
    target.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(target / f"worker-{name}.png"), full_page=True)


def fits(page) -> None:
    """Nothing wider than the 360 px screen."""
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], (page.url, width)


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    o = LiveOffice(tmp_path_factory.mktemp("worker-office")).start()
    try:
        seed_pay(o.engine)
        now = dt.datetime.now(dt.UTC)
        today = now.astimezone(TZ).date()
        with Session(o.engine) as s, s.begin():
            _store_entry(s, EscalaEntry(today, "19-01", "9300002", "Nordic Star", Voyage.LONG_HAUL, Berth.ANCHORED,
                                        "g-b", "portaló", "vigia_chefe", "V017"),
                         operator="op", requisition_id=None, settings=RotationSettings(), actor="test", now=now)
            ev = s.execute(select(events.c.event_id).where(events.c.registration == "V008",
                                                           events.c.decision == "exit")).scalar_one()
            o.case_id = case_svc.open_from_event(s, ev, flag="EARLY_EXIT", charge="Saída antes do fim do período",
                                                 article=None, evidence="leitura de saída às 10:00",
                                                 actor="web:fiscal")
            add_account(s, "V008", password=WORKER_PASSWORD, actor="test")
            add_user(s, "fiscal", role="inspector", password=INSPECTOR_PASSWORD, name="Fiscal", actor="test")
        yield o
    finally:
        o.stop()


def phone(browser, **kw):
    context = browser.new_context(viewport=PHONE, accept_downloads=True, locale="pt-BR", **kw)
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    return context, pg


def worker_log_in(pg, url: str, registration: str, password: str) -> None:
    pg.goto(url + "/login")
    pg.get_by_label("Usuário").fill(registration)
    pg.get_by_label("Senha").fill(password)
    pg.get_by_role("button", name="Entrar").click()
    pg.wait_for_url(url + "/w/")


def test_activate_from_a_printed_code_then_escala_shift_statement_and_payslip(office, browser, tmp_path):
    from pypdf import PdfReader

    desk = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        op = desk.new_page()
        op.set_default_timeout(20_000)
        log_in(op, office)
        op.goto(office.url + "/workers/V017")
        op.get_by_role("button", name="Acesso do trabalhador: imprimir código de ativação").click()
        code = op.locator("#code").inner_text()
        assert re.fullmatch(r"([A-Z2-7]{4}-){4}[A-Z2-7]{4}", code), code
        shot(op, "code-printed", tmp_path)
    finally:
        desk.close()
    context, pg = phone(browser)
    try:
        pg.goto(office.url + "/w/ativar")
        fits(pg)
        shot(pg, "activate", tmp_path)
        pg.get_by_label("Matrícula").fill("V017")
        pg.get_by_label("Código de ativação").fill(code)
        pg.get_by_label("Nova senha").fill(WORKER_PASSWORD)
        pg.get_by_label("Repita a senha").fill(WORKER_PASSWORD)
        pg.get_by_role("button", name="Ativar").click()
        assert "Conta ativada" in pg.locator("#message").inner_text()
        worker_log_in(pg, office.url, "V017", WORKER_PASSWORD)
        fits(pg)
        dispatch = pg.locator('.dispatch[data-ship="9300002"]')
        assert "Nordic Star" in dispatch.inner_text() and "g-b" in dispatch.inner_text()
        assert "Lei 9.719 art. 8" in pg.locator("#next").inner_text()
        shot(pg, "escala", tmp_path)
        with pg.expect_navigation():  # read the new page, not the one the click left
            pg.get_by_role("link", name="Turnos").click()
        pg.get_by_label("De").fill("2026-03-01")
        pg.get_by_label("até").fill("2026-03-31")
        with pg.expect_navigation():  # read the new page, not the one the click left
            pg.get_by_role("button", name="Mostrar").click()
        shift = pg.locator('[data-shift="V017/9300002/2026-03-15/19-01"]')
        taps = shift.locator(".taps li")
        assert taps.count() == 2 and "liberado" in taps.nth(0).inner_text() and "saída" in taps.nth(1).inner_text()
        fits(pg)
        shot(pg, "shifts", tmp_path)
        with pg.expect_navigation():  # read the new page, not the one the click left
            pg.get_by_role("link", name="Pagamento").click()
        pg.get_by_label("De").fill("2026-03-01")
        pg.get_by_label("até").fill("2026-03-31")
        with pg.expect_navigation():  # read the new page, not the one the click left
            pg.get_by_role("button", name="Mostrar").click()
        statement = pg.locator(".statement").first
        assert "R$ 696,60" in statement.locator(".total").inner_text()
        assert "navio fundeado" in statement.inner_text() and "art. 27" in statement.inner_text()
        fits(pg)
        shot(pg, "pay", tmp_path)
        with pg.expect_download() as info:
            pg.locator("#payslip").click()
        path = tmp_path / info.value.suggested_filename
        info.value.save_as(path)
        text = "\n".join(p.extract_text() for p in PdfReader(str(path)).pages)
        assert "R$ 696,60" in text and "V017" in text and "V001" not in text
        for name, url in (("cases", "/w/processos"), ("card", "/w/cartao")):
            pg.goto(office.url + url)
            fits(pg)
            shot(pg, name, tmp_path)
        # weight of each page as transferred (document, stylesheet, script)
        for url in ("/w/", "/w/turnos", "/w/pagamento", "/w/processos", "/w/cartao", "/w/ativar", "/login"):
            pg.goto(office.url + url, wait_until="load")
            sizes = pg.evaluate("""() => performance.getEntries().filter(e => 'transferSize' in e)
                .map(e => [e.name, e.transferSize])""")
            assert len(sizes) >= 3 and 0 < sum(n for _u, n in sizes) < 100 * 1024, (url, sizes)
        # English is one switch away
        pg.goto(office.url + "/w/cartao")
        pg.get_by_label("Idioma").select_option("en")
        pg.get_by_role("button", name="OK").click()
        assert pg.locator("h1").inner_text() == "My card"
        shot(pg, "card-en", tmp_path)
    finally:
        context.close()


def _photo(tmp: Path) -> Path:
    path = tmp / "atestado.jpg"
    img = Image.new("RGB", (800, 600), (240, 240, 230))
    buf = io.BytesIO()
    img.save(buf, "JPEG")
    path.write_bytes(buf.getvalue())
    return path


def test_a_defence_typed_before_the_pages_script_ran_or_lost_with_its_send_is_kept(office, browser):
    """A slow phone: the text typed before worker.js ran (no input event seen) is kept when it runs,
    and a send lost on the way keeps what the box holds even without an input event (the CI
    machine's run: Playwright filled the box before the deferred script had run)."""
    context, pg = phone(browser)
    case_url = office.url + f"/w/processos/{office.case_id}"
    try:
        worker_log_in(pg, office.url, "V008", WORKER_PASSWORD)
        pg.route("**/static/worker.js", lambda route: route.abort())
        pg.goto(case_url)
        pg.get_by_label("Sua defesa").fill("antes do script")
        pg.unroute("**/static/worker.js")
        pg.add_script_tag(url="/static/worker.js")  # returns once it ran
        pg.wait_for_function("() => localStorage.length > 0")
        pg.goto(case_url)
        assert pg.get_by_label("Sua defesa").input_value() == "antes do script"
        # the box set without any input event, then the send is lost
        pg.get_by_label("Sua defesa").evaluate("(box) => { box.value = 'só no envio'; }")
        context.set_offline(True)
        with contextlib.suppress(Exception):
            pg.get_by_role("button", name="Enviar defesa").click(timeout=5_000)
        pg.wait_for_url("chrome-error://chromewebdata/")  # the send failed, not sent once back online
        context.set_offline(False)
        pg.goto(case_url)
        assert pg.get_by_label("Sua defesa").input_value() == "só no envio"
    finally:
        context.close()


def test_a_defence_survives_a_dropped_connection_and_reaches_the_inspectors_case_page(office, browser, tmp_path):
    context, pg = phone(browser)
    typed = "Saí às 10h por ordem do contramestre, que pode confirmar."
    try:
        worker_log_in(pg, office.url, "V008", WORKER_PASSWORD)
        pg.get_by_role("link", name="Processos").click()
        pg.locator(f'[data-case="{office.case_id}"] a').click()
        assert "Saída antes do fim do período" in pg.locator("#charge").inner_text()
        # the click waits for the page to commit, not for its deferred worker.js: offline before it
        # arrived, no script would keep anything (nothing a page can do without its script)
        pg.wait_for_load_state("load")
        pg.get_by_label("Sua defesa").fill(typed)
        context.set_offline(True)  # the connection drops as he sends it
        with contextlib.suppress(Exception):
            pg.get_by_role("button", name="Enviar defesa").click(timeout=5_000)
        pg.wait_for_url("chrome-error://chromewebdata/")  # the send failed: the browser's error page
        context.set_offline(False)
        pg.goto(office.url + f"/w/processos/{office.case_id}")
        assert pg.get_by_label("Sua defesa").input_value() == typed  # kept on the phone
        shot(pg, "case-kept", tmp_path)
        pg.get_by_label("Foto de documento (opcional)").set_input_files(str(_photo(tmp_path)))
        pg.get_by_role("button", name="Enviar defesa").click()
        pg.locator("#saved").wait_for()
        assert typed in pg.locator("#defence").inner_text() and "atestado.jpg" in pg.locator("#files").inner_text()
        assert pg.get_by_label("Sua defesa").input_value() == ""  # sent: the draft is gone
        fits(pg)
        shot(pg, "case", tmp_path)
    finally:
        context.close()
    desk = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        ins = desk.new_page()
        ins.set_default_timeout(20_000)
        ins.goto(office.url + "/login")
        ins.get_by_label("Usuário").fill("fiscal")
        ins.get_by_label("Senha").fill(INSPECTOR_PASSWORD)
        ins.get_by_role("button", name="Entrar").click()
        ins.wait_for_url(office.url + "/")
        ins.goto(office.url + f"/cases/{office.case_id}")
        defence = ins.locator("#defence").inner_text()
        assert typed in defence and "worker:v008" in defence and "atestado.jpg" in defence
    finally:
        desk.close()
    with Session(office.engine) as s:
        row = s.execute(select(audit_log).where(audit_log.c.action == "case.defence")).one()
        assert row.actor == "worker:v008"


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    p = Port(tmp_path_factory.mktemp("worker-port"))
    try:
        yield p.start()
    finally:
        p.stop()


def _gate_card(port: Port, gate_id: str, uid: str) -> str | None:
    path = port.gates[gate_id].dir / "state" / "store.db"
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        row = db.execute("SELECT status FROM cards WHERE uid = ?", (uid,)).fetchone()
    return row[0] if row else None


def test_a_card_reported_lost_is_refused_at_a_running_gate(port, browser, tmp_path):
    from central.db import make_engine

    engine = make_engine(port.url_db)
    try:
        with Session(engine) as s, s.begin():
            add_account(s, "V003", password=WORKER_PASSWORD, actor="test")
    finally:
        engine.dispose()
    gate = port.gates["g-b"]
    assert gate.tap("V003")["outcome"] in ("admit", "exit")  # his card works before
    first_tap = time.monotonic()
    context, pg = phone(browser)
    try:
        worker_log_in(pg, port.url, "V003", WORKER_PASSWORD)
        pg.get_by_role("link", name="Cartão").click()
        card = pg.locator('article[data-uid="0A04A10003"]')
        card.get_by_label("Confirmo que perdi este cartão").check()
        card.get_by_role("button", name="Comunicar perda").click()
        pg.locator("#done").wait_for()
        started = time.monotonic()
        wait_until(lambda: _gate_card(port, "g-b", "0A04A10003") == "lost", 60, interval=0.05,
                   what="the lost card at g-b")
        elapsed = time.monotonic() - started
        shot(pg, "card-lost", tmp_path)
    finally:
        context.close()
    time.sleep(max(0.0, DEBOUNCE_S + 0.5 - (time.monotonic() - first_tap)))  # not dropped as the same read (G9)
    shown = gate.tap("V003")
    assert shown["outcome"] == "deny" and "G2" in shown["rules"], shown
    print(f"card lost -> blocked at g-b in {elapsed:.2f} s")


def test_the_demos_worker_v017_sees_his_day_and_statement_on_the_phone(demo_day, browser, tmp_path):
    """On the session's demo day (read only): the account ``portgate demo`` made for V017, printed
    beside the office logins; his shift with its taps, worked example 2 (R$ 696,60) and its payslip."""
    from pypdf import PdfReader

    assert re.search(r"escritorio / portgate-demo \(escritório\), V017 / portgate-demo \(trabalhador", demo_day.out)
    url = demo_day.url.rstrip("/")
    context, pg = phone(browser)
    try:
        worker_log_in(pg, url, "V017", "portgate-demo")
        assert "V017" in pg.locator("#who").inner_text()
        shot(pg, "demo-escala", tmp_path)
        pg.goto(url + "/w/turnos?from=2026-03-15&to=2026-03-15")
        shift = pg.locator('[data-shift^="V017/9300002/2026-03-15/19-01"]')
        decisions = [li.get_attribute("data-decision") for li in shift.locator(".taps li").all()]
        assert decisions[0] == "admit" and decisions[-1] == "exit", decisions
        assert "Nordic Star" in shift.inner_text()
        fits(pg)
        shot(pg, "demo-shifts", tmp_path)
        pg.goto(url + "/w/pagamento?from=2026-03-15&to=2026-03-15")
        assert pg.locator(".statement .total").first.inner_text() == "R$ 696,60"
        fits(pg)
        shot(pg, "demo-pay", tmp_path)
        with pg.expect_download() as info:
            pg.locator("#payslip").click()
        path = tmp_path / info.value.suggested_filename
        info.value.save_as(path)
        assert "R$ 696,60" in "\n".join(p.extract_text() for p in PdfReader(str(path)).pages)
    finally:
        context.close()


def _weight(pg) -> list[tuple[str, int]]:
    """What the page loaded as transferred (document, stylesheet, script), bytes each."""
    return pg.evaluate("""() => performance.getEntries().filter(e => 'transferSize' in e)
        .map(e => [e.name, e.transferSize])""")


def test_the_demos_stevedore_e001_sees_his_r8_hours_and_production_pay_on_the_phone(demo_day, browser, tmp_path):
    """On the session's demo day (read only): stevedore E001 (``portgate demo`` prints his login)
    sees his R8 monthly return (February: gang T0; March: T2 and T1 with the 40 min trip to the
    anchored Nordic Star, E7) and his production statements with their lines in plain words; each
    page fits 360 px, weighs under 100 KB as transferred and has no axe violation. V017 sees none
    of it, and E001 gets 404 for the demo's case against another worker."""
    from testkit.axe import axe_violations, describe

    assert re.search(r"V017 / portgate-demo \(trabalhador, no celular: \S+\), E001 / portgate-demo \(estivador\)",
                     demo_day.out)
    url = demo_day.url.rstrip("/")
    context, pg = phone(browser, bypass_csp=True)  # axe is injected inline
    try:
        worker_log_in(pg, url, "E001", "portgate-demo")
        pg.goto(url + "/w/turnos?from=2026-02-01&to=2026-03-15", wait_until="load")
        sizes = _weight(pg)
        assert len(sizes) >= 3 and 0 < sum(n for _u, n in sizes) < 100 * 1024, sizes
        r8 = pg.locator("#r8")
        assert "DL 2.032 art. 6" in r8.inner_text() and "E7" in r8.inner_text()
        rows = {r.get_attribute("data-month"): (r.locator(".gangs").inner_text(), r.locator(".hours").inner_text())
                for r in r8.locator("tbody tr").all()}
        assert rows == {"2026-02": ("1", "5,50"), "2026-03": ("2", "10,83")}, rows
        fits(pg)
        shot(pg, "demo-stevedore-hours", tmp_path)
        found = axe_violations(pg)
        assert found == [], describe(found)
        with pg.expect_navigation():  # read the new page, not the one the click left
            pg.get_by_role("link", name="Pagamento").click()
        pg.get_by_label("De").fill("2026-02-01")
        with pg.expect_navigation():  # read the new page, not the one the click left
            pg.get_by_role("button", name="Mostrar").click()
        pg.wait_for_load_state("load")
        sizes = _weight(pg)
        assert len(sizes) >= 3 and 0 < sum(n for _u, n in sizes) < 100 * 1024, sizes
        statements = pg.locator("article.production")
        assert [a.get_attribute("data-gang") for a in statements.all()] == ["T1", "T2", "T0"]
        t1 = statements.first
        assert "Nordic Star" in t1.locator("h3").inner_text() and t1.locator(".total").inner_text() == "R$ 368,78"
        e7 = t1.locator('tr[data-rule="E7"]').inner_text()
        assert "viagem ao navio fundeado e volta" in e7 and "DL 2.032 art. 16" in e7 and "R$ 15,00" in e7
        assert "sua cota da produção do terno" in t1.locator('tr[data-rule="E2"]').inner_text()
        assert "R$ 696,60" not in pg.content()  # V017's statement is not his
        fits(pg)
        shot(pg, "demo-stevedore-pay", tmp_path)
        found = axe_violations(pg)
        assert found == [], describe(found)
        response = pg.goto(url + "/w/processos/1")  # the demo's case charges a watchman
        assert response is not None and response.status == 404
    finally:
        context.close()
    context, pg = phone(browser)
    try:
        worker_log_in(pg, url, "V017", "portgate-demo")
        pg.goto(url + "/w/pagamento?from=2026-02-01&to=2026-03-15")
        assert pg.locator("article.production").count() == 0 and "R$ 368,78" not in pg.content()
        pg.goto(url + "/w/turnos?from=2026-02-01&to=2026-03-15")
        assert pg.locator("#r8").count() == 0
    finally:
        context.close()
