"""The status bar in a real browser: broker offline (the gate's heartbeat file, no metrics_port), outbox depth and the
age of the oldest unsent event, stale copies; and the screen keeps working when the gate is gone."""

from __future__ import annotations

import datetime as dt
import socket

from edge.scripted_clock import set_scripted_time
from testkit.display import T0, GateWithScreen


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_broker_offline_outbox_and_stale_copies_are_shown(tmp_path, page) -> None:
    extra = (f"[mqtt]\nhost = \"127.0.0.1\"\nport = {_free_port()}\n"
             "reconnect_min_s = 0.5\nreconnect_max_s = 1\n")  # nobody listens on that port
    gate = GateWithScreen(tmp_path / "gate", extra=extra)
    try:
        gate.start_gate()
        gate.start_display()
        page.goto(gate.url)
        page.wait_for_selector("#st-broker[data-state='offline']", timeout=15_000)
        assert "SEM CONEXÃO" in page.locator("#st-broker").inner_text()
        gate.pair("0B0B01BADE", "0A04A10001")
        gate.wait_taps(1)
        page.wait_for_function("+document.querySelector('#st-outbox').dataset.depth >= 3")  # 2 reader events + the tap
        assert "mais antigo há" in page.locator("#st-outbox").inner_text()
        assert page.locator("#st-copies").get_attribute("data-stale") == "0"
        set_scripted_time(gate.clock_file, T0 + dt.timedelta(hours=25))  # the copies are from T0
        page.wait_for_selector("#st-copies[data-stale='1']")
        assert "DESATUALIZADOS" in page.locator("#st-copies").inner_text()
        page.goto(gate.url + "?lang=en")
        assert "OFFLINE" in page.locator("#st-broker").inner_text()
        assert "STALE" in page.locator("#st-copies").inner_text()
        # the gate stops (or the network with it): the screen still answers and shows the last read
        gate.gate.terminate()
        gate.gate.wait(30)
        page.goto(gate.url)
        assert page.locator("#now .person .name").inner_text() == "Ana Lima"
        page.wait_for_selector("#st-broker[data-state='unknown']", timeout=15_000)
    finally:
        gate.stop()
