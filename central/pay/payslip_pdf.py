"""Payslips as PDF (ReportLab): one slip, or a batch of slips one after the other, each starting
on a new page. DejaVu Sans embedded (Debian ``fonts-dejavu-core``); A4; pt-BR formats.

The document's metadata subject is JSON ``{"portgate_slips": 1, "from", "to", "slips": [[registration,
code], ...]}``: what ``portgate pay verify-slip`` reads to recompute each slip from the ledger.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import json
from pathlib import Path
from zoneinfo import ZoneInfo

from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas

from central.pay.payslip import Slip, brl, code, date_br, grouped, time_br
from portgate.errors import ConfigError

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FONT, FONT_BOLD = "DejaVuSans", "DejaVuSans-Bold"
WIDTH, HEIGHT = A4
LEFT, RIGHT, TOP, BOTTOM = 18 * mm, WIDTH - 18 * mm, HEIGHT - 18 * mm, 20 * mm
ROW = 4.6 * mm
COLS = (LEFT, LEFT + 14 * mm, LEFT + 52 * mm, RIGHT)  # rule, article, description, amount (right)


def _fonts() -> None:
    if FONT in pdfmetrics.getRegisteredFontNames():
        return
    try:
        pdfmetrics.registerFont(TTFont(FONT, str(FONT_DIR / "DejaVuSans.ttf")))
        pdfmetrics.registerFont(TTFont(FONT_BOLD, str(FONT_DIR / "DejaVuSans-Bold.ttf")))
    except Exception as exc:  # reportlab raises its own TTFError and OSError
        raise ConfigError(f"DejaVu fonts missing (apt-get install fonts-dejavu-core): {exc}",
                          path=str(FONT_DIR)) from exc


@functools.lru_cache(maxsize=4096)
def _width(text: str, font: str, size: float) -> float:
    return pdfmetrics.stringWidth(text, font, size)


class _Writer:
    def __init__(self, canvas: Canvas, tz: ZoneInfo, office: str) -> None:
        self.c, self.tz, self.office = canvas, tz, office
        self.y = TOP
        self.text = None
        self.font = None
        self.page_no = 0
        self.pages = 0

    def _flush(self) -> None:
        if self.text is not None:
            self.c.drawText(self.text)
            self.text = None
            self.font = None

    def new_page(self, slip: Slip, slip_code: str) -> None:
        if self.pages:
            self._flush()
            self.c.showPage()
        self.pages += 1
        self.page_no += 1
        c = self.c
        c.setFont(FONT, 7)
        c.drawString(LEFT, BOTTOM - 8 * mm, f"{self.office} — código de verificação {grouped(slip_code)} — "
                                            f"matrícula {slip.registration} — página {self.page_no}")
        self.y = TOP
        self.text = c.beginText()
        self.font = None

    def line(self, x: float, text: str, *, bold: bool = False, size: float = 8.5, right: bool = False) -> None:
        font = FONT_BOLD if bold else FONT
        if right:
            x -= _width(text, font, size)
        if self.font != (font, size):
            self.text.setFont(font, size)
            self.font = (font, size)
        self.text.setTextOrigin(x, self.y)
        self.text.textOut(text)

    def down(self, n: float = 1.0) -> None:
        self.y -= ROW * n

    def room(self, rows: float, slip: Slip, slip_code: str) -> None:
        if self.y - rows * ROW < BOTTOM:
            self.new_page(slip, slip_code)
            self.line(LEFT, f"{slip.name} ({slip.registration}) — continuação", bold=True)
            self.down(1.5)

    def slip(self, slip: Slip, slip_code: str) -> None:
        self.page_no = 0
        self.new_page(slip, slip_code)
        self.line(LEFT, "Demonstrativo de pagamento — contracheque", bold=True, size=13)
        self.down(1.8)
        self.line(LEFT, f"Trabalhador: {slip.name}", bold=True, size=10)
        self.down(1.2)
        self.line(LEFT, f"Matrícula: {slip.registration}    Categoria: {slip.category}    "
                        f"Período: {date_br(slip.date_from)} a {date_br(slip.date_to)}")
        self.down()
        self.line(LEFT, f"Tabela de regras (rulebook) usada: {', '.join(slip.rulebooks) or '—'}")
        self.down(1.6)
        for st in slip.statements:
            self.room(len(st.lines) + 3, slip, slip_code)
            shift = st.shift_id.split("/")
            period = shift[3] if len(shift) > 3 else ""
            ship = shift[1] if len(shift) > 1 else ""
            self.line(LEFT, f"Turno {date_br(st.work_day)} {period} — navio {ship} — vencimento {time_br(st.due_at, self.tz)}",
                      bold=True)
            self.down()
            for x in st.lines:
                self.line(COLS[0], x.rule)
                self.line(COLS[1], x.article)
                self.line(COLS[2], x.description[:70])
                self.line(COLS[3], brl(x.amount), right=True)
                self.down()
            status = "pago" if st.paid_at else ("retido para revisão" if st.on_hold else "a pagar")
            self.line(COLS[2], f"Total do turno ({status})", bold=True)
            self.line(COLS[3], brl(st.total), bold=True, right=True)
            self.down(1.5)
        self.room(4, slip, slip_code)
        self.line(LEFT, "TOTAL DO PERÍODO", bold=True, size=11)
        self.line(COLS[3], brl(slip.total), bold=True, size=11, right=True)
        self.down(1.8)
        self.line(LEFT, f"Código de verificação: {grouped(slip_code)}", bold=True)
        self.down()
        self.line(LEFT, "Confira com: portgate pay verify-slip ARQUIVO.pdf (pagamento devido 48 h após o "
                        "serviço, Lei 9.719 art. 2 §1)", size=7)
        self.down()


def render(slips: list[Slip], key: bytes, *, tz: ZoneInfo, date_from: dt.date, date_to: dt.date,
           office: str = "portgate") -> tuple[bytes, int]:
    """The PDF of ``slips`` (each from a new page) and its page count. ``ConfigError`` when the
    DejaVu fonts are missing."""
    _fonts()
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=A4, pageCompression=1, invariant=1)
    codes = [(s.registration, code(key, s)) for s in slips]
    canvas.setTitle(f"Contracheques {date_br(date_from)} a {date_br(date_to)}")
    canvas.setAuthor(office)
    canvas.setSubject(json.dumps({"portgate_slips": 1, "from": date_from.isoformat(), "to": date_to.isoformat(),
                                  "slips": codes}, separators=(",", ":")))
    writer = _Writer(canvas, tz, office)
    for slip, (_reg, c) in zip(slips, codes):
        writer.slip(slip, c)
    if not slips:
        canvas.setFont(FONT, 10)
        canvas.drawString(LEFT, TOP, "Nenhum demonstrativo no período.")
        writer.pages = 1
    writer._flush()
    canvas.showPage()
    canvas.save()
    return out.getvalue(), writer.pages
