"""Payslips as PDF (ReportLab): one slip, or a batch of slips one after the other, each starting
on a new page. DejaVu Sans embedded (Debian ``fonts-dejavu-core``); A4; pt-BR formats.

The document's metadata subject is JSON ``{"portgate_slips": 1, "from", "to", "tz", "slips":
[[registration, code], ...]}`` (``tz``: the zone the due times are printed in; the author is the office): what ``portgate pay verify-slip`` reads to recompute each slip from the ledger.
With a ``SlipHeader`` the subject also holds ``"header"`` (the paying entity and the verification
address, covered by each slip's code) and each slip prints the entity's name, CNPJ and address at
its top and, when tokens are given (``central.pay.slip_codes``), a QR code (``qrcode``; a 1-bit
image, one per slip) holding ``<verify_base>/v/<token>`` with that short URL printed beside it.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from zoneinfo import ZoneInfo

from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

from portgate.gctune import paused as no_cyclic_gc
import qrcode
from PIL import Image
from reportlab.lib.utils import ImageReader

from central.pay.payslip import Slip, SlipHeader, StatementView, brl, code, date_br, grouped, time_br
from central.pay.slip_codes import grouped_token, verify_url
from central.pay.payslip_text import (  # noqa: F401 (FONT_DIR, GAP: re-exported)
    COLS, FONT, FONT_BOLD, FONT_DIR, GAP, LEFT, RIGHT, ROW_SIZE, PageText, register_fonts)
from portgate.docbr import masked_cnpj, masked_cpf, masked_pis

WIDTH, HEIGHT = A4
TOP, BOTTOM = HEIGHT - 18 * mm, 20 * mm
ROW = 4.6 * mm


def printed_status(st) -> str:
    """The status a slip prints for statement ``st`` (a ``StatementView``): ``pago``, ``retido
    para revisão`` or ``a pagar``."""
    return "pago" if st.paid_at else ("retido para revisão" if st.on_hold else "a pagar")


QR_SIZE = 26 * mm  # the printed QR code's side


def qr_image(url: str) -> Image.Image:
    """The QR code of ``url`` as a 1-bit image, one pixel per module, with the 4-module quiet zone
    (``qrcode``, error correction M)."""
    qr = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M, box_size=1, border=4)
    qr.add_data(url)
    qr.make(fit=True)
    rows = qr.get_matrix()
    img = Image.new("1", (len(rows[0]), len(rows)), 1)
    img.putdata([0 if dark else 1 for row in rows for dark in row])
    return img


class _Writer:
    def __init__(self, canvas: Canvas, tz: ZoneInfo, office: str, header: SlipHeader | None = None) -> None:
        self.c, self.tz, self.office = canvas, tz, office
        self.header = header or SlipHeader()
        self.text = PageText(canvas)
        self.formatted: dict = {}  # amount, day or due time -> its pt-BR text
        self.shapes: dict[tuple, tuple[list, int]] = {}  # (lines, total, status) -> (rows, height)
        self.drawn: dict[tuple, tuple[list[str], tuple | None, float]] = {}  # (shape, y, font) -> ops, font, y
        self.y = TOP
        self.page_no = 0
        self.pages = 0
        self.ship_names: dict[str, str] = {}  # the slip's ships: {IMO: name}

    def finish_page(self) -> None:
        self.text.flush(self.c)
        self.c.showPage()

    def new_page(self, slip: Slip, slip_code: str) -> None:
        if self.pages:
            self.finish_page()
        self.pages += 1
        self.page_no += 1
        self.text.show(LEFT, BOTTOM - 8 * mm, (self.office, " — código de verificação ", grouped(slip_code),
                                               " — matrícula ", slip.registration, " — página ", str(self.page_no)),
                       FONT, 7)
        self.y = TOP

    def line(self, x: float, *pieces: str, bold: bool = False, size: float = 8.5, right: bool = False) -> None:
        font = FONT_BOLD if bold else FONT
        if right:
            x -= sum(self.text.width(p, font, size) for p in pieces)
        self.text.show(x, self.y, pieces, font, size)

    def money(self, amount) -> str:
        found = self.formatted.get(amount)
        if found is None:
            found = self.formatted[amount] = brl(amount)
        return found

    def day(self, day: dt.date) -> str:
        found = self.formatted.get(day)
        if found is None:
            found = self.formatted[day] = date_br(day)
        return found

    def due(self, at: dt.datetime) -> str:
        found = self.formatted.get(at)
        if found is None:
            found = self.formatted[at] = time_br(at, self.tz)
        return found

    def down(self, n: float = 1.0) -> None:
        self.y -= ROW * n

    def room(self, rows: float, slip: Slip, slip_code: str) -> None:
        if self.y - rows * ROW < BOTTOM:
            self.new_page(slip, slip_code)
            self.line(LEFT, slip.name, " (", slip.registration, ") — continuação", bold=True)
            self.down(1.5)

    def slip(self, slip: Slip, slip_code: str, token: str | None = None) -> None:
        """One slip from a new page: head, a block per shift, total and code, the QR with a ``token``."""
        self.page_no = 0
        self.ship_names = dict(slip.ships)
        self.new_page(slip, slip_code)
        self.slip_head(slip)
        for st in slip.statements:
            self.statement(slip, slip_code, st)
        self.slip_foot(slip, slip_code)
        if token and self.header.verify_base:
            self.verification(slip, slip_code, token)

    def slip_head(self, slip: Slip) -> None:
        """The paying entity (when set), the title, the worker, period, documents and rulebooks."""
        head = self.header
        if head.employer:
            self.line(LEFT, head.employer, bold=True, size=10)
            self.down(1.1)
            self.line(LEFT, "CNPJ ", masked_cnpj(head.cnpj) or "—", "    ", head.address)
            self.down(1.6)
        self.line(LEFT, "Demonstrativo de pagamento — contracheque", bold=True, size=13)
        self.down(1.8)
        self.line(LEFT, "Trabalhador: ", slip.name, bold=True, size=10)
        self.down(1.2)
        self.line(LEFT, "Matrícula: ", slip.registration, "    Categoria: ", slip.category, "    Período: ",
                  self.day(slip.date_from), " a ", self.day(slip.date_to))
        self.down()
        self.line(LEFT, "CPF: ", masked_cpf(slip.cpf) or "—", "    PIS/NIS: ", masked_pis(slip.pis) or "—")
        self.down()
        self.line(LEFT, "Tabela de regras (rulebook) usada: ", ", ".join(slip.rulebooks) or "—")
        self.down(1.6)

    def statement(self, slip: Slip, slip_code: str, st: StatementView) -> None:
        """One shift's block on one page: day, period, ship, due time; its lines (wrapped); its total.
        The lines and total are laid out once per shape (lines, total, status) and their operators
        written once per shape, height on the page and font in use, then reused: a month's
        statements share a few dozen shapes."""
        shape = (st.lines, st.total, printed_status(st))
        laid = self.shapes.get(shape)
        if laid is None:
            cells, money = self.text.cells, self.money
            rows = [(cells(x.rule, x.article, x.description, m), m) for x in st.lines for m in (money(x.amount),)]
            laid = self.shapes[shape] = (rows, sum(c[3] for c, _ in rows))
        self.room(laid[1] + 3, slip, slip_code)
        shift = st.shift_id.split("/")
        period = shift[3] if len(shift) > 3 else ""
        ship = shift[1] if len(shift) > 1 else ""
        named = self.ship_names.get(ship, "")
        self.text.show_groups(LEFT, self.y, (("Turno ", self.day(st.work_day), " ", period, " — navio "),
                                             (named, " (", ship, ")") if named else (ship,),
                                             (" — vencimento ", self.due(st.due_at))), FONT_BOLD, 8.5)
        self.down()
        text = self.text
        key = (shape, self.y, text.current)
        drawn = self.drawn.get(key)
        if drawn is None:
            start = len(text.ops)
            self.lines_and_total(laid[0], st.total, shape[2])
            drawn = self.drawn[key] = (text.ops[start:], text.current, self.y)
        else:
            text.ops += drawn[0]
        text.current, self.y = drawn[1], drawn[2]

    def lines_and_total(self, rows: list, total, status: str) -> None:
        """A statement's lines (``rows``: each line's wrapped cells and amount text) and its total."""
        for (rule, article, description, height), amount in rows:  # a long text wraps in its column
            self.text.row(self.y, (rule[0], article[0], description[0]), amount)
            for i in range(1, height):
                self.down()
                for x, lines in zip(COLS, (rule, article, description)):
                    if i < len(lines):
                        self.text.show(x, self.y, (lines[i],), FONT, ROW_SIZE)
            self.down()
        self.line(COLS[2], f"Total do turno ({status})", bold=True)
        self.line(COLS[3], self.money(total), bold=True, right=True)
        self.down(1.5)

    def slip_foot(self, slip: Slip, slip_code: str) -> None:
        """The period's total, the verification code and how to check it (Lei 9.719 art. 2 §1)."""
        self.room(4, slip, slip_code)
        self.line(LEFT, "TOTAL DO PERÍODO", bold=True, size=11)
        self.line(COLS[3], self.money(slip.total), bold=True, size=11, right=True)
        self.down(1.8)
        self.line(LEFT, "Código de verificação: ", grouped(slip_code), bold=True)
        self.down()
        self.line(LEFT, "Confira com: portgate pay verify-slip ARQUIVO.pdf (pagamento devido 48 h após o "
                        "serviço, Lei 9.719 art. 2 §1)", size=7)
        self.down()

    def verification(self, slip: Slip, slip_code: str, token: str) -> None:
        """The QR code of the slip's short URL at the right, the URL and the token beside it."""
        self.room(QR_SIZE / ROW + 1.5, slip, slip_code)
        self.down(0.8)
        url = verify_url(self.header.verify_base, token)
        top = self.y + ROW
        self.c.drawImage(ImageReader(qr_image(url)), RIGHT - QR_SIZE, top - QR_SIZE, QR_SIZE, QR_SIZE)
        self.line(LEFT, "Verifique este contracheque sem terminal: leia o código QR ou abra", bold=True)
        self.down()
        self.line(LEFT, url, size=9)
        self.down()
        self.line(LEFT, "Código curto: ", grouped_token(token), size=8)
        self.down()
        self.line(LEFT, "A página mostra o total, o período e as iniciais do trabalhador.", size=7)
        self.y = min(self.y, top - QR_SIZE) - ROW


def render(slips: list[Slip], key: bytes, *, tz: ZoneInfo, date_from: dt.date, date_to: dt.date,
           office: str = "portgate", header: SlipHeader | None = None,
           tokens: dict[str, str] | None = None) -> tuple[bytes, int]:
    """The PDF of ``slips`` (each from a new page) and its page count. ``header``: the paying
    entity and verification address (``SlipHeader``, covered by each code); ``tokens``: ``{HMAC
    code: token}`` (``central.pay.slip_codes.issue``) of the slips that print a QR code and short
    URL (with ``header.verify_base``). ``ConfigError`` when the DejaVu fonts are missing."""
    register_fonts()
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=A4, pageCompression=1, invariant=1)
    codes = [(s.registration, code(key, s, header)) for s in slips]
    canvas.setTitle(f"Contracheques {date_br(date_from)} a {date_br(date_to)}")
    canvas.setAuthor(office)
    meta = {"portgate_slips": 1, "from": date_from.isoformat(), "to": date_to.isoformat(), "tz": tz.key,
            "slips": codes}
    if header is not None and header != SlipHeader():
        meta["header"] = header.as_json()
    canvas.setSubject(json.dumps(meta, separators=(",", ":")))
    tokens = tokens or {}
    with no_cyclic_gc():  # 15,000 pages are ~10^6 long-lived objects until save
        writer = _Writer(canvas, tz, office, header)
        for slip, (_reg, c) in zip(slips, codes):
            writer.slip(slip, c, tokens.get(c))
        if not slips:
            writer.text.show(LEFT, TOP, ("Nenhum demonstrativo no período.",), FONT, 10)
            writer.pages = 1
        writer.finish_page()
        canvas.save()
    return out.getvalue(), writer.pages
