"""Screenshots of the office web application for the README (docs/img/), taken with the browser kit
(testkit/browser.py) on a real port (tests/central/web/port.py: broker, ingest, two gates, office serve):

    .venv/bin/python scripts/office_screenshots.py

- docs/img/office-live.png: the live port view after a tap admitted V001 at gate g-a;
- docs/img/office-worker.png: the worker's page;
- docs/img/payslip.png: page 1 of V017's payslip for March 2026 (worked example 2), the PDF as
  served, rasterised by ``pdftoppm`` (Debian poppler-utils);
- docs/img/clerk-*.png (1280x800, ``clerk_shots``): the clerk's jobs of docs/office.md: the worker
  list, a refused add-worker form, the card actions, the pay run, its confirmation, a reversal;
  docs/img/clerk-enrol.png: a card read in enrol mode at gate g-b, offered on the worker's page.

With ``--demo RUN_DIR`` (a ``portgate demo`` run directory) only the demo day's shots
(``demo_shots``, on a copy of its ledger): docs/img/clerk-escala.png (1440x900, a row's menu
open), clerk-escala-phone.png (390 px), clerk-whatif-param.png (one parameter changed), the
inspector's phone (390 px: inspector-flags-phone.png, inspector-flag-phone.png,
inspector-case-phone.png, inspector-alarms-phone.png) and the audit log (office-audit.png).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy.orm import Session  # noqa: E402

from central.db import make_engine  # noqa: E402
from central.web.users import add_user  # noqa: E402
from testkit.browser import launch_chromium  # noqa: E402
from tests.central.web.paydata import seed_pay  # noqa: E402
from tests.central.web.port import PASSWORD, Port  # noqa: E402

OUT = ROOT / "docs" / "img"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        port = Port(Path(tmp))
        try:
            port.start()
            engine = make_engine(port.url_db)
            with Session(engine) as s, s.begin():
                add_user(s, "escritorio", role="office", password=PASSWORD, name="Escritório", actor="shots")
            engine.dispose()
            port.gates["g-a"].tap("V001")
            with launch_chromium() as browser:
                page = browser.new_page(locale="pt-BR", viewport={"width": 1280, "height": 900})
                page.goto(port.url + "/login")
                page.get_by_label("Usuário").fill("escritorio")
                page.get_by_label("Senha").fill(PASSWORD)
                page.get_by_role("button", name="Entrar").click()
                page.wait_for_url(port.url + "/")
                page.locator('[data-gate="g-a"][data-state="online"]').wait_for(timeout=20_000)
                page.wait_for_timeout(2500)
                page.screenshot(path=str(OUT / "office-live.png"), full_page=True)
                engine = make_engine(port.url_db)
                seed_pay(engine)  # after the live view: its gates would show as unknown ones
                engine.dispose()
                page.goto(port.url + "/workers/V017")
                page.screenshot(path=str(OUT / "office-worker.png"), full_page=True)
                resp = page.request.get(port.url + "/pay/slip/V017.pdf?from=2026-03-01&to=2026-03-31")
                pdf = Path(tmp) / "slip.pdf"
                pdf.write_bytes(resp.body())
                clerk_shots(browser, port.url)
                enrol_shot(browser, port)
            subprocess.run(["pdftoppm", "-png", "-r", "90", "-f", "1", "-l", "1", "-singlefile", str(pdf),
                            str(OUT / "payslip")], check=True)
        finally:
            port.stop()
    print("wrote", *sorted(p.name for p in OUT.glob("*.png")))


def enrol_shot(browser, port) -> None:
    """docs/img/clerk-enrol.png: enrol mode at gate g-b, the card it read offered on V006's page."""
    url = port.url
    page = browser.new_page(locale="pt-BR", viewport={"width": 1280, "height": 800})
    page.goto(url + "/login")
    page.get_by_label("Usuário").fill("escritorio")
    page.get_by_label("Senha").fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(url + "/")
    page.goto(url + "/workers/V006")
    page.locator('#cards tr[data-uid="0A04A10006"]').get_by_role("button", name="Comunicar perda").click()
    page.locator('#card-done[data-done="lost"]').wait_for()
    page.locator("#en-gate_id").select_option("g-b")
    page.get_by_role("button", name="Iniciar o cadastro nesta porta").click()
    page.locator("#enrol-waiting").wait_for()
    port.gates["g-b"].read("control", "0C0C0C0C06")  # a blank card at the gate's reader
    page.locator("#enrol-read").wait_for(timeout=20_000)
    page.locator("#enrol").evaluate("e => e.scrollIntoView({block: 'center'})")
    page.screenshot(path=str(OUT / "clerk-enrol.png"))
    page.close()


def clerk_shots(browser, url: str) -> None:
    """The clerk's workflows at 1280x800 (what a clerk's screen shows, not the whole page)."""
    page = browser.new_page(locale="pt-BR", viewport={"width": 1280, "height": 800})
    page.goto(url + "/login")
    page.get_by_label("Usuário").fill("escritorio")
    page.get_by_label("Senha").fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(url + "/")
    page.goto(url + "/workers?category=vigia&expiring=400")
    page.screenshot(path=str(OUT / "clerk-workers.png"))
    page.goto(url + "/workers/new")
    for label, value in (("Matrícula", "V001"), ("Data de nascimento", "15/05/1960"),
                         ("Data do registro", "01/12/2026"), ("Exame de saúde", "31/02/2026")):
        page.get_by_label(label, exact=False).first.fill(value)
    page.get_by_label("Nome", exact=True).fill("Joana Nova")
    page.get_by_label("Categoria").select_option("vigia")
    page.locator("#f-vision").fill("ASO 77")
    page.get_by_role("button", name="Cadastrar trabalhador").click()
    page.locator("#form-refused").wait_for()
    page.screenshot(path=str(OUT / "clerk-add-refused.png"))
    page.goto(url + "/workers/V005")
    page.locator("#new-card summary").click()
    page.locator("#n-uid").fill("12345678")
    page.locator("#n-form").select_option("dez8")  # 24 bits: refused beside the field
    page.get_by_role("button", name="Cadastrar novo cartão").click()
    page.locator("#form-refused").wait_for()
    page.locator('#cards details summary').first.click()
    page.locator("#new-card").evaluate("e => e.scrollIntoView({block: 'end'})")
    page.screenshot(path=str(OUT / "clerk-cards.png"))
    page.goto(url + "/pay?from=2026-03-01&to=2026-03-31")
    page.locator('#statements tr[data-worker="V017"] summary').click()
    page.locator("#statements").scroll_into_view_if_needed()
    page.screenshot(path=str(OUT / "clerk-pay-run.png"))
    page.locator("#select-all").click()
    page.locator("#m-ref").fill("folha-2026-03")
    page.locator("#mark-paid").click()
    page.locator("#confirm-form").wait_for()
    page.screenshot(path=str(OUT / "clerk-pay-confirm.png"))
    page.locator("#confirm-paid").click()
    page.locator("#pay-done").wait_for()
    page.locator('#statements tr[data-worker="V017"] summary').click()
    page.locator('#statements tr[data-worker="V017"] [data-reverse]').first.click()
    page.locator("#v-reason").fill("   ")  # blank: refused by the office, the form shown again
    page.locator("#confirm-reverse").click()
    page.locator("#form-refused").wait_for()
    page.screenshot(path=str(OUT / "clerk-reverse.png"))
    page.close()


def demo_shots(run_dir: Path) -> None:
    """The escala and the what-if parameter form on a copy of a demo day's ledger."""
    import contextlib
    import datetime as dt
    import sqlite3
    import threading
    import time

    import uvicorn

    from app.demo.mosquitto import free_port
    from app.demo.web import DEMO_PASSWORD, OFFICE_USER
    from app.whatif import web_gate_what_if
    from central.config import load_central_config
    from central.web.app import create_app

    config = load_central_config(str(run_dir / "central.toml"))
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "ledger.db"
        with contextlib.closing(sqlite3.connect(run_dir / "ledger.db")) as src, \
                contextlib.closing(sqlite3.connect(copy)) as dst:
            src.backup(dst)  # consistent while the demo still serves it
        engine = make_engine(f"sqlite:///{copy}")
        app = create_app(engine, config.web, b"x" * 32, background=False,
                         now=lambda: dt.datetime(2026, 3, 15, 13, 0, tzinfo=dt.UTC),
                         gate_what_if=web_gate_what_if(config.publish))
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port}"
        try:
            with launch_chromium() as browser:
                for width, height, name in ((1440, 900, "clerk-escala.png"), (390, 844, "clerk-escala-phone.png")):
                    page = browser.new_page(locale="pt-BR", viewport={"width": width, "height": height})
                    page.goto(url + "/login")
                    page.get_by_label("Usuário").fill(OFFICE_USER)
                    page.get_by_label("Senha").fill(DEMO_PASSWORD)
                    page.get_by_role("button", name="Entrar").click()
                    page.wait_for_url(url + "/")
                    page.goto(url + "/escala?date=2026-03-15")
                    group = page.locator('section.escala-group[data-ship="9300002"][data-period="07-13"]')
                    group.locator("summary").first.click()
                    group.scroll_into_view_if_needed()
                    page.screenshot(path=str(OUT / name))
                    if width == 1440:
                        page.goto(url + "/whatif?gate=g-aurora&day=2026-03-15")
                        page.locator("#p-param").select_option("g4.card_and_badge_required")
                        page.locator("#p-value").fill("não")
                        page.locator("#param-form button").click()
                        page.locator("#gate-summary").wait_for()
                        page.locator("#param-form").scroll_into_view_if_needed()
                        page.screenshot(path=str(OUT / "clerk-whatif-param.png"))
                    page.close()
                inspector_shots(browser, url)
        finally:
            server.should_exit = True
            with contextlib.suppress(Exception):
                engine.dispose()


def _signed_in(browser, url: str, login: str, width: int, height: int):
    from app.demo.web import DEMO_PASSWORD  # lazy: the demo's package, only for the --demo shots
    page = browser.new_page(locale="pt-BR", viewport={"width": width, "height": height})
    page.goto(url + "/login")
    page.get_by_label("Usuário").fill(login)
    page.get_by_label("Senha").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(url + "/")
    return page


def inspector_shots(browser, url: str) -> None:
    """The inspector's phone (390x844) on the demo day: the flag queue, a flag, case 1, the
    alarms (inspector-*-phone.png); the office's audit log at 1280x800 (office-audit.png)."""
    from app.demo.web import DEMO_USER, OFFICE_USER  # lazy: as above
    page = _signed_in(browser, url, DEMO_USER, 390, 844)
    for path, name in (("/flags", "inspector-flags-phone.png"), ("/cases/1", "inspector-case-phone.png"),
                       ("/alarms", "inspector-alarms-phone.png")):
        page.goto(url + path)
        page.screenshot(path=str(OUT / name))
    page.goto(url + "/flags")
    page.locator("table.flags tbody tr a").first.click()
    page.wait_for_load_state()
    page.screenshot(path=str(OUT / "inspector-flag-phone.png"))
    page.close()
    page = _signed_in(browser, url, OFFICE_USER, 1280, 800)
    page.goto(url + "/audit?from=2026-03-01&to=2026-12-31")
    page.screenshot(path=str(OUT / "office-audit.png"))
    page.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--demo"]:
        demo_shots(Path(sys.argv[2]))
    else:
        main()
