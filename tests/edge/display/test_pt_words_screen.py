"""The watchman's screen in pt-BR shows no English word of ``tests.pt_words.ENGLISH`` and no raw flag
code: idle, after an admit, a denial and a borrowed card (issue 33 item 9), in a real browser at the
kiosk's 800x480, following a real gate process."""

from __future__ import annotations

from tests.pt_words import VISIBLE_TEXT, english_in


def test_the_screen_reads_in_portuguese_idle_and_after_each_kind_of_read(gate, browser) -> None:
    page = browser.new_page(viewport={"width": 800, "height": 480}, locale="pt-BR")
    try:
        page.goto(gate.url)
        page.wait_for_selector("#now.idle")
        found = {"idle": english_in(page.evaluate(VISIBLE_TEXT))}
        for what, (badge, card) in {"admit": ("0B0B01BADE", "0A04A10001"),
                                    "deny (G6)": ("0B0B03BADE", "0A04A10003"),
                                    "borrowed card (G4)": ("0B0B02BADE", "0A04A10001")}.items():
            gate.pair(badge, card)
            tap = gate.wait_taps(len(found))[-1]
            page.wait_for_selector(f"#now[data-seq='{tap.seq}']", timeout=60_000)
            found[what] = english_in(page.evaluate(VISIBLE_TEXT))
        assert found == {k: [] for k in found}, found
    finally:
        page.close()
