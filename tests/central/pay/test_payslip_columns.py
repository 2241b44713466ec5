"""The payslip PDF keeps each statement line's text within its column: a long article (the CCT
example's CCT-6, "CCT 2026 cl. 10; Lei 4.860/65 art. 14") or description wraps under itself
instead of running over the next column or the amount (real ReportLab render, read back with pypdf;
the tester saw it overlap on the page rendered as an image)."""

from __future__ import annotations

import datetime as dt
import io
from decimal import Decimal
from zoneinfo import ZoneInfo

from pypdf import PdfReader
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfgen.canvas import Canvas

from central.pay.payslip import Slip
from central.pay.payslip_pdf import COLS, FONT, GAP, ROW_SIZE, render
from central.pay.payslip_text import PageText, register_fonts
from central.pay.statements_read import StatementView, StoredLine

Z = ZoneInfo("America/Sao_Paulo")
CCT6 = StoredLine("CCT-6", "CCT 2026 cl. 10; Lei 4.860/65 art. 14", "adicional de risco portuário 40%", Decimal("72.00"))
LONG = StoredLine("E2", "DL 2.032 arts. 19, 22 1º, 23 a",
                  "navio fundeado +20% sobre salário-dia e noturno, com um texto de descrição que não cabe numa linha",
                  Decimal("1234567.89"))


def _slip(*lines) -> Slip:
    total = sum((x.amount for x in lines), Decimal("0.00"))
    st = StatementView("S1", "101/9300002/2026-03-15/19-01", "V017", "example-cct-2026", dt.date(2026, 3, 15),
                       total, (), dt.datetime(2026, 3, 18, 5, 30, tzinfo=dt.UTC), None, None, None, None, None,
                       tuple(lines))
    return Slip("V017", "Quitéria Almeida", "vigia", dt.date(2026, 3, 1), dt.date(2026, 3, 31), (st,))


def _placed(data: bytes) -> list[tuple[float, str]]:
    """(x in points, text) of each text line pypdf reads off the first page."""
    found: list[tuple[float, str]] = []

    def visit(text, _cm, tm, _font, _size):
        if text.strip():
            found.append((round(tm[4], 1), text.strip()))

    PdfReader(io.BytesIO(data)).pages[0].extract_text(visitor_text=visit)
    return found


def test_each_column_of_a_line_stays_within_its_width():
    register_fonts()
    text = PageText(Canvas(io.BytesIO()))
    amount = "R$ 1.234.567,89"
    rule, article, description, rows = text.cells(LONG.rule, LONG.article, LONG.description, amount)
    assert rows == 2
    assert len(article) == 2 and len(description) == 2
    width = lambda s: pdfmetrics.stringWidth(s, FONT, ROW_SIZE)  # noqa: E731
    assert all(width(s) <= COLS[1] - COLS[0] - GAP for s in rule)
    assert all(width(s) <= COLS[2] - COLS[1] - GAP for s in article)
    assert all(width(s) <= COLS[3] - width(amount) - GAP - COLS[2] for s in description)
    assert " ".join(article) == LONG.article and " ".join(description) == LONG.description  # nothing lost
    cut = text.cells("RULE-" * 8, "", "", "R$ 1,00")[0]  # one word wider than the rule column
    assert len(cut) > 1 and "".join(cut) == "RULE-" * 8 and all(width(s) <= COLS[1] - COLS[0] - GAP for s in cut)


def test_the_cct6_article_wraps_in_its_column_on_the_page_and_the_slip_reads_in_order():
    data, pages = render([_slip(CCT6, LONG)], b"k" * 32, tz=Z, date_from=dt.date(2026, 3, 1),
                         date_to=dt.date(2026, 3, 31))
    placed = _placed(data)
    assert pages == 1
    assert (round(COLS[0], 1), "CCT-6 CCT 2026 cl. 10; Lei adicional de risco portuário 40% R$ 72,00") in placed
    assert (round(COLS[1], 1), "4.860/65 art. 14") in placed  # the rest of the article, under itself
    assert (round(COLS[1], 1), "1º, 23 a texto de descrição que não cabe numa linha") in placed
