"""Pay screens and payslips over the real app and a real ledger (SQLite and PostgreSQL): every
line with rule id and article, hold and release, overdue, batch mark-paid, payroll CSV, payslip
PDFs with embedded fonts and a verification code that ``portgate pay verify-slip`` checks against
the ledger and that fails for an edited PDF or a changed ledger."""

from __future__ import annotations

import datetime as dt
import io
import re
from zoneinfo import ZoneInfo

import pytest
from pypdf import PdfReader, PdfWriter
from pypdf.generic import NameObject
from sqlalchemy import select, update

from app.cli import main
from central.config import WebSettings
from central.ledger.tables import statement_lines, statements
from central.pay.payslip import brl
from central.registry.schema import audit_log
from central.web.app import create_app
from tests.central.web.conftest import SECRET, engine_of, logged_in
from tests.central.web.paydata import raise_first_line

KEY = b"p" * 32
Q = {"from": "2026-03-01", "to": "2026-03-31"}


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """The web suite's ``engine``; a test that uses ``paid`` starts with the demo registry and
    paydata.py's March 2026 paid in it (a copy of a ledger the session filled once:
    tests/central/web/conftest.py's FILLS)."""
    yield from engine_of(request, tmp_path, ledgers, "demo_pay" if "paid" in request.fixturenames else None)


@pytest.fixture
def paid(engine, users):
    """The ledger with config/demo's workers and cards, paydata.seed_pay's statements and the users."""
    return engine


@pytest.fixture
def payapp(paid, clock):
    return create_app(paid, WebSettings(), SECRET, now=clock, background=False, slip_key=KEY)


def _ids(engine, reg=None):
    with engine.connect() as c:
        stmt = select(statements.c.statement_id).order_by(statements.c.statement_id)
        if reg:
            stmt = stmt.where(statements.c.registration == reg)
        return list(c.execute(stmt).scalars())


def test_brl_formats_money_as_in_brazil():
    from decimal import Decimal

    assert brl(Decimal("1234.56")) == "R$ 1.234,56"
    assert brl(Decimal("696.6")) == "R$ 696,60"
    assert brl(Decimal("1234567.00")) == "R$ 1.234.567,00"
    assert brl(Decimal("-1")) == "-R$ 1,00"


def test_the_statements_page_shows_every_line_with_rule_and_article(payapp):
    c, _ = logged_in(payapp, "auditor")
    r = c.get("/pay", params=Q | {"worker": "V017"})
    assert r.status_code == 200
    for rule, article, amount in (("P1", "83.611 art. 25", "R$ 270,00"), ("P2", "83.611 art. 26 a", "R$ 108,00"),
                                  ("P4", "83.611 art. 26 c", "R$ 135,00"), ("P7", "83.611 art. 27", "R$ 116,10")):
        assert re.search(rf"<td>{rule}</td><td>{re.escape(article)}[^<]*</td>.*?{re.escape(amount)}", r.text), rule
    assert "R$ 696,60" in r.text
    assert c.get("/pay", params={"from": "2026-03-31", "to": "2026-03-01"}).status_code == 400
    inspector, _ = logged_in(payapp, "inspector")
    assert inspector.get("/pay").status_code == 403


def test_a_held_statement_is_released_then_paid_in_a_batch(payapp):
    c, token = logged_in(payapp, "office")
    page = c.get("/pay", params=Q).text
    held = _ids(payapp.state.web.engine, "V008")
    assert 'id="held"' in page and "EARLY_EXIT" in page
    everyone = _ids(payapp.state.web.engine)
    r = c.post("/pay/mark-paid", data={"csrf_token": token, "statement": everyone, "ref": "lote-3",
                                       "confirm": "yes", **Q})
    assert r.status_code == 400 and "retido(s) para revisão" in r.text  # nothing paid: all or nothing
    with payapp.state.web.engine.connect() as conn:
        assert conn.execute(select(statements.c.paid_at).where(statements.c.paid_at.is_not(None))).first() is None
    assert c.post("/pay/release", data={"csrf_token": token, "statement": held, "note": "", **Q}).status_code == 400
    r = c.post("/pay/release", data={"csrf_token": token, "statement": held, "note": "saída autorizada pelo chefe", **Q})
    assert r.status_code == 303
    r = c.post("/pay/mark-paid", data={"csrf_token": token, "statement": everyone, "ref": "L" * 129,
                                       "confirm": "yes", **Q})
    assert r.status_code == 400 and "a referência do pagamento tem 129 caracteres (no máximo 128)" in r.text
    assert 'value="' + "L" * 129 + '"' in r.text  # the typed reference is kept
    r = c.post("/pay/mark-paid", data={"csrf_token": token, "statement": everyone, "ref": "lote-3", **Q})
    assert r.status_code == 200 and 'id="confirm-form"' in r.text  # the summary first: nothing paid yet
    with payapp.state.web.engine.connect() as conn:
        assert conn.execute(select(statements.c.paid_at).where(statements.c.paid_at.is_not(None))).first() is None
    r = c.post("/pay/mark-paid", data={"csrf_token": token, "statement": everyone, "ref": "lote-3",
                                       "confirm": "yes", **Q})
    assert r.status_code == 303 and "done=paid-4" in r.headers["location"]
    with payapp.state.web.engine.connect() as conn:
        refs = set(conn.execute(select(statements.c.paid_ref)).scalars())
        actions = list(conn.execute(select(audit_log.c.action, audit_log.c.actor)
                                    .where(audit_log.c.action.like("pay.%")).order_by(audit_log.c.id)))
    assert refs == {"lote-3"}
    assert actions == [("pay.release", "web:office"), ("pay.mark_paid", "web:office")]


def test_the_overdue_list_names_statements_past_48_hours(payapp):
    c, _ = logged_in(payapp, "office")
    text = c.get("/pay", params=Q).text  # the app's clock is today: every March statement is overdue
    overdue = text.split('id="overdue"')[1].split("</ul>")[0]
    assert overdue.count("<li>") == 4 and "V017" in overdue


def test_the_payroll_export_has_every_line_and_totals(payapp):
    c, _ = logged_in(payapp, "office")
    r = c.get("/pay/export.csv", params=Q)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = r.text.splitlines()
    assert rows[0].startswith("matrícula,nome,cpf,pis_nis,dia_de_trabalho,turno")  # pt-BR: the page's language
    assert any(row.startswith("V017,") and ",2026-03-15," in row and ",TOTAL,,,696.60," in row for row in rows)
    assert any(",P7,83.611 art. 27," in row and ",116.10," in row for row in rows)


def _slip(c, reg="V017") -> bytes:
    r = c.get(f"/pay/slip/{reg}.pdf", params=Q)
    assert r.status_code == 200 and r.headers["content-type"] == "application/pdf"
    return r.content


def test_a_payslip_holds_the_worked_example_with_rule_ids_and_embedded_fonts(payapp):
    c, _ = logged_in(payapp, "office")
    reader = PdfReader(io.BytesIO(_slip(c)))
    text = "\n".join(p.extract_text() for p in reader.pages)
    assert "Quitéria Almeida" in text and "Matrícula: V017" in text and "Categoria: vigia" in text
    assert "TOTAL DO PERÍODO R$ 696,60" in text
    for rule in ("P1", "P2", "P3", "P4", "P7"):
        assert re.search(rf"^{rule} 83\.611 art\.", text, re.M), rule
    assert "15/03/2026 19-01" in text and "vencimento 18/03/2026 02:30" in text
    assert "decreto-83611-1979" in text and "Código de verificação:" in text
    fonts = reader.pages[0]["/Resources"]["/Font"]
    for ref in fonts.values():
        font = ref.get_object()
        if font.get("/Subtype") in ("/TrueType", "/Type0"):
            desc = font.get("/FontDescriptor") or font["/DescendantFonts"][0].get_object()["/FontDescriptor"]
            assert "/FontFile2" in desc.get_object()
            assert "DejaVu" in font["/BaseFont"]


def _cli_verify(engine, tmp_path, data: bytes, name="slip.pdf") -> tuple[int, str]:
    import contextlib

    key = tmp_path / "payslip.key"
    key.write_bytes(KEY)
    path = tmp_path / name
    path.write_bytes(data)
    url = engine.url.render_as_string(hide_password=False)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["pay", "verify-slip", "--db", url, "--key-file", str(key), str(path)])
    return code, err.getvalue()


def _edited(data: bytes, old: bytes, new: bytes) -> bytes:
    reader = PdfReader(io.BytesIO(data))
    writer = PdfWriter(clone_from=reader)
    changed = 0
    for page in writer.pages:
        content = page.get_contents()
        raw = content.get_data()
        if old in raw:
            content.set_data(raw.replace(old, new))
            page[NameObject("/Contents")] = content
            changed += 1
    assert changed, "the figure to edit is not in the page content"
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_verify_slip_passes_for_the_slip_and_fails_for_an_edited_one(payapp, tmp_path, capsys):
    engine = payapp.state.web.engine
    c, _ = logged_in(payapp, "office")
    data = _slip(c)
    assert _cli_verify(engine, tmp_path, data)[0] == 0
    assert "1 slip(s) verified" in capsys.readouterr().out
    edited = _edited(data, b"(R$ 696,60)", b"(R$ 896,60)")  # the total changed in the page
    code, err = _cli_verify(engine, tmp_path, edited, "edited.pdf")
    assert code == 1 and "FAILED V017" in err
    # a changed ledger (a line altered after the slip was made) fails too
    with engine.begin() as conn:
        conn.execute(update(statement_lines).where(statement_lines.c.rule == "P2",
                                                   statement_lines.c.statement_id.like("V017%"))
                     .values(amount_cents=10900))
    code, err = _cli_verify(engine, tmp_path, data)
    assert code == 1 and "does not match the ledger" in err


def test_verify_slip_refuses_a_pdf_that_is_not_a_payslip(payapp, tmp_path):
    from reportlab.pdfgen.canvas import Canvas

    out = io.BytesIO()
    cv = Canvas(out)
    cv.drawString(10, 10, "hello")
    cv.save()
    assert _cli_verify(payapp.state.web.engine, tmp_path, out.getvalue(), "other.pdf")[0] == 2
    assert _cli_verify(payapp.state.web.engine, tmp_path, b"not a pdf", "junk.pdf")[0] == 2


def test_the_batch_pdf_has_every_worker_and_verifies(payapp, tmp_path):
    c, _ = logged_in(payapp, "auditor")
    r = c.get("/pay/slips.pdf", params=Q)
    assert r.status_code == 200
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(r.content)).pages)
    assert text.count("Demonstrativo de pagamento") == 4
    assert "retido para revisão" in text  # V008's EARLY_EXIT statement
    assert _cli_verify(payapp.state.web.engine, tmp_path, r.content, "batch.pdf")[0] == 0


def test_production_gangs_show_their_tally_and_members(payapp):
    import datetime as dt

    from central.production.csvio import read_gang_work, read_tariffs
    from central.production.engine import pay_gangs
    from central.production.rulebook import find_rulebook
    from central.production.store import import_results

    ex = __import__("pathlib").Path(__file__).resolve().parents[3] / "config" / "examples" / "production"
    works = read_gang_work(ex / "gang.csv", ex / "tally.csv", ex / "interruptions.csv")
    results = pay_gangs(works, find_rulebook("dl-2032-1940"), read_tariffs(ex / "tariffs.csv"))
    import_results(payapp.state.web.engine, list(zip(works, results)), imported_at=dt.datetime(2026, 3, 10, 20, tzinfo=dt.UTC))
    day = works[0].work_date.isoformat() if hasattr(works[0], "work_date") else "2026-03-10"
    c, token = logged_in(payapp, "office")
    text = c.get("/pay", params={"from": day, "to": day}).text
    gang = text.split('data-gang="T1"')[1].split("</div>")[0]
    assert "E1 R$ 585,60" in gang and "120,5 t · 6,5 cotas" in gang
    assert "valor da cota R$ 90,092</p>" in gang  # 585.60 / 6.5 = 90.0923076…: at most 3 decimals
    assert "tally.csv:" in gang.split('class="tally"')[1]
    assert "<td>E001</td>" in gang and "<td>E005</td>" in gang
    # the tally in the page's language: the decimal comma, the boarded column and roles in pt-BR;
    # the cargo class stays as tariffs.csv names it
    tally = gang.split('class="tally"')[1].split("</table>")[0]
    assert '<td>bagged</td><td class="num">120,5</td>' in tally and "120.5" not in tally
    members = gang.split('class="members"')[1]
    assert "<td>E001</td><td>contramestre geral</td><td>sim</td>" in members
    assert "<td>E002</td><td>contramestre</td><td>sim</td>" in members
    assert "<td>E005</td><td>estivador</td><td>não</td>" in members
    assert "general_foreman" not in members and ">yes<" not in members
    c.post("/lang", data={"csrf_token": token, "lang": "en"})
    gang = c.get("/pay", params={"from": day, "to": day}).text.split('data-gang="T1"')[1].split("</div>")[0]
    assert '<td class="num">120.5</td>' in gang and "<td>E001</td><td>general foreman</td><td>yes</td>" in gang
    assert "<td>E005</td><td>stevedore</td><td>no</td>" in gang


@pytest.mark.parametrize("path", ["/pay/slip/V017.pdf", "/pay/slips.pdf", "/pay", "/pay/export.csv"])
@pytest.mark.parametrize("query, words", [
    ({"from": "1900-01-01", "to": "2026-03-31"},
     "início do período: o dia 01/01/1900 está fora de 01/01/2000..31/12/2100"),
    ({"from": "2026-03-01", "to": "2999-12-31"}, "fim do período: o dia 31/12/2999 está fora de 01/01/2000..31/12/2100"),
    ({"from": "01/03/2026", "to": "2026-03-31"}, "período: as datas são AAAA-MM-DD"),
])
def test_a_period_outside_the_clis_years_is_refused_in_portuguese(payapp, path, query, words):
    """The same 2000..2100 range as ``portgate pay`` (central.cli_args), not a PDF of 1100 years."""
    c, _ = logged_in(payapp, "office")
    r = c.get(path, params=query)
    assert r.status_code == 400 and "application/pdf" not in r.headers["content-type"]
    assert words in r.text


def test_on_the_english_page_a_refused_period_names_the_fields_in_english(payapp):
    c, token = logged_in(payapp, "office")
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    r = c.get("/pay", params={"from": "01/03/2026", "to": "2026-03-31"})
    assert r.status_code == 400 and "from/to: dates are YYYY-MM-DD" in r.text and "período" not in r.text


def test_a_statement_whose_line_was_edited_in_the_ledger_gets_no_payslip(payapp, engine):
    """A line raised by 1,00 behind the ledger's back (the total left): no payslip is printed for
    it (409, the statement named) and the payroll export marks its rows ``altered_``."""
    sid = raise_first_line(engine, "V017")
    c, _ = logged_in(payapp, "office")
    r = c.get("/pay/slip/V017.pdf", params=Q)
    assert r.status_code == 409 and r.headers["content-type"].startswith("text/html")
    assert f"o demonstrativo {sid} não confere mais" in r.text and "contracheque não emitido" in r.text
    assert _slip(c, "V001")  # another worker's slip still prints
    rows = c.get("/pay/export.csv", params=Q).text.splitlines()
    mine = [row for row in rows if f",{sid}," in row]
    assert mine and all(row.endswith(",alterado_a_pagar") for row in mine)  # pt-BR: the page's language
    assert all(not row.endswith("alterado_a_pagar") for row in rows if f",{sid}," not in row)


@pytest.mark.parametrize("lang, words", [
    ("pt", "este servidor não tem chave de contracheque: o operador deve reiniciá-lo com "
           "`portgate office serve --config central.toml`"),
    ("en", "this server has no payslip key: the operator restarts it with `portgate office serve --config central.toml`"),
])
@pytest.mark.parametrize("path", ["/pay/slip/V017.pdf", "/pay/slips.pdf"])
def test_a_server_started_without_a_payslip_key_says_what_the_operator_does(paid, clock, lang, words, path):
    """503 in the page's language (pt-BR first), no PDF, the command that gives the key named."""
    app = create_app(paid, WebSettings(lang=lang), SECRET, now=clock, background=False)
    c, _ = logged_in(app, "office")
    r = c.get(path, params=Q)
    assert r.status_code == 503 and r.headers["content-type"].startswith("text/html")
    assert words in r.text.replace("&#96;", "`")


def test_a_payment_dated_before_the_shift_s_start_by_the_office_clock_is_refused_in_portuguese(payapp, clock):
    c, token = logged_in(payapp, "office")
    everyone = _ids(payapp.state.web.engine)
    clock.at = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)  # the office's clock before March's shifts
    r = c.post("/pay/mark-paid", data={"csrf_token": token, "statement": everyone, "ref": "lote-9",
                                       "confirm": "yes", **Q})
    assert r.status_code == 400
    assert "data do pagamento: o pagamento em 01/03/2026 09:00 é anterior ao início do turno de" in r.text
    with payapp.state.web.engine.connect() as conn:
        assert conn.execute(select(statements.c.paid_at).where(statements.c.paid_at.is_not(None))).first() is None
