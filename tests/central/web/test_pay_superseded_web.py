"""A superseded statement is history, not owed (the fresh tester's finding, High): after V017's
shift is corrected and pay is run again, the office's pay page, its payroll CSV, the payslip PDFs
(office and worker), ``pay verify-slip`` and the worker's phone page list and sum only the current
statement (R$ 1.020,60), never the superseded one (R$ 696,60) beside it; "select all payable"
marks the current ones paid, and a superseded id posted is refused before the confirmation with
its clear message; a statement named twice is released (and counted) once. Real app, real ledger (SQLite and PostgreSQL), the real second pay run."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import re
from decimal import Decimal

import pytest
from pypdf import PdfReader
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.config import WebSettings
from central.ledger.tables import statements
from central.pay.payslip import build_slips, code
from central.pay.payslip_pdf import render
from central.pay.slip_codes import issue
from central.pay.statements_read import read_statements
from central.registry.schema import audit_log
from central.web.app import create_app
from central.web.workeraccounts import add_account
from tests.central.web.conftest import SECRET, engine_of, logged_in
from tests.central.web.paydata import CHIEF_SHIFT, supersede_chief
from tests.central.web.test_pay_web import KEY, Q, _cli_verify
from tests.central.web.test_worker_web import WORKER_PASSWORD, worker_client

FIRST, LAST = dt.date(2026, 3, 1), dt.date(2026, 3, 31)


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """A copy of the ledger with the demo registry and paydata.py's March 2026 paid
    (tests/central/web/conftest.py's FILLS ``demo_pay``)."""
    yield from engine_of(request, tmp_path, ledgers, "demo_pay")


@pytest.fixture
def versions(engine, users):
    """V017's statement superseded by a second version (``paydata.supersede_chief``) and an
    account for V017: ``(old id, current id)``."""
    ids = supersede_chief(engine)
    with Session(engine) as s, s.begin():
        add_account(s, "V017", password=WORKER_PASSWORD, actor="t", now=dt.datetime.now(dt.UTC))
    return ids


@pytest.fixture
def app(engine, versions, clock):
    return create_app(engine, WebSettings(), SECRET, now=clock, background=False, slip_key=KEY)


def _current(engine) -> dict[str, int]:
    """``{statement id: total cents}`` of the current statements (what is owed)."""
    with engine.connect() as conn:
        return dict(conn.execute(select(statements.c.statement_id, statements.c.total_cents)
                                 .where(statements.c.superseded_at.is_(None))).all())


def _brl(cents: int) -> str:
    whole, c = divmod(cents, 100)
    return f"R$ {whole:,}".replace(",", ".") + f",{c:02d}"


def test_the_pay_page_lists_and_sums_only_the_current_statements_and_shows_the_old_one_as_history(
        app, engine, versions):
    old, new = versions
    current = _current(engine)
    c, _ = logged_in(app, "office")
    page = c.get("/pay", params=Q).text
    assert f'data-statement="{new}"' in page and f'data-statement="{old}"' not in page
    assert "R$ 1.020,60" in page
    history = page.split(f'data-history="{CHIEF_SHIFT}"')[1].split("</details>")[0]  # under the current one
    assert f'<li data-superseded="{old}">' in history and "<s>R$ 696,60</s> — substituída em" in history
    assert "Versões anteriores, substituídas: não devidas, fora do total (1)" in history
    assert page.replace(history, "").count("R$ 696,60") == 0  # nowhere else: not listed, not summed
    heading = re.search(r"<h2>[^<]*\d+ demonstrativos?[^<]*</h2>", page)
    assert heading and "4 demonstrativos" in heading.group(0) and _brl(sum(current.values())) in heading.group(0)
    row = page.split('<tr data-worker="V017"')[1].split("</tr>")[0]
    assert row.count('class="statement"') == 1 and "R$ 1.020,60" in row


def test_the_payroll_csv_has_only_the_current_statements(app, engine, versions):
    old, new = versions
    c, _ = logged_in(app, "auditor")
    rows = c.get("/pay/export.csv", params=Q).text.splitlines()
    assert not [r for r in rows if f",{old}," in r]
    totals = [r for r in rows if ",TOTAL," in r]
    assert len(totals) == 4 and sorted(r.split(",")[6] for r in totals) == sorted(_current(engine))
    assert [r for r in totals if r.startswith("V017,")][0].split(",")[11] == "1020.60"


def test_the_payslips_print_and_verify_only_the_current_statement(app, engine, tmp_path, capsys):
    c, _ = logged_in(app, "office")
    r = c.get("/pay/slip/V017.pdf", params=Q)
    assert r.status_code == 200
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(r.content)).pages)
    assert "TOTAL DO PERÍODO R$ 1.020,60" in text and "696,60" not in text
    assert text.count("15/03/2026 19-01") == 1
    assert _cli_verify(engine, tmp_path, r.content)[0] == 0
    batch = c.get("/pay/slips.pdf", params=Q)
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(batch.content)).pages)
    assert "696,60" not in text and "R$ 1.020,60" in text
    assert _cli_verify(engine, tmp_path, batch.content, "batch.pdf")[0] == 0


def test_verify_slip_fails_a_slip_that_summed_the_superseded_version(app, engine, tmp_path):
    """A slip printed as before the fix (both of V017's versions, R$ 1.717,20) with a code and a
    token the office issued for it: ``verify-slip`` does not pass it (the ledger owes R$ 1.020,60)."""
    web = app.state.web
    header = web.slip_header("http://testserver/")
    with engine.begin() as conn:
        [slip] = build_slips(conn, FIRST, LAST, registration="V017")
        both = tuple(read_statements(conn, FIRST, LAST, registration="V017", current_only=False))
        inflated = dataclasses.replace(slip, statements=both)
        assert inflated.total == Decimal("1717.20")
        made = code(KEY, inflated, header)
        tokens = issue(conn, [(made, "V017", FIRST, LAST, int(inflated.total * 100))], header.as_json(),
                       now=web.now())
    data = render([inflated], KEY, tz=web.tz, date_from=FIRST, date_to=LAST, header=header, tokens=tokens)[0]
    code_, err = _cli_verify(engine, tmp_path, data, "inflated.pdf")
    assert code_ == 1 and "FAILED V017" in err and "does not match the ledger" in err


def test_the_workers_phone_page_and_payslip_show_only_the_current_statement(app, versions):
    old, new = versions
    c, _ = worker_client(app, "V017")
    page = c.get("/w/pagamento", params=Q).text
    assert page.count('class="box statement"') == 1 and f'data-statement="{new}"' in page
    assert "R$ 1.020,60" in page and "R$ 696,60" not in page and f'"{old}"' not in page
    r = c.get("/w/contracheque.pdf", params=Q)
    assert r.status_code == 200
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(r.content)).pages)
    assert "TOTAL DO PERÍODO R$ 1.020,60" in text and "696,60" not in text


def test_select_all_payable_marks_the_current_statements_paid(app, engine, versions):
    old, new = versions
    c, token = logged_in(app, "office")
    page = c.get("/pay", params=Q | {"all": "1"}).text
    ticked = re.findall(r'name="pay_worker" value="([^"]+)"[^>]*checked', page)
    assert sorted(ticked) == ["V001", "V003", "V017"]  # V008's statement is on hold
    form = {"csrf_token": token, "pay_worker": ticked, "ref": "folha-03", **Q}
    r = c.post("/pay/mark-paid", data=form)
    assert r.status_code == 200 and 'id="confirm-form"' in r.text
    assert re.search(r'id="sum-count">3<', r.text) and f'"{old}"' not in r.text and f'value="{new}"' in r.text
    ids = re.findall(r'name="statement" value="([^"]+)"', r.text)
    r = c.post("/pay/mark-paid", data={"csrf_token": token, "statement": ids, "ref": "folha-03",
                                       "confirm": "yes", **Q})
    assert r.status_code == 303 and "done=paid-3" in r.headers["location"]
    with engine.connect() as conn:
        paid = dict(conn.execute(select(statements.c.statement_id, statements.c.paid_ref)).all())
    assert paid[new] == "folha-03" and paid[old] is None


@pytest.mark.parametrize("confirm", [{}, {"confirm": "yes"}])
def test_a_superseded_id_posted_is_refused_with_its_message_and_nothing_is_paid(app, engine, versions, confirm):
    old, new = versions
    c, token = logged_in(app, "office")
    r = c.post("/pay/mark-paid", data={"csrf_token": token, "statement": [new, old], "ref": "x", **confirm, **Q})
    assert r.status_code == 400 and 'id="confirm-form"' not in r.text
    assert f"substituído(s) por nova versão: {old} (por {new})" in r.text
    with engine.connect() as conn:
        assert conn.execute(select(statements.c.paid_at).where(statements.c.paid_at.is_not(None))).first() is None


def test_a_statement_named_twice_is_released_and_counted_once(app, engine):
    c, token = logged_in(app, "office")
    with engine.connect() as conn:
        held = conn.execute(select(statements.c.statement_id).where(statements.c.registration == "V008")).scalar_one()
    r = c.post("/pay/release", data={"csrf_token": token, "statement": [held, held], "note": "revisto", **Q})
    assert r.status_code == 303 and r.headers["location"].endswith("done=released-1")
    with engine.connect() as conn:
        subject, detail = conn.execute(select(audit_log.c.subject, audit_log.c.detail)
                                       .where(audit_log.c.action == "pay.release")).one()
    assert subject == "1 statement(s)" and detail["statements"] == [held]
