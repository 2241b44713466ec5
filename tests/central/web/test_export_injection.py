"""Every export of the office app neutralises formula cells (issue 34 item 12; CWE-1236).

The office app's export routes are found by walking ``app.routes`` (a path ending in ``.csv``, an
endpoint whose code answers ``text/csv``, and every GET page without path parameters asked for
real: one answering a spreadsheet type is an export too); each must be listed in ``EXPORTS`` below
with the requests that read it, so a new export route fails here until it is covered. On a ledger
whose worker names, tap message, flag comment, alarm acknowledgement and reader detail, ship
names, operator, coverage ship and audit subject begin with ``=``, ``+``, ``-``, ``@``, TAB or CR,
every cell of every export must be neutralised by ``portgate.csvout`` (a leading apostrophe) unless
it is a plain decimal number, which stays a number: the payroll's negative amount among them."""

from __future__ import annotations

import csv
import datetime as dt
import inspect
import io
import re
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session
from starlette.routing import Route

from central.calls import acks
from central.calls.schema import coverage_alarms
from central.calls.service import ShipCall, save_call
from central.ledger.schema import reader_alarms
from central.registry import flag_reviews
from central.registry.changes import audit
from central.registry.schema import workers
from central.rotation.engine import Requisition
from central.rotation.service import dispatch_day
from portgate.csvout import FORMULA_START, PLAIN_NUMBER
from portgate.records import Berth, Voyage
from tests.central.web.conftest import engine_of, logged_in
from tests.central.web.events import add_flag_event
from tests.central.web.paydata import raise_first_line

T0 = dt.datetime(2026, 3, 10, 12, 0, tzinfo=dt.UTC)
DAY = "2026-03-10"
MONTH = {"month": "2026-03"}
# one hostile value per formula start; each must come out with a leading apostrophe
HOSTILE = {"=": '=HYPERLINK("http://x","y")', "+": "+SUM(1,2)", "-": "-2+3+cmd|' /C calc'!A0",
           "@": "@SUM(A1:A9)", "\t": "\t=1+2", "\r": "\r=1+2"}
PREFIXES = list(HOSTILE)
PAY = {"from": "2026-03-01", "to": "2026-03-31"}
READS = {"from": "2026-03-01", "to": "2026-04-05"}

# route path -> [(role, URL, params, whether the ledger's hostile values reach this file)]
EXPORTS: dict[str, list[tuple[str, str, dict, bool]]] = {
    "/flags.csv": [("inspector", "/flags.csv", {}, True)],
    "/pay/export.csv": [("office", "/pay/export.csv", PAY, True)],
    "/reads.csv": [("inspector", "/reads.csv", READS, True)],
    "/audit.csv": [("auditor", "/audit.csv", READS, True)],
    "/alarms.csv": [("office", "/alarms.csv", {}, True)],
    "/escala.csv": [("office", "/escala.csv", {"date": DAY}, True)],
    "/escala/export/{by:str}": [("office", "/escala/export/operator", {"date": DAY, "name": HOSTILE["="]}, True),
                                ("office", "/escala/export/ship", {"date": DAY, "name": "9300001"}, True)],
    "/reports/{name:str}.csv": [
        ("auditor", "/reports/coverage.csv", MONTH, True),
        ("auditor", "/reports/fairness.csv", MONTH, False),  # registrations and counts: no typed text
        ("auditor", "/reports/sizing.csv", MONTH, False),  # months and numbers only
        ("auditor", "/reports/hours.csv", MONTH, False),
        ("auditor", "/reports/flags.csv", MONTH, False),  # ISO weeks and flag codes
    ],
}
SPREADSHEET_TYPES = ("text/csv", "text/tab-separated-values", "application/vnd.ms-excel",
                     "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                     "application/vnd.oasis.opendocument.spreadsheet")


def _source(route: Route) -> str:
    return inspect.getsource(inspect.unwrap(route.endpoint))


def export_routes(app) -> set[str]:
    """The paths of the routes that look like exports in the code: ``.csv`` paths and endpoints
    whose code names a spreadsheet media type."""
    return {r.path for r in app.routes if isinstance(r, Route) and "GET" in (r.methods or ())
            and (r.path.endswith((".csv", ".tsv", ".xlsx", ".ods")) or any(t in _source(r) for t in SPREADSHEET_TYPES))}


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """The web suite's ``engine``; a test that uses ``hostile`` starts with the demo registry and
    paydata.py's March 2026 paid in it (a copy of a ledger the session filled once:
    tests/central/web/conftest.py's FILLS, issue 32)."""
    yield from engine_of(request, tmp_path, ledgers, "demo_pay" if "hostile" in request.fixturenames else None)


@pytest.fixture
def hostile(engine, users, clock):
    """A ledger whose every typed text the exports carry starts with a formula character."""
    raise_first_line(engine, "V001", cents=-10_000_000)  # a line of R$ -99.9xx,xx: a plain negative amount
    event = add_flag_event(engine, flags=["BORROWED_CARD"], message=HOSTILE["="],
                           at=dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC))
    with Session(engine) as s, s.begin():
        req = Requisition(ref="r1", date=dt.date(2026, 3, 10), period="07-13", operator=HOSTILE["="], ship="9300001",
                          ship_name=HOSTILE["-"], voyage=Voyage.LONG_HAUL, berth=Berth.BERTHED, gate_id="g1",
                          post="portalo", function="vigia", workers=6, category="vigia")
        dispatch_day(s, dt.date(2026, 3, 10), [req], actor="t", now=T0)
        call = save_call(s, ShipCall("9300009", HOSTILE["@"], "long_haul", "berthed", "g9",
                                     dt.datetime(2026, 3, 1, tzinfo=dt.UTC), None), actor="t", now=T0)
        alarm = s.execute(coverage_alarms.insert().values(
            call_id=call, ship=HOSTILE["+"], gate_id="g9", period_start=dt.datetime(2026, 3, 2, 10, tzinfo=dt.UTC),
            raised_at=dt.datetime(2026, 3, 2, 10, 30, tzinfo=dt.UTC), ended_at=None)).inserted_primary_key[0]
        s.execute(reader_alarms.insert().values(gate_id="g2", reader_id="r1", kind="control", detail=HOSTILE["\r"],
                                                raised_at=dt.datetime(2026, 3, 3, 9, tzinfo=dt.UTC)))
        acks.acknowledge(s, "coverage", alarm, HOSTILE["@"], actor="web:office", now=T0)
        flag_reviews.acknowledge(s, event, HOSTILE["+"], actor="web:inspector", now=T0)
        audit(s, actor="t", action="test", subject=HOSTILE["\t"], detail={}, now=T0)
        regs = [r for (r,) in s.execute(workers.select().with_only_columns(workers.c.registration)
                                        .order_by(workers.c.registration))]
        for i, reg in enumerate(regs):  # every worker's name starts with one of the six, in turn
            s.execute(update(workers).where(workers.c.registration == reg)
                      .values(name=PREFIXES[i % len(PREFIXES)] + f"Nome {reg}"))
    return engine


def test_every_export_route_of_the_office_app_is_covered(app):
    """A new ``.csv`` route, or an endpoint answering a spreadsheet type, must be added to ``EXPORTS``."""
    found = export_routes(app)
    assert found == set(EXPORTS), f"export routes not covered here: {sorted(found - set(EXPORTS))}; " \
                                  f"gone: {sorted(set(EXPORTS) - found)}"


def _cells(r) -> list[str]:
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv"), (r.status_code, r.text[:300])
    try:
        return [cell for row in csv.reader(io.StringIO(r.text, newline="")) for cell in row]
    except csv.Error as exc:
        pytest.fail(f"{r.url}: {exc} (a CR in an unquoted cell splits its row)")


def test_no_page_answers_a_spreadsheet_unless_it_is_a_listed_export(app, hostile):
    """Every GET route without path parameters asked for real, as the office and the auditor: one
    answering a spreadsheet type whose path is not in ``EXPORTS`` is an uncovered export."""
    paths = [r.path for r in app.routes if isinstance(r, Route) and "GET" in (r.methods or ())
             and "{" not in r.path and "text/event-stream" not in _source(r)]
    assert len(paths) > 20
    for role in ("office", "auditor"):
        c, _ = logged_in(app, role)
        for path in paths:
            ctype = c.get(path).headers.get("content-type", "")
            assert path in EXPORTS or not ctype.startswith(SPREADSHEET_TYPES), f"{path} answers {ctype}"


def test_every_cell_of_every_export_is_neutralised_and_plain_numbers_stay_numbers(app, hostile):
    seen: set[str] = set()
    for path, reads in EXPORTS.items():
        for role, url, params, reached in reads:
            c, _ = logged_in(app, role)
            cells = _cells(c.get(url, params=params))
            raw = [x for x in cells if x.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(x)]
            assert not raw, f"{url}: cells a spreadsheet would run: {raw[:5]}"
            defused = {x[1] for x in cells if x[:1] == "'" and x[1:2] in FORMULA_START}
            if reached:
                assert defused, f"{url}: none of the ledger's hostile values came out (a vacuous check)"
            seen |= defused
            if path == "/pay/export.csv":
                negative = [x for x in cells if re.fullmatch(r"-[0-9]+\.[0-9]{2}", x)]
                assert negative, "the payroll's negative amount was neutralised or lost"
                assert not any(x == "'" + n for x in cells for n in negative)
    assert seen == set(FORMULA_START), f"formula starts never exercised: {set(FORMULA_START) - seen}"


def test_the_escala_export_of_a_hostile_operator_is_that_operator_s_file(app, hostile):
    """The operator named ``=HYPERLINK(...)`` gets his own file (its rows), neutralised."""
    c, _ = logged_in(app, "office")
    rows = list(csv.reader(io.StringIO(c.get("/escala/export/operator",
                                             params={"date": DAY, "name": HOSTILE["="]}).text)))
    assert len(rows) == 1 + 6 and all("'" + HOSTILE["-"] in row for row in rows[1:])


#: exports that are a data file the office reads back, not a table for a person: the same columns
#: in both languages (the R5 per-operator/per-ship file is an ``escala.csv``, the file
#: ``portgate central publish --escala`` takes; docs/office.md "Data files")
FILE_FORMATS = {"/escala/export/{by:str}"}
#: header cells that are the same word in both languages (an acronym, a sequence number)
NEUTRAL = {"id", "cpf", "pis_nis", "seq"}


def test_every_export_has_pt_br_headers_on_a_pt_br_page_and_english_on_an_english_one(app, hostile):
    """Each read of ``EXPORTS`` asked as a pt-BR session and again after switching to English:
    the header rows differ cell by cell (but for ``NEUTRAL`` words), the pt-BR one holds none of
    the English words a pt-BR page must not show (``tests/pt_words.py``) and the rows below are the
    same; a ``FILE_FORMATS`` export keeps its file's columns in both."""
    from tests.pt_words import english_in

    checked = 0
    for path, reads in EXPORTS.items():
        for role, url, params, _reached in reads:
            c, token = logged_in(app, role)
            pt = list(csv.reader(io.StringIO(c.get(url, params=params).text, newline="")))
            assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
            en = list(csv.reader(io.StringIO(c.get(url, params=params).text, newline="")))
            assert pt and en and len(pt[0]) == len(en[0]), (url, pt[:1], en[:1])
            assert pt[1:] == en[1:] or path == "/pay/export.csv", f"{url}: the rows change with the language"
            if path in FILE_FORMATS:
                assert pt[0] == en[0], url
                continue
            same = [a for a, b in zip(pt[0], en[0], strict=True) if a == b and a not in NEUTRAL]
            assert not same, f"{url}: header cells left in one language: {same}"
            assert english_in(" ".join(pt[0]).replace("_", " ")) == [], f"{url}: English in the pt-BR header {pt[0]}"
            checked += 1
    assert checked == sum(len(v) for p, v in EXPORTS.items() if p not in FILE_FORMATS)


# The csv writers that write no export (a file the office reads back itself, not a spreadsheet):
# the escala form's one requisition, handed to the dispatcher as a requisitions.csv; the demo's
# second port's workers.csv, which the demo imports.
NOT_EXPORTS = {("central/web/routes/escala.py", "csv.DictWriter"), ("app/demo/second_port.py", "csv.writer")}


def test_every_csv_writer_outside_the_web_routes_is_a_safe_one():
    """The command line's exports (pay rows and what-if, billing, the escala files, the
    production and inspection books) do not pass through the routes above: every ``csv.writer`` or
    ``csv.DictWriter`` of ``central/`` and ``app/`` must be ``portgate.csvout``'s, or be listed in
    ``NOT_EXPORTS`` (a file read back by the office itself), so a new raw one fails here."""
    root = Path(__file__).resolve().parents[3]
    raw = set()
    for path in [*(root / "central").rglob("*.py"), *(root / "app").rglob("*.py")]:
        for found in re.findall(r"\bcsv\.(?:writer|DictWriter)\(", path.read_text(encoding="utf-8")):
            raw.add((str(path.relative_to(root)), found[:-1]))
    assert raw == NOT_EXPORTS, f"raw csv writers (use portgate.csvout): {sorted(raw - NOT_EXPORTS)}"
