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
from pathlib import Path
from zoneinfo import ZoneInfo

from reportlab.lib.pagesizes import A4
from reportlab.lib.rl_accel import escapePDF
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.lib.utils import simpleSplit
from reportlab.pdfgen.canvas import Canvas

from portgate.gctune import paused as no_cyclic_gc
import qrcode
from PIL import Image
from reportlab.lib.utils import ImageReader

from central.pay.payslip import Slip, SlipHeader, StatementView, brl, code, date_br, grouped, time_br
from central.pay.slip_codes import grouped_token, verify_url
from portgate.docbr import masked_cnpj, masked_cpf, masked_pis
from portgate.errors import ConfigError

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FONT, FONT_BOLD = "DejaVuSans", "DejaVuSans-Bold"
WIDTH, HEIGHT = A4
LEFT, RIGHT, TOP, BOTTOM = 18 * mm, WIDTH - 18 * mm, HEIGHT - 18 * mm, 20 * mm
ROW = 4.6 * mm
ROW_SIZE = 8.5  # points: the statement lines
COLS = (LEFT, LEFT + 14 * mm, LEFT + 52 * mm, RIGHT)  # rule, article, description, amount (right)
GAP = 2 * mm  # white space kept between a column's text and the next column (or the amount)
AMOUNT_ROOM = "-R$ 99.999,99"  # amounts up to this long share one wrapping of a line's texts


def printed_status(st) -> str:
    """The status a slip prints for statement ``st`` (a ``StatementView``): ``pago``, ``retido
    para revisão`` or ``a pagar``."""
    return "pago" if st.paid_at else ("retido para revisão" if st.on_hold else "a pagar")


def _fonts() -> None:
    if FONT in pdfmetrics.getRegisteredFontNames():
        return
    try:
        pdfmetrics.registerFont(TTFont(FONT, str(FONT_DIR / "DejaVuSans.ttf")))
        pdfmetrics.registerFont(TTFont(FONT_BOLD, str(FONT_DIR / "DejaVuSans-Bold.ttf")))
    except Exception as exc:  # reportlab raises its own TTFError and OSError
        raise ConfigError(f"DejaVu fonts missing (apt-get install fonts-dejavu-core): {exc}",
                          path=str(FONT_DIR)) from exc


class _Text:
    """The page's text as PDF operators (``BT ... ET``), each string's encoding into the embedded
    DejaVu subsets done once per document and reused (``splitString`` assigns a character its
    subset code the first time the document meets it; the same string encodes the same way for
    the rest of the document). Widths (points) come from the font metrics, cached too."""

    def __init__(self, canvas: Canvas) -> None:
        self.doc = canvas._doc  # the document whose font subsets the codes belong to
        self.fonts = {name: pdfmetrics.getFont(name) for name in (FONT, FONT_BOLD)}
        self.encoded: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}
        self.widths: dict[tuple[str, str, float], float] = {}
        self.origins: dict[tuple[float, float], str] = {}
        self.rows: dict[tuple[str, str, str], tuple[str | None, str]] = {}
        self.amounts: dict[str, tuple[str | None, str]] = {}
        self.wrapped: dict[tuple[str, float], tuple[str, ...]] = {}
        self.cells_of: dict[tuple[str, str, str], tuple] = {}
        self.ops: list[str] = []
        self.current: tuple[str, float] | None = None

    def width(self, text: str, font: str, size: float) -> float:
        key = (text, font, size)
        found = self.widths.get(key)
        if found is None:
            found = self.widths[key] = self.fonts[font].stringWidth(text, size)
        return found

    def cells(self, rule: str, article: str, description: str, amount: str) -> tuple:
        """The lines each of a statement line's three text columns takes (``rule``, ``article``,
        ``description``), each wrapped at spaces to stay within its column and the description clear
        of the right-aligned ``amount`` (``reportlab.lib.utils.simpleSplit``; a single word wider
        than its column is cut to fit), and the number of rows the line takes: ``(rule lines,
        article lines, description lines, rows)``. An amount no longer than ``AMOUNT_ROOM`` (the
        figures are tabular) shares one cached answer per texts: the same texts repeat on every
        slip, so a line costs one look-up; a longer amount is measured itself."""
        if len(amount) <= len(AMOUNT_ROOM):
            key = (rule, article, description)
            found = self.cells_of.get(key)
            if found is None:
                found = self.cells_of[key] = self._cells(rule, article, description, AMOUNT_ROOM)
            return found
        return self._cells(rule, article, description, amount)

    def _cells(self, rule: str, article: str, description: str, amount: str) -> tuple:
        cols = (self._wrap(rule, COLS[1] - COLS[0] - GAP), self._wrap(article, COLS[2] - COLS[1] - GAP),
                self._wrap(description, COLS[3] - self.width(amount, FONT, ROW_SIZE) - GAP - COLS[2]))
        return (*cols, max(map(len, cols)))

    def _wrap(self, text: str, width: float) -> tuple[str, ...]:
        key = (text, round(width, 2))
        found = self.wrapped.get(key)
        if found is None:
            found = self.wrapped[key] = (
                (text,) if self.width(text, FONT, ROW_SIZE) <= width else self._split(text, width))
        return found

    def _split(self, text: str, width: float) -> tuple[str, ...]:
        out = []
        for line in simpleSplit(text, FONT, ROW_SIZE, width) or [""]:
            while self.width(line, FONT, ROW_SIZE) > width and len(line) > 1:  # one over-long word
                cut = len(line) - 1
                while cut > 1 and self.width(line[:cut], FONT, ROW_SIZE) > width:
                    cut -= 1
                out.append(line[:cut])
                line = line[cut:]
            out.append(line)
        return tuple(out)

    def _encoded(self, font: str, piece: str) -> tuple[tuple[str, str], ...]:
        parts = self.encoded.get((font, piece))
        if parts is None:
            face = self.fonts[font]
            parts = self.encoded[(font, piece)] = tuple(
                (face.getSubsetInternalName(subset, self.doc), f"({escapePDF(chunk)}) Tj")
                for subset, chunk in face.splitString(piece, self.doc))
        return parts

    def row(self, y: float, columns: tuple[str, str, str], amount: str) -> None:
        """One statement line at baseline ``y``: rule, article and description at ``COLS[0:3]``,
        the amount right-aligned at ``COLS[3]`` (regular 8.5 pt). The three fixed columns are
        written as one cached run (``Td`` moves between them)."""
        run = self.rows.get(columns)
        if run is None:
            run = self.rows[columns] = self._run(columns, (COLS[1] - COLS[0], COLS[2] - COLS[1]))
        tail = self.amounts.get(amount)
        if tail is None:
            tail = self.amounts[amount] = self._run(
                (amount,), (), lead=COLS[3] - self.width(amount, FONT, ROW_SIZE) - COLS[2])
        if run[0] is None or tail[0] is None:  # a piece spans subsets: one piece at a time
            for x, piece in zip(COLS, columns):
                self.show(x, y, (piece,), FONT, ROW_SIZE)
            self.show(COLS[3] - self.width(amount, FONT, ROW_SIZE), y, (amount,), FONT, ROW_SIZE)
            return
        ops = self.ops
        ops.append(self._origin(COLS[0], y))
        if self.current != (run[0], ROW_SIZE):
            ops.append(f"{run[0]} {ROW_SIZE:g} Tf")
            self.current = (run[0], ROW_SIZE)
        ops.append(run[1])
        if tail[0] != run[0]:
            ops.append(f"{tail[0]} {ROW_SIZE:g} Tf")
            self.current = (tail[0], ROW_SIZE)
        ops.append(tail[1])

    def _run(self, pieces: tuple[str, ...], moves: tuple[float, ...], lead: float | None = None):
        """``(subset name, operators)`` showing ``pieces`` with a ``Td`` of ``moves[i]`` points
        before piece i+1 (and of ``lead`` before the first); ``(None, "")`` when a piece needs
        more than one subset or they differ."""
        names, ops = set(), []
        if lead is not None:
            ops.append(f"{lead:.2f} 0 Td")
        for i, piece in enumerate(pieces):
            if i:
                ops.append(f"{moves[i - 1]:.2f} 0 Td")
            parts = self._encoded(FONT, piece)
            if len(parts) != 1:
                return None, ""
            names.add(parts[0][0])
            ops.append(parts[0][1])
        if len(names) != 1:
            return None, ""
        return names.pop(), "\n".join(ops)

    def _origin(self, x: float, y: float) -> str:
        origin = self.origins.get((x, y))
        if origin is None:
            origin = self.origins[(x, y)] = f"1 0 0 1 {x:.2f} {y:.2f} Tm"
        return origin

    def show(self, x: float, y: float, pieces: tuple[str, ...], font: str, size: float) -> None:
        """``pieces`` one after the other (one text run) with the baseline starting at (x, y)
        points. Each piece is encoded once per document: give varying parts (a date, an amount)
        as pieces of their own so that the constant words around them are reused."""
        ops = self.ops
        ops.append(self._origin(x, y))
        for piece in pieces:
            for name, shown in self._encoded(font, piece):
                if self.current != (name, size):
                    ops.append(f"{name} {size:g} Tf")
                    self.current = (name, size)
                ops.append(shown)

    def flush(self, canvas: Canvas) -> None:
        """Write the page's text into ``canvas``'s current page."""
        if self.ops:
            canvas.addLiteral("BT\n" + "\n".join(self.ops) + "\nET")
        self.ops = []
        self.current = None


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
        self.text = _Text(canvas)
        self.formatted: dict = {}  # amount, day or due time -> its pt-BR text
        self.y = TOP
        self.page_no = 0
        self.pages = 0

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
        """One shift's block on one page: day, period, ship, due time; its lines (wrapped); its total."""
        cells, money = self.text.cells, self.money
        rows = [(cells(x.rule, x.article, x.description, m), m) for x in st.lines for m in (money(x.amount),)]
        self.room(sum(c[3] for c, _ in rows) + 3, slip, slip_code)
        shift = st.shift_id.split("/")
        period = shift[3] if len(shift) > 3 else ""
        ship = shift[1] if len(shift) > 1 else ""
        named = slip.ship_name(ship)
        self.line(LEFT, "Turno ", self.day(st.work_day), " ", period, " — navio ",
                  *((named, " (", ship, ")") if named else (ship,)), " — vencimento ", self.due(st.due_at),
                  bold=True)
        self.down()
        for (rule, article, description, height), amount in rows:  # a long text wraps in its column
            self.text.row(self.y, (rule[0], article[0], description[0]), amount)
            for i in range(1, height):
                self.down()
                for x, lines in zip(COLS, (rule, article, description)):
                    if i < len(lines):
                        self.text.show(x, self.y, (lines[i],), FONT, ROW_SIZE)
            self.down()
        self.line(COLS[2], f"Total do turno ({printed_status(st)})", bold=True)
        self.line(COLS[3], self.money(st.total), bold=True, right=True)
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
    _fonts()
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
