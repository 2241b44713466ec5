"""The demo's clocks agree (issue 34 item 15): the case the inspector's confiscation opened at
g-aurora and V008's card history carry the demo day's date (15/03/2026, the event's time), not the
date of the machine the ingest ran on; in a real browser on the session's demo day."""

from __future__ import annotations

import datetime as dt
import re

from app.demo.web import DEMO_PASSWORD, DEMO_USER, OFFICE_USER
from testkit.browser import launch_chromium

DEMO_DATE = "15/03/2026"
DATES = re.compile(r"\b\d\d/\d\d/\d{4}\b")


def _logged_in(browser, url: str, user: str):
    page = browser.new_page()
    page.set_default_timeout(20_000)
    page.goto(url + "login")
    page.get_by_label("Usuário").fill(user)
    page.get_by_label("Senha").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(url)
    return page


def test_the_demo_case_page_and_card_history_show_the_demo_day_s_dates(demo_day):
    url = demo_day.url
    today = dt.date.today().strftime("%d/%m/%Y")
    assert today != DEMO_DATE  # else this test could not tell the clocks apart
    with launch_chromium() as browser:
        inspector = _logged_in(browser, url, DEMO_USER)
        inspector.goto(url + "cases")
        inspector.locator('a[href^="/cases/"]').first.click()
        inspector.locator("#opened").wait_for()
        opened = inspector.locator("#opened").inner_text()
        assert DEMO_DATE in opened and today not in opened, opened
        charge = inspector.locator('#timeline li[data-step="charge"]').inner_text()
        assert DEMO_DATE in charge and today not in charge, charge
        assert "V008" in inspector.locator("h1").inner_text()

        office = _logged_in(browser, url, OFFICE_USER)
        office.goto(url + "workers/V008")
        history = office.locator('#cards tr[data-uid="0A04A10008"]').inner_text()
        assert "apreendido" in history, history
        assert set(DATES.findall(history)) == {DEMO_DATE}, history  # issued and confiscated that day


def test_the_live_page_s_gate_cards_say_since_by_the_demo_s_clock(demo_day):
    """Each gate card's "desde" (the gate's status time: the gate's clock, scripted in the demo)
    and a reader's "desde"/"última leitura" carry the demo's scripted dates (the day, 15/03, or the
    night's end, 16/03: a gate stopped after the 19-01 period), not the machine's date."""
    url = demo_day.url
    today = dt.date.today().strftime("%d/%m")
    assert today != DEMO_DATE[:5]
    with launch_chromium() as browser:
        office = _logged_in(browser, url, OFFICE_USER)
        office.locator("article.gate").first.wait_for()
        cards = office.locator("article.gate[data-state='online'], article.gate[data-state='offline']").all()
        assert cards, office.locator("#gates-h").inner_text()
        for card in cards:
            since = card.locator("dl dd").first.inner_text()
            assert since[:5] in ("15/03", "16/03") and today not in since, (card.get_attribute("data-gate"), since)
            readers = card.locator("dd.readers")
            if readers.count():
                text = readers.inner_text()
                assert today not in text, text


def test_the_demo_enrols_its_gates_keys_on_the_demo_day(demo_day):
    """The gates' key enrolment records (``central add-gate --public-key``'s, countersigned) are
    dated at the start of the scripted day, before its first read, not by the machine's clock."""
    import json

    records = sorted((demo_day.run_dir / "keys" / "enrolments").glob("*.json"))
    assert len(records) >= 2, records
    for path in records:
        record = json.loads(path.read_text(encoding="utf-8"))
        body = json.loads(record["body"])
        at = dt.datetime.fromisoformat(body["enrolled_at"].replace("Z", "+00:00"))
        assert at == dt.datetime(2026, 3, 15, 3, tzinfo=dt.UTC), (path.name, body["enrolled_at"])  # 00:00 in Santos
        assert record["inspector_sig"], path.name  # countersigned by the demo's union inspector
