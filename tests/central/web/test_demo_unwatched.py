"""The demo's third ship, seen at the office in a real browser (issue 33 item 8, G11): Lagoa Azul
(cabotage, gate ``g-lagoa``) has four gangway watchmen dispatched and its gate never connects, so
nobody is aboard all day. The live page shows ``g-lagoa`` as a gate never connected, the ship as
without a live gate, and the coverage alarm raised by the office; the alarm list has its rows."""

from __future__ import annotations

from app.demo.web import DEMO_PASSWORD, OFFICE_USER
from testkit.browser import launch_chromium


def test_the_never_connected_ships_gate_and_coverage_alarm_are_on_the_live_page(demo_day):
    assert demo_day.serving, demo_day.out[-3000:]
    url = demo_day.url
    with launch_chromium() as browser:
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.set_default_timeout(30_000)
        page.goto(url)
        page.get_by_label("Usuário").fill(OFFICE_USER)
        page.get_by_label("Senha").fill(DEMO_PASSWORD)
        page.get_by_role("button", name="Entrar").click()
        page.wait_for_url(url)
        gate = page.locator('article[data-gate="g-lagoa"]')
        gate.wait_for()
        assert gate.get_attribute("data-state") == "never" and "nunca conectado" in gate.inner_text()
        ship = page.locator('article.ship[data-ship="9300003"]')
        assert ship.get_attribute("data-gate-live") == "no" and "SEM PORTALÓ AO VIVO" in ship.inner_text()
        alarm = page.locator('.alarm[data-ship="9300003"]')
        alarm.first.wait_for()  # raised by the office's own check within a second of serving
        assert alarm.first.inner_text().startswith("SEM VIGIA DE PORTALÓ: Lagoa Azul (9300003) · Portaló g-lagoa")
        page.goto(url + "alarms")
        rows = page.locator('#alarm-list tr[data-ship="9300003"]')
        assert rows.count() >= 1
