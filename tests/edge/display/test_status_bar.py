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
    gate = GateWithScreen(tmp_path / "gate", extra=extra, idle_after_s=600)
    try:
        gate.start_gate()
        gate.start_display()
        page.goto(gate.url)
        page.wait_for_selector("#st-broker[data-state='offline']", timeout=60_000)
        assert "SEM CONEXÃO" in page.locator("#st-broker").inner_text()
        gate.pair("0B0B01BADE", "0A04A10001")
        gate.wait_taps(1)
        page.wait_for_function("+document.querySelector('#st-outbox').dataset.depth >= 3")  # 2 reader events + the tap
        assert "mais antigo há" in page.locator("#st-outbox").inner_text()
        # a plain sentence across the screen, not alarm styling on the outbox
        assert page.locator("#offline-strip").inner_text() == "Sem rede — continue; os registros serão enviados."
        assert page.evaluate("getComputedStyle(document.querySelector('#st-outbox')).fontWeight") == "400"
        assert page.locator("#st-outbox.bad").count() == 0
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
        page.wait_for_selector("#st-broker[data-state='unknown']", timeout=60_000)
    finally:
        gate.stop()


def test_the_outbox_of_an_old_journal_before_the_gate_upgrades_it_is_shown_never_a_false_0(tmp_path, page) -> None:
    """The screen starts before the gate on a version-0 journal (a ``sent`` column per row): the bar
    shows its 38 unsent rows; a journal whose tables it cannot read shows the depth as "—"."""
    import sqlite3

    from edge.journal import Journal
    from edge.rules.model import Now
    from testkit.journal_faults import legacy_copy
    from wire.events import TapPayload

    gate = GateWithScreen(tmp_path / "gate")
    gate.state.mkdir(parents=True, exist_ok=True)
    src = Journal(tmp_path / "v2.db", port="santos", gate_id="g-aurora", key=b"k" * 16, boot_id="b")
    src.append_many([TapPayload(uid="0A04A10001", reader_id="r", reader_kind="control", decision="admit")
                     for _ in range(40)], now=Now(wall=T0, mono_ns=1, clock_trusted=True))
    src.mark_sent([1, 2])
    src.close()
    legacy_copy(tmp_path / "v2.db", gate.state / "journal.db")
    try:
        gate.start_display()
        page.goto(gate.url)
        page.wait_for_selector("#st-outbox[data-depth='38']", timeout=60_000)
        assert "A enviar: 38" in page.locator("#st-outbox").inner_text()
        other = tmp_path / "other.db"  # replaced by a file of no journal layout the screen knows
        c = sqlite3.connect(other)
        c.execute("CREATE TABLE journal (seq INTEGER PRIMARY KEY, kind TEXT, body BLOB)")
        c.commit()
        c.close()
        other.replace(gate.state / "journal.db")
        page.wait_for_selector("#st-outbox[data-depth='']", timeout=60_000)
        assert page.locator("#st-outbox").inner_text() == "A enviar: —"
    finally:
        gate.stop()
