"""The text of a payslip page as PDF operators (``PageText``): the embedded DejaVu fonts, the
statement lines' columns, each string's encoding into the font subsets done once per document,
and the blocks of operators the writer (``central.pay.payslip_pdf``) reuses. Widths in points."""

from __future__ import annotations

from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.lib.rl_accel import escapePDF
from reportlab.lib.units import mm
from reportlab.lib.utils import simpleSplit
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas

from portgate.errors import ConfigError

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FONT, FONT_BOLD = "DejaVuSans", "DejaVuSans-Bold"
WIDTH = A4[0]
LEFT, RIGHT = 18 * mm, WIDTH - 18 * mm
ROW_SIZE = 8.5  # points: the statement lines
COLS = (LEFT, LEFT + 14 * mm, LEFT + 52 * mm, RIGHT)  # rule, article, description, amount (right)
GAP = 2 * mm  # white space kept between a column's text and the next column (or the amount)
AMOUNT_ROOM = "-R$ 99.999,99"  # amounts up to this long share one wrapping of a line's texts


def register_fonts() -> None:
    if FONT in pdfmetrics.getRegisteredFontNames():
        return
    try:
        pdfmetrics.registerFont(TTFont(FONT, str(FONT_DIR / "DejaVuSans.ttf")))
        pdfmetrics.registerFont(TTFont(FONT_BOLD, str(FONT_DIR / "DejaVuSans-Bold.ttf")))
    except Exception as exc:  # reportlab raises its own TTFError and OSError
        raise ConfigError(f"DejaVu fonts missing (apt-get install fonts-dejavu-core): {exc}",
                          path=str(FONT_DIR)) from exc


class PageText:
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
        self.groups: dict[tuple, tuple[tuple[str, ...], tuple[str, float] | None]] = {}
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
        self.ops.append(self._origin(x, y))
        self._pieces(pieces, font, size)

    def show_groups(self, x: float, y: float, groups: tuple[tuple[str, ...], ...], font: str, size: float) -> None:
        """``show`` of the pieces of ``groups`` one after the other; each group's operators are kept
        per (pieces, font, size, font in use) and reused: for a line whose varying parts repeat in
        groups (a shift's day and period, its ship, its due time)."""
        ops = self.ops
        ops.append(self._origin(x, y))
        for pieces in groups:
            key = (pieces, font, size, self.current)
            found = self.groups.get(key)
            if found is None:
                start = len(ops)
                self._pieces(pieces, font, size)
                found = self.groups[key] = (tuple(ops[start:]), self.current)
            else:
                ops += found[0]
            self.current = found[1]

    def _pieces(self, pieces: tuple[str, ...], font: str, size: float) -> None:
        ops, encoded, current = self.ops, self.encoded, self.current
        for piece in pieces:
            parts = encoded.get((font, piece))
            for name, shown in self._encoded(font, piece) if parts is None else parts:
                if current != (name, size):
                    ops.append(f"{name} {size:g} Tf")
                    current = (name, size)
                ops.append(shown)
        self.current = current

    def flush(self, canvas: Canvas) -> None:
        """Write the page's text into ``canvas``'s current page."""
        if self.ops:
            canvas.addLiteral("BT\n" + "\n".join(self.ops) + "\nET")
        self.ops = []
        self.current = None
