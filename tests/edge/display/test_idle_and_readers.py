"""The watchman's screen as it is used all day (issue 33 items 1-4), in a real browser against a real
gate process with serial readers on ptys: a read gives way to "Aproxime o cartão" after
``idle_after_s``; a denial that asks the watchman to act stays until he touches "Ciente" or the
next read; an unplugged reader is "LEITOR SEM SINAL" until it is back; at 800x480 the status bar
and the reason are readable from 2 m, the inspector's countdown holds on one line, and axe-core
finds nothing to fault."""

from __future__ import annotations

import time

import pytest

from edge.config import DisplayConfig
from testkit.axe import axe_violations, describe
from testkit.display import GateWithScreen, main_shown, record_main
from tests.edge.display.conftest import seed_photos


@pytest.fixture
def quick(tmp_path):
    """A gate whose screen goes idle 1 s after a read."""
    g = GateWithScreen(tmp_path / "gate", idle_after_s=1)
    seed_photos(g.state)
    g.start_gate()
    g.start_display()
    yield g
    g.stop()


@pytest.fixture
def kiosk(browser):
    """The gangway's panel: 800 x 480."""
    p = browser.new_page(viewport={"width": 800, "height": 480})
    yield p
    p.close()


def _now(page):
    return page.locator("#now")


def test_a_read_gives_way_to_aproxime_o_cartao_and_stays_in_the_history(quick, page) -> None:
    page.goto(quick.url)
    page.wait_for_selector("#now[data-state='idle']")
    assert _now(page).locator(".words").inner_text() == "Aproxime o cartão"
    record_main(page)
    quick.pair("0B0B01BADE", "0A04A10001")
    tap = quick.wait_taps(1)[-1]
    assert tap.payload.decision == "admit"
    shown = main_shown(page, tap.seq)  # pushed: no reload
    assert shown[0]["words"] == "ENTRADA LIBERADA", shown
    assert shown[-1]["state"] == "idle" and shown[-1]["words"] == "Aproxime o cartão", shown
    row = page.locator(f"#history tr.read[data-seq='{tap.seq}']")
    assert row.count() == 1 and "Ana Lima" in row.inner_text()
    quick.pair("0B0B02BADE", "0A04A10002")  # the next read shows again, then goes idle again
    second = quick.wait_taps(2)[-1]
    assert main_shown(page, second.seq)[-1]["state"] == "idle"
    assert page.locator("#history tr.read").count() == 2


def test_by_default_a_read_stays_5_s_then_the_screen_is_idle(tmp_path, page) -> None:
    assert DisplayConfig().idle_after_s == 5.0
    gate = GateWithScreen(tmp_path / "gate")  # no [display] idle_after_s: the default
    try:
        gate.start_gate()
        gate.start_display()
        page.goto(gate.url)
        record_main(page)
        gate.pair("0B0B01BADE", "0A04A10001")
        tap = gate.wait_taps(1)[-1]
        shown = main_shown(page, tap.seq)
        idle = next(x for x in shown if x["state"] == "idle")
        assert idle["at"] - shown[0]["at"] > 3500, shown  # about 5 s after the read, on the page's clock
    finally:
        gate.stop()


def test_a_denial_that_asks_to_retain_the_card_stays_until_ciente(quick, page) -> None:
    page.goto(quick.url)
    quick.pair("0B0B02BADE", "0A04A10001")  # V002's badge with V001's control card: BORROWED_CARD
    tap = quick.wait_taps(1)[-1]
    assert "BORROWED_CARD" in tap.payload.flags
    page.wait_for_selector(f"#now[data-seq='{tap.seq}'][data-held='1']")
    time.sleep(2.5)  # well past idle_after_s (1 s): still there
    assert _now(page).get_attribute("data-seq") == str(tap.seq)
    assert _now(page).locator(".action").inner_text() == "Não libere a entrada. Chame o fiscal."
    assert page.request.post(quick.url + "ack?seq=999").status == 409  # not the read held
    assert page.request.post(quick.url + "ack?seq=x").status == 400
    assert page.request.post(quick.url + f"ack?seq={tap.seq}", headers={"Origin": "http://evil.example"}).status == 403
    page.get_by_role("button", name="Ciente").click()  # the touch screen
    page.wait_for_selector("#now[data-state='idle']")
    assert page.locator(f"#history tr.read[data-seq='{tap.seq}']").count() == 1
    assert page.request.post(quick.url + f"ack?seq={tap.seq}").status == 409  # once


def test_a_held_denial_gives_way_to_the_next_read(quick, page) -> None:
    page.goto(quick.url)
    quick.pair("0B0B03BADE", "0A04A10003")  # V003 dispatched to the other ship: retain (G6)
    held = quick.wait_taps(1)[-1]
    page.wait_for_selector(f"#now[data-seq='{held.seq}'][data-held='1']")
    record_main(page)  # the next read is shown 1 s (idle_after_s): noted as it is pushed
    quick.pair("0B0B01BADE", "0A04A10001")
    nxt = quick.wait_taps(2)[-1]
    shown = main_shown(page, nxt.seq)
    assert shown[0]["held"] is None and shown[-1]["state"] == "idle", shown


def test_an_unplugged_reader_is_leitor_sem_sinal_until_it_is_back(quick, page) -> None:
    page.goto(quick.url)
    page.wait_for_selector("#now[data-state='idle']")
    assert page.locator(".st-reader").count() == 0
    quick.ptys["badge"].unplug()  # the pty closes: the driver's reads fail, the device is gone
    page.wait_for_selector("#now[data-state='reader-fault']", timeout=60_000)
    fault = _now(page)
    assert fault.locator(".words").inner_text() == "LEITOR SEM SINAL"
    reader = fault.locator(".reader")
    assert reader.get_attribute("data-reader") == "r-badge"
    assert reader.inner_text().startswith("Leitor da chapa (r-badge) sem sinal desde ")
    assert page.locator(".st-reader[data-reader='r-badge']").inner_text() == "Leitor r-badge: SEM SINAL"
    state = page.request.get(quick.url + "state.json").json()
    assert {r["reader_id"]: r["state"] for r in state["readers"]} == {"r-control": "ok", "r-badge": "fault"}
    quick.ptys["badge"].plug()  # back: the driver reopens it by itself
    page.wait_for_selector("#now[data-state='idle']", timeout=60_000)
    assert page.locator(".st-reader").count() == 0
    quick.pair("0B0B01BADE", "0A04A10001")  # and it reads again
    assert quick.wait_taps(1)[-1].payload.decision == "admit"


def _px(page, selector: str) -> float:
    """The font size in px of ``selector`` now (one call: the status bar is swapped every second)."""
    return page.evaluate("s => parseFloat(getComputedStyle(document.querySelector(s)).fontSize)", selector)


def _box(page, sel: str) -> dict:
    """``sel``'s bounding box; the status bar is swapped in every second (SSE, outerHTML), so a box
    read just as it is replaced is None: read it again."""
    for _ in range(50):
        box = page.locator(sel).bounding_box()
        if box is not None:
            return box
        page.wait_for_timeout(100)
    raise AssertionError(f"{sel} has no box")


def test_at_800x480_the_screen_is_readable_from_2_m_and_axe_finds_nothing(gate, kiosk) -> None:
    page = kiosk
    page.goto(gate.url)
    page.wait_for_selector("#now[data-state='idle']")
    assert page.locator("main").count() == 1 and page.locator("h1").count() == 1
    assert axe_violations(page) == [], describe(axe_violations(page))
    for sel in ("#st-broker", "#st-outbox", "#st-copies", "#st-clock"):
        assert _px(page, sel) >= 20, sel
    gate.pair("0B0B03BADE", "0A04A10003")  # a denial: the reason, the action and "Ciente"
    tap = gate.wait_taps(1)[-1]
    page.wait_for_selector(f"#now[data-seq='{tap.seq}']")
    assert _px(page, "#now .reason") >= 32
    page.locator("#status").wait_for(state="visible")
    for sel in ("#now .reason", "#now .action", "#ack"):  # nothing cut off at the bottom of the panel
        page.locator(sel).wait_for(state="visible")  # (a bounding box is None until it is shown)
        box = _box(page, sel)
        assert box["y"] + box["height"] <= _box(page, "#status")["y"] + 1, sel
    assert axe_violations(page) == [], describe(axe_violations(page))
    gate.tap("0F1F5CA001", "control")  # the union inspector's own card
    insp = gate.wait_taps(2)[-1]
    page.wait_for_selector(f"#now[data-seq='{insp.seq}']")
    assert insp.payload.registration == "F001"  # not on the demo's roster: named by his office
    assert page.locator("#now .person .name").inner_text() == "Fiscal do Sindicato"
    assert "Matrícula F001" in page.locator("#now .person").inner_text()
    countdown = page.locator("#inspector-countdown")
    countdown.wait_for()
    line = countdown.evaluate("e => parseFloat(getComputedStyle(e).lineHeight) || parseFloat(getComputedStyle(e).fontSize) * 1.3")
    assert countdown.bounding_box()["height"] < 1.6 * line  # one line, never wrapped
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 800
    assert axe_violations(page) == [], describe(axe_violations(page))


def test_ciente_answers_a_touch_at_the_moment_the_held_denial_is_pushed(quick, page) -> None:
    """The watchman touches "Ciente" the moment it shows (a script clicks it as soon as the push
    puts it in the page, before any timer runs): the touch is not lost (htmx wires the button
    when the push is swapped in, not at its settle 20 ms later)."""
    page.goto(quick.url)
    page.wait_for_selector("#now[data-state='idle']")
    page.evaluate("""() => new MutationObserver(() => {
        const ack = document.getElementById('ack');
        if (ack && !ack.dataset.touched) { ack.dataset.touched = '1'; ack.click(); }
    }).observe(document.getElementById('now-wrap'), {childList: true, subtree: true})""")
    quick.pair("0B0B02BADE", "0A04A10001")  # BORROWED_CARD: held until "Ciente"
    tap = quick.wait_taps(1)[-1]
    assert "BORROWED_CARD" in tap.payload.flags
    page.wait_for_selector(f"#history tr.read[data-seq='{tap.seq}']", state="attached")
    page.wait_for_selector("#now[data-state='idle']", timeout=60_000)
    state = page.request.get(quick.url + "state.json").json()
    assert page.request.post(quick.url + f"ack?seq={tap.seq}").status == 409, state  # acknowledged once
