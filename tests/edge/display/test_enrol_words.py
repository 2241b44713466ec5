"""A card read in the office's enrol mode (rules ``G1`` + ``ENROL``, issue 34) reads in words on the
watchman's screen, in a real browser at the kiosk's 800x480: "cartão em cadastro" on the main area
and in the list of last reads, "card being enrolled" in English; the code stays in ``data-rule``
(issue 33: the history showed ``ENROL``). The journal is written by the real ``edge.journal`` as
the gate writes it; the screen is the real ``portgate edge display`` process."""

from __future__ import annotations

import datetime as dt

import pytest

from edge.journal import Journal
from edge.rules.model import Now
from testkit.display import GateWithScreen
from tests.pt_words import VISIBLE_TEXT, english_in
from wire.events import TapPayload

AT = dt.datetime(2026, 3, 15, 4, 20, tzinfo=dt.UTC)
MESSAGE = "NEGADO — cartão em cadastro: entrada não liberada; aguarde a confirmação do escritório. [G1, ENROL]"


def _enrol_tap(uid: str) -> TapPayload:
    return TapPayload(uid=uid, reader_id="r-control", reader_kind="control", decision="deny",
                      rules_failed=["G1", "ENROL"], message=MESSAGE)


@pytest.fixture
def screen(tmp_path):
    g = GateWithScreen(tmp_path / "gate", idle_after_s=600)
    g.state.mkdir(parents=True, exist_ok=True)
    journal = Journal(g.state / "journal.db", port="santos", gate_id="g-aurora", key=b"k" * 16, boot_id="b")
    journal.append(_enrol_tap("04A1B2C3D4E5F6"), now=Now(wall=AT, mono_ns=1, clock_trusted=True))
    g.start_display()  # the first read is in the history (shown again at start), the main area idle
    yield g, journal
    journal.close()
    g.stop()


def test_an_enrol_refusal_reads_in_words_on_the_main_area_and_in_the_history(screen, browser) -> None:
    g, journal = screen
    page = browser.new_page(viewport={"width": 800, "height": 480}, locale="pt-BR")
    try:
        page.goto(g.url)
        page.wait_for_selector("#now[data-seq='0']")  # no read on the main area (no gate runs: "PORTALÓ PARADO")
        first = page.locator("#history tr.read").first
        assert first.locator("[data-rule='ENROL']").inner_text() == "cartão em cadastro"
        assert "ENROL" not in first.inner_text() and "G1" in first.inner_text()
        ev = journal.append(_enrol_tap("04A1B2C3D4E5F7"),
                            now=Now(wall=AT + dt.timedelta(seconds=5), mono_ns=2, clock_trusted=True))
        page.wait_for_selector(f"#now[data-seq='{ev.seq}'][data-outcome='deny']", timeout=60_000)
        rules = page.locator("#now .rules")
        assert rules.locator("[data-rule='ENROL']").inner_text() == "cartão em cadastro"
        assert rules.locator("[data-rule='G1']").inner_text().startswith("G1: ")
        rows = page.locator("#history tr.read")
        assert rows.count() == 2 and all("ENROL" not in t for t in rows.all_inner_texts())
        assert english_in(page.evaluate(VISIBLE_TEXT)) == []
        page.goto(g.url + "?lang=en")
        page.wait_for_selector("#now-wrap")
        assert page.locator("#history tr.read").first.locator("[data-rule='ENROL']").inner_text() == \
            "card being enrolled"
        assert "ENROL" not in page.locator("#history").inner_text()
        assert "ENROL" not in page.locator("#now .rules").inner_text()  # the journaled reason keeps its [G1, ENROL]
    finally:
        page.close()
