"""The audit-log page (issue 34 item 12) over the real app (SQLite and PostgreSQL): who changed
what and when, newest first; filtered by who, action (its beginning), subject and port-local
days; pages by keyset; a bad filter is the same form with the error beside its field; only the
office, the auditor and the admin see it."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from sqlalchemy.orm import Session

from central.registry.changes import audit
from tests.central.web.conftest import logged_in

UTC = dt.UTC


@pytest.fixture
def log(engine, users):
    """60 worker edits by web:escritorio on 10/03/2026 (port time), a card lost by web:ana at
    02:30 UTC on 16/03 (23:30 of 15/03 in São Paulo), a ship call by cli:root on 20/03."""
    with Session(engine) as s, s.begin():
        for i in range(60):
            audit(s, actor="web:escritorio", action="worker.edit", subject=f"V{i:03d}", detail={"n": i},
                  now=dt.datetime(2026, 3, 10, 12, 0, i, tzinfo=UTC))
        audit(s, actor="web:ana", action="card.lost", subject="0A04A10003", detail={"uid": "0A04A10003",
              "note": "=HYPERLINK(\"x\")" + "y" * 600}, now=dt.datetime(2026, 3, 16, 2, 30, tzinfo=UTC))
        audit(s, actor="cli:root", action="ship_call.save", subject="9300001", detail={"gate_id": "g-a"},
              now=dt.datetime(2026, 3, 20, 9, 0, tzinfo=UTC))
    return engine


def _rows(page: str) -> list[tuple[str, str]]:
    return re.findall(r'<tr data-id="\d+" data-action="([^"]+)"><td[^>]*>[^<]*</td><td[^>]*>([^<]*)</td>', page)


def test_newest_first_in_pages_of_50_by_keyset(app, log):
    c, _ = logged_in(app, "auditor")
    newest = _rows(c.get("/audit").text)
    assert newest[:2] == [("ship_call.save", "cli:root"), ("card.lost", "ana")]  # the last written first
    first = c.get("/audit", params={"action": "worker."})
    assert first.status_code == 200 and len(_rows(first.text)) == 50
    older = first.text.split('id="audit-older"')[0].rsplit('href="', 1)[1].split('"')[0].replace("&amp;", "&")
    assert "action=worker." in older  # the next page keeps the filters
    second = c.get(older)
    assert [a for a, _ in _rows(second.text)] == ["worker.edit"] * 10
    assert 'id="audit-older"' not in second.text and 'id="audit-newest"' in second.text
    ids = [int(i) for i in re.findall(r'<tr data-id="(\d+)"', first.text + second.text)]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 60  # none twice, none missed


def test_filters_by_who_action_subject_and_port_days(app, log):
    c, _ = logged_in(app, "office")
    assert {a for a, _ in _rows(c.get("/audit", params={"actor": "ANA"}).text)} == {"card.lost"}
    assert len(_rows(c.get("/audit", params={"action": "worker."}).text)) == 50
    assert _rows(c.get("/audit", params={"action": "ship"}).text) == [("ship_call.save", "cli:root")]
    assert _rows(c.get("/audit", params={"subject": "V007"}).text) == [("worker.edit", "escritorio")]
    assert _rows(c.get("/audit", params={"subject": "V00"}).text) == []  # the subject is exact
    # 02:30 UTC of 16/03 is 23:30 of 15/03 in the port: on the 15th, not the 16th
    day15 = c.get("/audit", params={"from": "15/03/2026", "to": "15/03/2026"}).text
    assert _rows(day15) == [("card.lost", "ana")] and "15/03/2026 23:30:00" in day15
    assert _rows(c.get("/audit", params={"from": "2026-03-16", "to": "2026-03-19"}).text) == []
    assert [a for a, _ in _rows(c.get("/audit", params={"from": "11/03/2026", "to": "31/03/2026"}).text)] == [
        "ship_call.save", "card.lost"]
    # a LIKE wildcard typed is a character, not a wildcard
    assert _rows(c.get("/audit", params={"actor": "%"}).text) == []
    assert _rows(c.get("/audit", params={"action": "worker_"}).text) == []


def test_a_long_detail_is_cut_and_shown_as_text(app, log):
    c, _ = logged_in(app, "office")
    page = c.get("/audit", params={"action": "card."}).text
    detail = page.split('class="audit-detail"><code>')[1].split("</code>")[0]
    assert detail.endswith("…") and len(detail) < 520
    assert "=HYPERLINK(\\&#34;x\\&#34;)" in detail or "=HYPERLINK(\\&quot;x\\&quot;)" in detail or "HYPERLINK" in detail
    assert "<a " not in detail


@pytest.mark.parametrize("params, field, says", [
    ({"from": "31/02/2026"}, "from", "não é uma data válida (dd/mm/aaaa)"),
    ({"to": "ontem"}, "to", "não é uma data válida (dd/mm/aaaa)"),
    ({"from": "20/03/2026", "to": "10/03/2026"}, "to", "o período termina antes de começar"),
    ({"from": "01/01/1999"}, "from", "o dia 1999-01-01 está fora de"),
])
def test_a_bad_filter_is_the_same_form_with_the_error_beside_its_field(app, log, params, field, says):
    c, _ = logged_in(app, "office")
    r = c.get("/audit", params={"actor": "ana", **params})
    assert r.status_code == 400
    error = r.text.split(f'id="a-{field}-error" data-field="{field}">')[1].split("</span>")[0]
    assert says in error, error
    assert 'id="a-actor" name="actor" value="ana"' in r.text
    for name, value in params.items():
        assert f'name="{name}" value="{value}"' in r.text
    assert _rows(r.text) == []


def test_only_the_office_the_auditor_and_the_admin_see_it(app, log):
    for role in ("office", "auditor", "admin"):
        c, _ = logged_in(app, role)
        assert c.get("/audit").status_code == 200, role
        assert '<a href="/audit"' in c.get("/").text
    c, _ = logged_in(app, "inspector")
    assert c.get("/audit").status_code == 403
    assert '<a href="/audit"' not in c.get("/").text
