"""The read log and the audit log (issue 34 item 12) over the real app (SQLite and PostgreSQL):
search by date range, gate, worker, card (any UID form) and decision, keyset pages that neither
repeat nor lose a row, the CSV export of everything found with formula cells neutralised, a refused
search kept with its error beside the field, the audit log by user, action and subject, and the
planner using the new indexes (SQLite's EXPLAIN QUERY PLAN)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import uuid
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from central.ledger.store import insert_events
from central.registry.changes import audit
from central.web import logmodel
from tests.central.web.conftest import engine_of, logged_in
from wire.events import Event, TapPayload, sign

Z = ZoneInfo("America/Sao_Paulo")
KEY = b"test-gate-key"
FORMULA = "=HYPERLINK(\"http://x\")"
# (gate, local time on 2026-03-10, uid, registration, decision, message)
TAPS = [
    ("g1", (6, 50), "04A1B2C3", "V001", "admit", ""),
    ("g1", (7, 0), "04A1B2C4", "V002", "admit", ""),
    ("g2", (7, 5), "0A0B0C0D", "V017", "admit", ""),
    ("g2", (7, 6), "DEADBEEF", None, "deny", FORMULA),
    ("g1", (13, 5), "04A1B2C3", "V001", "exit", ""),
    ("g2", (13, 10), "0A0B0C0D", "V017", "exit", ""),
]


def _tap(seq, gate, hm, uid, reg, decision, message, day=dt.date(2026, 3, 10)):
    at = dt.datetime.combine(day, dt.time(*hm), Z).astimezone(dt.UTC)
    return sign(Event(event_id=str(uuid.uuid4()), port="BRSSZ", gate_id=gate, boot_id="b1", seq=seq, occurred_at=at,
                      clock_trusted=True, mono_ns=seq, payload=TapPayload(
                          uid=uid, reader_id="r1", reader_kind="control", decision=decision, registration=reg,
                          message=message, flags=["CARD_UNKNOWN"] if decision == "deny" else [])), KEY)


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """The web suite's ``engine``; a test that uses ``ledger`` starts with the demo registry in it
    (a copy of a ledger the session filled once: tests/central/web/conftest.py's FILLS, issue 32)."""
    yield from engine_of(request, tmp_path, ledgers, "demo_registry" if "ledger" in request.fixturenames else None)


@pytest.fixture
def ledger(engine, users, clock):
    evs = [_tap(i, *t) for i, t in enumerate(TAPS, start=1)]
    evs.append(_tap(99, "g1", (7, 0), "04A1B2C3", "V001", "admit", "", day=dt.date(2026, 3, 11)))
    with engine.begin() as conn:
        insert_events(conn, evs, dt.datetime(2026, 3, 12, tzinfo=dt.UTC))
    return engine


def _q(**kw):
    return logmodel.ReadQuery(dt.date(2026, 3, 10), dt.date(2026, 3, 10), **kw)


@pytest.mark.parametrize("kw, expected", [
    ({}, ["V017/exit", "V001/exit", "-/deny", "V017/admit", "V002/admit", "V001/admit"]),
    ({"gate": "g2"}, ["V017/exit", "-/deny", "V017/admit"]),
    ({"worker": "V001"}, ["V001/exit", "V001/admit"]),
    ({"card": "04a1b2c3"}, ["V001/exit", "V001/admit"]),  # any case
    ({"card": "C3B2A104"}, ["V001/exit", "V001/admit"]),  # read reversed by another reader
    ({"decision": "deny"}, ["-/deny"]),
    ({"gate": "g1", "decision": "admit"}, ["V002/admit", "V001/admit"]),
])
def test_the_read_log_finds_by_gate_worker_card_and_decision_within_the_days(ledger, kw, expected):
    with ledger.connect() as conn:
        rows, nxt = logmodel.read_page(conn, _q(**kw), Z)
    assert [f"{r.registration or '-'}/{r.decision}" for r in rows] == expected and nxt is None
    with ledger.connect() as conn:
        rows, _ = logmodel.read_page(conn, logmodel.ReadQuery(dt.date(2026, 3, 10), dt.date(2026, 3, 11), worker="V001"),
                                     Z)
    assert len(rows) == 3 and rows[0].at.date() == dt.date(2026, 3, 11)  # newest first, the 11th included


def test_keyset_pages_neither_repeat_nor_lose_a_row(ledger):
    seen, after = [], 0
    with ledger.connect() as conn:
        while True:
            rows, nxt = logmodel.read_page(conn, _q(after=after), Z, page_size=4 if not seen else 1)
            seen += [r.id for r in rows]
            if nxt is None:
                break
            after = nxt
    with ledger.connect() as conn:
        everything = [r.id for r in logmodel.read_page(conn, _q(), Z, page_size=100)[0]]
        assert list(logmodel.read_all(conn, _q(), Z, chunk=2)) == logmodel.read_page(conn, _q(), Z, page_size=100)[0]
    assert seen == everything and len(seen) == 6


def test_the_read_log_page_and_its_csv_export(app, ledger):
    c, _ = logged_in(app, "inspector")
    r = c.get("/reads", params={"from": "2026-03-10", "to": "2026-03-10", "gate": "g2"})
    assert r.status_code == 200
    assert re.findall(r'<tr data-id="\d+" data-decision="(\w+)">', r.text) == ["exit", "deny", "admit"]
    assert "Quitéria Almeida" in r.text and "/reads.csv?" in r.text
    r = c.get("/reads.csv", params={"from": "2026-03-10", "to": "2026-03-11"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[0] == ["instante_utc", "hora_local", "portaló", "cartão", "matrícula", "nome", "decisão", "ocorrências",
                       "mensagem"]
    assert len(rows) == 1 + 7
    deny = next(row for row in rows if row[6] == "deny")
    assert deny[8] == "'" + FORMULA and deny[7] == "CARD_UNKNOWN" and deny[1] == "10/03/2026 07:06:00"


@pytest.mark.parametrize("params, field, words", [
    ({"card": "xyz!"}, "card", "o cartão 'xyz!' não é um UID de cartão em nenhuma forma"),
    ({"from": "10/03/2026"}, "from", "não é uma data ISO"),
    ({"decision": "maybe"}, "decision", "a decisão 'maybe' não é uma de admit"),
    ({"from": "2026-03-11", "to": "2026-03-10"}, "to", "termina antes de começar"),
])
def test_a_refused_search_keeps_its_values_and_shows_the_error_beside_the_field(app, ledger, params, field, words):
    c, _ = logged_in(app, "office")
    r = c.get("/reads", params={"gate": "g1"} | params)
    assert r.status_code == 400
    m = re.search(rf'<span class="field-error" id="[^"]+" data-field="{field}">([^<]*)</span>', r.text)
    assert m, r.text[:2000]
    assert words in m.group(1).replace("&#39;", "'"), m.group(1)
    assert 'id="f-gate" name="gate" value="g1"' in r.text
    assert c.get("/reads.csv", params=params).status_code == 400


def test_the_audit_log_by_user_action_and_subject_pages_and_exports(app, ledger, clock):
    now = clock()
    with Session(ledger) as s, s.begin():
        for i in range(7):
            audit(s, actor="web:office" if i % 2 else "web:admin", action="worker.edit" if i < 5 else "pay.mark_paid",
                  subject="T-1" if i < 3 else "T-2", detail={"i": i, "note": FORMULA}, now=now)
    day = now.astimezone(Z).date().isoformat()
    c, _ = logged_in(app, "auditor")
    r = c.get("/audit", params={"from": day, "to": day, "actor": "web:office", "action": "worker."})
    assert r.status_code == 200
    assert re.findall(r'data-action="([\w.]+)"', r.text) == ["worker.edit", "worker.edit"]
    with ledger.connect() as conn:
        q = logmodel.AuditQuery(now.date() - dt.timedelta(days=1), now.date() + dt.timedelta(days=1), subject="T-2")
        first, nxt = logmodel.audit_page(conn, q, Z, page_size=3)
        second, end = logmodel.audit_page(conn, dataclass_after(q, nxt), Z, page_size=3)
    assert [x["detail"]["i"] for x in first + second] == [6, 5, 4, 3] and end is None
    r = c.get("/audit.csv", params={"from": day, "to": day, "subject": "T-1"})
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[0][2:5] == ["quem", "ação", "sobre"] and len(rows) == 4
    assert all(row[5].startswith("{") for row in rows[1:])
    assert c.get("/audit").status_code == 200
    inspector, _ = logged_in(app, "inspector")
    assert inspector.get("/audit").status_code == 403


def dataclass_after(q, after):
    import dataclasses
    return dataclasses.replace(q, after=after)


@pytest.mark.parametrize("kw, index", [
    ({"card": "04A1B2C3"}, "ix_events_tap_uid"),
    ({"gate": "g1"}, "ix_events_gate_time"),
    ({"worker": "V001"}, "ix_events_registration_time"),
    ({}, "ix_events_time"),
])
@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)  # EXPLAIN QUERY PLAN is SQLite's; PostgreSQL's plan: bench/read_log.py
def test_each_search_reads_its_index(ledger, kw, index):
    stmt = logmodel.read_statement(_q(**kw), Z, limit=51)
    compiled = stmt.compile(ledger, compile_kwargs={"literal_binds": True})
    with ledger.connect() as conn:
        plan = " ".join(str(r[-1]) for r in conn.execute(text(f"EXPLAIN QUERY PLAN {compiled}")))
    assert index in plan, plan


def test_a_deep_page_bounds_its_scan_by_the_cursor_not_by_the_period_end(ledger):
    """SQLite bounds an index range by one upper bound per column: with the period's end beside the
    cursor it scanned every newer row (2 s 900,000 rows deep in bench/read_log.py)."""
    cursor = dt.datetime(2026, 3, 10, 12, 0, tzinfo=dt.UTC)
    deep = str(logmodel.read_statement(_q(after=5), Z, limit=51, after_at=cursor.replace(tzinfo=None))
               .compile(ledger, compile_kwargs={"literal_binds": True}))
    first = str(logmodel.read_statement(_q(), Z, limit=51).compile(ledger, compile_kwargs={"literal_binds": True}))
    assert "2026-03-11 03:00:00" in first  # the period's end (local midnight of the 11th)
    assert "2026-03-11 03:00:00" not in deep and "2026-03-10 12:00:00" in deep


def test_a_page_is_one_select_with_each_worker_s_name_beside_the_tap(ledger):
    """The page's rows and their workers' names come in one statement (an outer join), not a
    second query for the names (bench/read_log.py: a page's Python around its SQL); a tap whose
    registration the registry does not know keeps the registration, with no name."""
    from sqlalchemy import event

    with ledger.begin() as conn:
        insert_events(conn, [_tap(200, "g3", (8, 0), "01020304", "X999", "admit", "")],
                      dt.datetime(2026, 3, 12, tzinfo=dt.UTC))
    seen = []

    def count(_conn, _cursor, statement, *_a):
        seen.append(statement)

    event.listen(ledger, "before_cursor_execute", count)
    try:
        with ledger.connect() as conn:
            rows, _ = logmodel.read_page(conn, _q(), Z)
    finally:
        event.remove(ledger, "before_cursor_execute", count)
    assert len(seen) == 1, seen
    by_reg = {r.registration: r.name for r in rows}
    assert by_reg["X999"] == "" and by_reg["V017"] == "Quitéria Almeida" and by_reg[""] == ""
