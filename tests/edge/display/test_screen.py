"""The watchman's screen in a real browser, following a real gate process (serial readers on ptys)."""

from __future__ import annotations

import json
import time

from edge.sync.photos import sha256_hex
from tests.edge.display.conftest import PHOTOS

GREEN, RED = "rgb(10, 125, 44)", "rgb(179, 18, 27)"


def _wait_current(page, seq: int, timeout_ms: int = 10_000) -> None:
    page.wait_for_selector(f"#now[data-seq='{seq}']", timeout=timeout_ms)


def _photo_bytes(page, person) -> bytes:
    src = person.locator("img.photo").get_attribute("src")
    response = page.request.get(page.url.split("/?")[0].rstrip("/") + src)
    assert response.ok, src
    return response.body()


def test_a_tap_shows_name_photo_colour_and_duty(gate, page) -> None:
    page.goto(gate.url)
    page.wait_for_selector("#now.idle")
    gate.pair("0B0B01BADE", "0A04A10001")
    tap = gate.wait_taps(1)[-1]
    assert tap.payload.decision == "admit", tap.payload.message
    _wait_current(page, tap.seq)  # pushed over SSE: no reload
    now = page.locator("#now")
    assert now.locator(".words").inner_text() == "ENTRADA LIBERADA"
    assert now.evaluate("e => getComputedStyle(e).backgroundColor") == GREEN
    person = now.locator(".person")
    assert person.count() == 1
    assert person.locator(".name").inner_text() == "Ana Lima"
    assert "V001" in person.inner_text() and "vigia" in person.inner_text()
    assert _photo_bytes(page, person) == PHOTOS["V001"]
    duty = now.locator(".duty").inner_text()
    assert "MSC Aurora" in duty and "01-07" in duty and "vigia" in duty
    assert "portaló" in duty and "portalo" not in duty, duty  # the post's name (post.portalo), not its code
    page.goto(gate.url + "?lang=en")
    _wait_current(page, tap.seq)
    duty = page.locator("#now .duty").inner_text()
    assert "gangway" in duty and "watchman" in duty and "portalo" not in duty, duty
    assert page.locator("#history tr.read").count() == 1
    assert page.locator("#st-broker").get_attribute("data-state") == "standalone"


def test_a_denial_shows_the_reason_rules_and_what_to_do(gate, page) -> None:
    page.goto(gate.url)
    gate.pair("0B0B03BADE", "0A04A10003")  # V003 is dispatched to the other ship (g-nordic)
    tap = gate.wait_taps(1)[-1]
    assert tap.payload.decision == "deny"
    _wait_current(page, tap.seq)
    now = page.locator("#now")
    assert now.locator(".words").inner_text() == "ENTRADA NEGADA"
    assert now.evaluate("e => getComputedStyle(e).backgroundColor") == RED
    assert tap.payload.message == "NEGADO — " + now.locator(".reason").inner_text()  # the journaled pt-BR text
    assert now.locator(".reason").inner_text() == (
        "não escalado para este navio neste horário; o posto portaló (01-07) está escalado para a matrícula V001. "
        "Chame o fiscal. [G6]")
    shown_rules = [r.get_attribute("data-rule") for r in now.locator(".rule").all()]
    assert shown_rules == tap.payload.rules_failed and "G6" in shown_rules
    assert now.locator(".action").inner_text() == "Não libere a entrada. Chame o fiscal."
    assert _photo_bytes(page, now.locator(".person")) == PHOTOS["V003"]
    page.goto(gate.url + "?lang=en")
    _wait_current(page, tap.seq)
    assert page.locator("#now .words").inner_text() == "DENIED"
    assert page.locator("#now .action").inner_text() == "Do not let the worker board. Call the inspector."
    assert "G6: not dispatched to this ship" in page.locator("#now .rules").inner_text()
    # the decision's sentence in the screen's language too (the journal keeps pt-BR's)
    assert page.locator("#now .reason").inner_text() == (
        "not dispatched to this ship at this time; post gangway (01-07) is dispatched to registration V001. "
        "Call the inspector. [G6]")


def test_a_borrowed_card_shows_both_workers_side_by_side(gate, page) -> None:
    page.goto(gate.url)
    gate.pair("0B0B02BADE", "0A04A10001")  # V002's badge with V001's control card
    tap = gate.wait_taps(1)[-1]
    assert "BORROWED_CARD" in tap.payload.flags and "G4" in tap.payload.rules_failed
    _wait_current(page, tap.seq)
    people = page.locator("#now .person")
    assert people.count() == 2
    holder, badge = people.nth(0), people.nth(1)
    assert holder.locator(".name").inner_text() == "Ana Lima"
    assert badge.locator(".name").inner_text() == "Bruno Santos"
    assert holder.get_attribute("data-registration") == "V001"
    assert badge.get_attribute("data-registration") == "V002"
    assert _photo_bytes(page, holder) == PHOTOS["V001"]
    assert _photo_bytes(page, badge) == PHOTOS["V002"]
    box_a, box_b = holder.bounding_box(), badge.bounding_box()
    assert abs(box_a["y"] - box_b["y"]) < 5 and box_b["x"] > box_a["x"] + box_a["width"] - 1  # side by side
    assert page.locator("#now .action").inner_text() == "Não libere a entrada. Chame o fiscal."


def test_a_worker_without_photo_gets_the_placeholder_and_other_photos_are_not_served(gate, page) -> None:
    page.goto(gate.url)
    gate.pair("0B0B04BADE", "0A04A10004")  # V004: no photo on disk
    tap = gate.wait_taps(1)[-1]
    _wait_current(page, tap.seq)
    assert page.locator("#now img.photo").get_attribute("src") == "/static/placeholder.svg"
    # V001's photo is on disk but V001 was not read: the screen does not serve it
    other = page.request.get(gate.url + "photo/" + sha256_hex(PHOTOS["V001"]))
    assert other.status == 404
    assert page.request.get(gate.url + "photo/..%2F..%2Fgate.key").status == 404


def test_killing_the_screen_changes_nothing_at_the_gate_and_a_restart_shows_the_last_reads(gate, page) -> None:
    taps = [("0B0B01BADE", "0A04A10001"), ("0B0B02BADE", "0A04A10002"), ("0B0B04BADE", "0A04A10004"),
            ("0B0B05BADE", "0A04A10005")]
    page.goto(gate.url)
    for i, (badge, card) in enumerate(taps):
        if i == 1:
            gate.kill_display()  # SIGKILL in the middle of the taps
        gate.pair(badge, card)
        gate.wait_taps(i + 1)
    events = gate.wait_taps(len(taps))
    assert gate.gate.poll() is None  # the gate kept running and deciding
    rows = gate.journal_rows()
    assert [r[0] for r in rows] == list(range(1, len(rows) + 1))  # gapless
    shown = [json.loads(line) for line in (gate.root / "shown.jsonl").read_text().splitlines()]
    assert len(shown) == len(taps)  # every read shown on the gate's indicator
    assert [e.payload.registration for e in events] == ["V001", "V002", "V004", "V005"]
    before = gate.journal_rows()
    time.sleep(1.0)
    assert gate.journal_rows() == before  # the journal is the gate's alone: nothing rewritten
    gate.start_display()
    page.goto(gate.url)
    page.wait_for_selector(f"#history tr.read[data-seq='{events[-1].seq}']")
    assert [int(r.get_attribute("data-seq")) for r in page.locator("#history tr.read").all()] == \
        [e.seq for e in reversed(events)]
    assert "Elisa Costa" in page.locator("#history tr.read").first.inner_text()
    assert page.locator("#now").get_attribute("data-state") == "idle"  # reads from before the restart: history only


def test_inspector_mode_is_amber_with_a_countdown_until_the_confiscation(gate, page) -> None:
    page.goto(gate.url)
    gate.tap("0F1F5CA001", "control")  # the union inspector's card
    tap = gate.wait_taps(1)[-1]
    assert tap.payload.decision == "inspector"
    _wait_current(page, tap.seq)
    assert page.locator("#now").evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(199, 120, 0)"
    assert page.locator("#now .words").inner_text() == "MODO FISCAL"
    page.wait_for_selector("#inspector-countdown")
    left = int(page.locator("#inspector-countdown").get_attribute("data-left"))
    assert 0 < left <= 60  # g10.inspector_mode_s of the default rulebook
    page.wait_for_function(f"document.querySelector('#inspector-countdown') && "
                           f"+document.querySelector('#inspector-countdown').dataset.left < {left}")
    gate.tap("0A04A10002", "control")  # the card to confiscate
    tap = gate.wait_taps(2)[-1]
    assert "CONFISCATE" in tap.payload.flags
    _wait_current(page, tap.seq)
    assert page.locator("#now .action").inner_text() == "Cartão apreendido: entregue-o ao fiscal."
    page.wait_for_selector("#inspector-countdown", state="detached")


def test_the_screen_opens_the_gate_files_read_only_and_never_holds_the_write_lock(gate, page) -> None:
    import os
    import sqlite3

    page.goto(gate.url)
    gate.pair("0B0B01BADE", "0A04A10001")
    tap = gate.wait_taps(1)[-1]
    _wait_current(page, tap.seq)
    pid = gate.display.pid
    opened = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.endswith(".db"):  # (SQLite opens a -wal file read-write; query_only keeps it unwritten)
            flags = int(open(f"/proc/{pid}/fdinfo/{fd}").read().split("flags:")[1].split()[0], 8)
            opened[os.path.basename(target)] = flags & os.O_ACCMODE
    assert {"journal.db", "store.db"} <= set(opened)
    assert all(mode == os.O_RDONLY for mode in opened.values()), opened
    db = sqlite3.connect(gate.state / "journal.db", timeout=0, isolation_level=None)
    try:
        for _ in range(20):  # the screen polls every 20 ms: the write lock is always free
            db.execute("BEGIN IMMEDIATE")
            db.execute("ROLLBACK")
            time.sleep(0.01)
    finally:
        db.close()


def test_a_screen_started_before_its_gate_waits_and_then_follows(tmp_path, page) -> None:
    from testkit.display import GateWithScreen

    gate = GateWithScreen(tmp_path / "late", idle_after_s=600)  # the read is looked at after its push
    try:
        gate.start_display()  # no gate has ever run: no journal, no store
        page.goto(gate.url)
        # no gate runs yet: the main area says so instead of inviting a tap nobody records
        assert page.locator("#now[data-state='gate-stopped'] .words").inner_text() == "PORTALÓ PARADO"
        assert page.locator("#st-journal").count() == 1
        gate.start_gate()
        gate.pair("0B0B01BADE", "0A04A10001")
        tap = gate.wait_taps(1)[-1]
        _wait_current(page, tap.seq)
        assert page.locator("#now .person .name").inner_text() == "Ana Lima"
        assert "MSC Aurora (9300001)" in page.locator("#now").inner_text()
        page.wait_for_selector("#st-journal", state="detached")
    finally:
        gate.stop()


def test_an_open_kiosk_page_reconnects_by_itself_when_the_screen_restarts(gate, page) -> None:
    port = int(gate.url.rsplit(":", 1)[1].strip("/"))
    page.goto(gate.url)
    gate.pair("0B0B01BADE", "0A04A10001")
    first = gate.wait_taps(1)[-1]
    _wait_current(page, first.seq)
    gate.kill_display()
    gate.pair("0B0B02BADE", "0A04A10002")  # decided while the screen is down
    second = gate.wait_taps(2)[-1]
    gate.start_display(port=port)  # the same address, as under systemd
    # no reload: the SSE extension reconnects (a read from before the restart is history only)
    page.wait_for_selector(f"#history tr.read[data-seq='{second.seq}']", timeout=30_000)
    assert "Bruno Santos" in page.locator("#history tr.read").first.inner_text()


def test_a_photo_whose_bytes_no_longer_match_its_hash_is_never_shown(gate, page) -> None:
    page.goto(gate.url)
    photos = gate.state / "photos"
    v001 = photos / sha256_hex(PHOTOS["V001"])
    v001.write_bytes(PHOTOS["V003"])  # changed on disk before the read: someone else's picture
    gate.pair("0B0B01BADE", "0A04A10001")
    _wait_current(page, gate.wait_taps(1)[-1].seq)
    assert page.locator("#now img.photo").get_attribute("src") == "/static/placeholder.svg"
    gate.pair("0B0B02BADE", "0A04A10002")  # V002's photo is intact when read...
    _wait_current(page, gate.wait_taps(2)[-1].seq)
    src = page.locator("#now img.photo").get_attribute("src")
    assert src == "/photo/" + sha256_hex(PHOTOS["V002"])
    (photos / sha256_hex(PHOTOS["V002"])).write_bytes(b"\xff\xd8 tampered")  # ...and changed after
    body = page.request.get(gate.url + src.lstrip("/"))
    assert body.ok and body.body() != b"\xff\xd8 tampered"
    assert body.headers["content-type"].startswith("image/svg+xml")  # the placeholder


def test_on_a_phone_held_upright_the_words_name_and_reason_fit_the_width(gate, browser) -> None:
    """A supervisor may open the screen on a phone (390 x 844): nothing is cut at the right edge
    and the page does not scroll sideways; the recent reads move below the current one."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        page.goto(gate.url)
        gate.pair("0B0B03BADE", "0A04A10003")  # a denial: words, reason, rules and action
        tap = gate.wait_taps(1)[-1]
        _wait_current(page, tap.seq)
        cut = page.evaluate("""() => [...document.querySelectorAll('#now .words, #now .name, #now .reason, #now .action')]
            .filter(el => el.scrollWidth > el.clientWidth + 1 || el.getBoundingClientRect().right > 391)
            .map(el => el.className + ': ' + el.textContent.trim())""")
        assert cut == []
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        now_box, history_box = (page.locator(sel).bounding_box() for sel in ("#now", "#history"))
        assert history_box["y"] >= now_box["y"] + now_box["height"] - 1
    finally:
        page.close()
