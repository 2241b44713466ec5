"""``portgate demo --keep-serving``: the office web application runs during the scripted day on a
free loopback port (URL and login printed) and stays up after the reconciliation until Ctrl-C; in a
real browser the day's ledger is there: the gates, the borrowed-card flag and the case the
inspector's confiscation opened by itself."""

from __future__ import annotations

import re
import subprocess
import sys

from app.demo.web import DEMO_PASSWORD, DEMO_USER, OFFICE_USER
from testkit.browser import launch_chromium


def _logged_in(page, url: str, user: str):
    """``page`` logged in to the demo's web application at ``url`` as ``user``; returned."""
    page.set_default_timeout(30_000)
    page.goto(url)
    page.get_by_label("Usuário").fill(user)
    page.get_by_label("Senha").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(url)
    return page


def test_the_demos_office_downloads_a_payslip_that_verify_slip_verifies(demo_day, tmp_path):
    """V017's slip of the day, signed with the run directory's ``keys/payslip.key``, checked by
    ``portgate pay verify-slip --config RUN_DIR/central.toml`` against the day's ledger; the batch too."""
    assert demo_day.serving, demo_day.out[-3000:]
    assert (demo_day.run_dir / "keys" / "payslip.key").stat().st_size == 32
    url = demo_day.url
    with launch_chromium() as browser:
        office = _logged_in(browser.new_page(), url, OFFICE_USER)
        files = []
        for path in ("pay/slip/V017.pdf", "pay/slips.pdf"):
            r = office.request.get(url + path + "?from=2026-03-15&to=2026-03-15")
            assert r.status == 200 and r.headers["content-type"] == "application/pdf", (path, r.status, r.text()[:500])
            files.append(tmp_path / path.replace("/", "-"))
            files[-1].write_bytes(r.body())
    for pdf in files:
        done = subprocess.run([sys.executable, "-m", "app.cli", "pay", "verify-slip", "--config",
                               str(demo_day.run_dir / "central.toml"), str(pdf)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "verified against the ledger" in done.stdout


def test_the_demo_serves_the_office_web_application_until_ctrl_c(demo_day):
    """On the session's demo day (tests/conftest.py ``demo_day``, played with ``--keep-serving``)."""
    out = demo_day.out
    assert demo_day.serving, out[-3000:]
    assert "Todas as decisões como esperado" in out, out[-3000:]
    url = re.search(r"^web +(http://127\.0\.0\.1:\d+/) +login demo / portgate-demo \(fiscal\), escritorio / portgate-demo", out, re.M).group(1)
    with launch_chromium() as browser:
        page = _logged_in(browser.new_page(), url, DEMO_USER)
        for gate in ("g-aurora", "g-nordic"):  # stopped after the day: offline, with their last event
            page.locator(f'[data-gate="{gate}"][data-state="offline"]').wait_for()
        page.goto(url + "flags?flag=BORROWED_CARD")
        assert page.locator('tr[data-flags~="BORROWED_CARD"]').count() >= 1
        page.goto(url + "cases")
        assert "cartão emprestado (G4)" in page.locator("table").inner_text()  # the confiscation's own case
        office = _logged_in(browser.new_context().new_page(), url, OFFICE_USER)  # registry photos, what-if
        office.goto(url + "workers/V001")
        assert "Sem foto" not in office.content()  # the demo's photos are in the registry
        office.goto(url + "whatif")
        assert office.locator("body").inner_text() and "não está disponível" not in office.content()
    # the Ctrl-C (exit 0, "parado") is checked when the session ends (tests/conftest.py demo_day):
    # other tests read the same served day meanwhile
