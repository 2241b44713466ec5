"""Screenshots of the office web application for the README (docs/img/), taken with the browser kit
(testkit/browser.py) on a real port (tests/central/web/port.py: broker, ingest, two gates, office serve):

    .venv/bin/python scripts/office_screenshots.py

- docs/img/office-live.png: the live port view after a tap admitted V001 at gate g-a;
- docs/img/office-worker.png: the worker's page;
- docs/img/payslip.png: page 1 of V017's payslip for March 2026 (worked example 2), the PDF as
  served, rasterised by ``pdftoppm`` (Debian poppler-utils).
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
                page = browser.new_page(viewport={"width": 1280, "height": 900})
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
            subprocess.run(["pdftoppm", "-png", "-r", "90", "-f", "1", "-l", "1", "-singlefile", str(pdf),
                            str(OUT / "payslip")], check=True)
        finally:
            port.stop()
    print("wrote", *sorted(p.name for p in OUT.glob("*.png")))


if __name__ == "__main__":
    main()
