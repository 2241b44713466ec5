"""The screen tells the watchman when something behind it stopped, in a real browser: the office
link from the gate's heartbeat file (no ``metrics_port``), "PORTALÓ PARADO" and a stopped inspector
countdown when the gate process dies, "TELA SEM ATUALIZAÇÃO" and a grey page when the screen process
itself dies."""

from __future__ import annotations

import os
import signal

from app.demo.mosquitto import Mosquitto
from testkit.display import GateWithScreen


def test_link_gate_and_screen_deaths_are_shown(tmp_path, page) -> None:
    broker = Mosquitto(tmp_path / "broker")
    broker.start()
    extra = (f'[mqtt]\nhost = "{broker.host}"\nport = {broker.port}\n'
             "reconnect_min_s = 0.2\nreconnect_max_s = 0.5\n")  # no metrics_port
    gate = GateWithScreen(tmp_path / "gate", extra=extra)
    try:
        gate.start_gate()
        gate.start_display()
        page.goto(gate.url)
        page.wait_for_selector("#st-broker[data-state='online']", timeout=60_000)
        assert "conectada" in page.locator("#st-broker").inner_text()
        assert page.locator("#offline-strip").count() == 0  # link up, nothing old unsent: no strip
        assert page.locator("#st-gate").count() == 0
        assert page.locator("#now").get_attribute("data-state") == "idle"
        broker.kill()
        page.wait_for_selector("#st-broker[data-state='offline']", timeout=60_000)
        assert "SEM CONEXÃO" in page.locator("#st-broker").inner_text()
        page.wait_for_selector("#offline-strip")
        gate.tap("0F1F5CA001", "control")  # the union inspector's card: the countdown runs
        page.wait_for_selector("#inspector-countdown:not([data-stopped])", timeout=60_000)
        os.killpg(gate.gate.pid, signal.SIGKILL)  # the gate dies without a word
        gate.gate.wait(30)
        page.wait_for_selector("#st-gate", timeout=60_000)
        assert page.locator("#st-gate").inner_text() == "PORTALÓ PARADO"
        assert page.locator("#status").get_attribute("data-gate-running") == "0"
        # the main area does not go on inviting a tap that nobody records (the fresh tester saw
        # "Aproxime o cartão" for 24 s with the gate down), nor showing the inspector's mode
        now = page.wait_for_selector("#now[data-state='gate-stopped']", timeout=20_000)
        assert now.query_selector(".words").inner_text() == "PORTALÓ PARADO"
        assert "não libere a entrada de ninguém" in now.query_selector(".action").inner_text()
        countdown = page.locator("#inspector-countdown")
        assert countdown.get_attribute("data-stopped") == "1"
        assert "contagem parada" in countdown.inner_text()
        assert page.locator("#stale-banner").is_hidden()  # the screen itself still beats
        gate.kill_display()  # now the screen process dies: the page must not look alive
        page.wait_for_selector("#stale-banner", state="visible", timeout=60_000)
        assert page.locator("#stale-banner").inner_text() == "TELA SEM ATUALIZAÇÃO"
        assert page.evaluate("document.documentElement.classList.contains('stale')")
        # a stale screen does not go on saying what it last heard of the office link
        assert page.locator("#st-broker").inner_text() == "Central: sem informação (tela sem atualização)"
    finally:
        gate.stop()
        broker.kill()
