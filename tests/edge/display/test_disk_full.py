"""A full disk on the gate, seen on the watchman's screen in a real browser: the real gate process
with its state directory on a 2 MiB tmpfs the test fills keeps running and refuses every read
("Falha do registro (disco): entrada negada"); the screen says so — the gate is not shown stopped,
the status bar names the disk fault and each refusal is on the screen as "falha do registro" —
and, once space returns and a read is journaled again, the fault leaves the status bar."""

from __future__ import annotations

import json
import os
import time
import urllib.request

import pytest

from edge.heartbeat import FILE, STALE_S
from testkit.display import GateWithScreen
from testkit.tmpfs import mounted_tmpfs
from testkit.wait import wait_until
from tests.ops.test_gate_disk_full import fill

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small file system needs root")

REFUSED = [f"0A04A199{i:02d}" for i in range(12)]  # distinct cards: no debounce between them


def _state(gate) -> dict:
    with urllib.request.urlopen(gate.url + "state.json", timeout=30) as r:
        return json.load(r)


def _shown(gate) -> list[dict]:
    path = gate.root / "shown.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def full_gate(tmp_path):
    """A gate and its screen, the gate's state directory a real 2 MiB tmpfs."""
    gate = GateWithScreen(tmp_path / "gate", card_and_badge=False, idle_after_s=600)  # read at leisure
    with mounted_tmpfs(gate.state, "2m"):
        try:
            gate.start_gate()
            gate.start_display()
            yield gate
        finally:
            gate.stop()


def test_the_screen_shows_the_gate_running_and_refusing_on_a_full_disk(full_gate, page) -> None:
    gate = full_gate
    page.goto(gate.url)
    gate.tap("0A04A10001")  # V001 admitted: a journaled read first
    tap = gate.wait_taps(1)[-1]
    page.wait_for_selector(f"#now[data-seq='{tap.seq}']", timeout=60_000)

    assert fill(gate.state) > 0
    filled_at = time.time()
    for uid in REFUSED:
        gate.tap(uid)
    wait_until(lambda: len(_shown(gate)) >= 1 + len(REFUSED), what="the refusals on the gate's indicator")
    for line in _shown(gate)[-len(REFUSED):]:
        assert line["outcome"] == "deny" and "Falha do registro" in line["message"], line
    assert gate.gate.poll() is None

    # the heartbeat goes on beyond the stale window on the full disk: the gate is shown running
    alive = gate.state / FILE
    wait_until(lambda: json.loads(alive.read_bytes())["at"] > filled_at + STALE_S + 1, timeout=30,
               what="the heartbeat rewritten on the full disk")
    page.wait_for_selector("#st-disk", timeout=60_000)
    assert page.locator("#st-gate").count() == 0  # not "PORTALÓ PARADO"
    assert page.locator("#status").get_attribute("data-gate-running") == "1"
    assert "FALHA DO REGISTRO (DISCO CHEIO)" in page.locator("#st-disk").inner_text()
    page.wait_for_selector("#now[data-unjournaled='1']", timeout=60_000)
    now = page.locator("#now")
    assert now.get_attribute("data-outcome") == "deny"
    assert "Falha do registro (disco): entrada negada." in now.locator(".reason").inner_text()
    assert "Chame o supervisor" in now.locator(".action").inner_text()
    rows = page.locator("#history tr.read[data-unjournaled='1']")
    wait_until(lambda: rows.count() == 10, what="the last 10 refusals in the history")
    assert all("falha do registro" in rows.nth(i).inner_text() for i in range(10))
    # newest first, named by the card's UID (under load 10 rows show before the last refusal does)
    wait_until(lambda: REFUSED[-1] in rows.nth(0).inner_text(), what="the last refusal first in the history")
    state = _state(gate)
    assert state["status"]["gate_running"] and state["status"]["disk_full"]
    assert state["unjournaled"] == REFUSED[-10:]

    (gate.state / "filler").unlink()  # space returns: the next read journals the refusals' alert with it
    gate.tap("0A04A10002")  # (a gate without an office link: no uplink check writes it before)
    tap = gate.wait_taps(2)[-1]
    assert tap.payload.uid == "0A04A10002"
    page.wait_for_selector(f"#now[data-seq='{tap.seq}']", timeout=60_000)
    page.wait_for_selector("#st-disk", state="detached", timeout=30_000)
    assert page.locator("#history tr.read[data-unjournaled='1']").count() == 9  # still in the history


def test_the_screen_in_english_names_the_disk_fault(full_gate, browser) -> None:
    gate = full_gate
    page = browser.new_page()
    try:
        page.goto(gate.url + "?lang=en")
        assert fill(gate.state) > 0
        gate.tap(REFUSED[0])
        page.wait_for_selector("#st-disk", timeout=60_000)
        assert "JOURNAL FAILURE (DISK FULL)" in page.locator("#st-disk").inner_text()
        page.wait_for_selector("#now[data-unjournaled='1']", timeout=60_000)
        assert "Journal failure (disk): entry denied." in page.locator("#now .reason").inner_text()
        assert "journal failure" in page.locator("#history tr.read").first.inner_text()
    finally:
        page.close()
