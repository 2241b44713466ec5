"""``portgate pay verify-slip``: check a payslip PDF against the ledger.

For each slip the PDF names (metadata subject, ``central.pay.payslip_pdf``): rebuild the slip
from the ledger's statements, recompute its code with the office's key and compare it with the one
named. Then render the named slips again from the ledger with the same renderer, extract the text
of both PDFs page by page with pypdf, normalise whitespace and compare: the page count and every
printed word and figure must match (name, registration, category, period, rulebook id, each shift's
day, ship and due time, every line and total, the code). The one slot allowed to differ is a
shift's status (``a pagar``, ``retido para revisão``, ``pago``): a slip printed before the
statement was released or paid shows an earlier status of its lifecycle. What is drawn without
text (a white box over a figure) is seen by the structure check that follows
(``central.pay.slip_structure``): one revision, nothing added to the catalog or the pages
(annotations, actions, XObjects, optional content), each content stream the renderer's operator
for operator and each font dictionary the renderer's. A slip printed with an earlier status is
compared with the slips rendered with the statuses it prints (the font subsets hold the characters
in the order the slip first draws them, so ``retido para revisão`` printed before the code line
orders the bold subset otherwise).

pypdf's own complaints while reading (``invalid pdf header``, ``EOF marker not found``: log records
and Python warnings) are silenced for the read: the one line the command prints says what is wrong.

A slip whose ledger statements no longer match their own digest (a line or total edited outside
the ledger, ``central.pay.integrity``) is refused whatever its code says.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import io
import json
import logging
import re
import warnings
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pypdf import PdfReader
from pypdf.errors import PdfReadError
from sqlalchemy.engine import Engine

from central.pay.integrity import altered
from central.pay.payslip import SlipHeader, build_slips, code
from central.pay.slip_codes import tokens_of
from central.pay.slip_structure import additions
from portgate.errors import BadInput

DEFAULT_TZ = "America/Sao_Paulo"  # the renderer's zone for PDFs whose metadata does not name one
KEY_BYTES = 32  # a payslip key is 32 random bytes (``central.web.cli._made_key``)
_STATUS = re.compile(r"Total do turno \((pago|a pagar|retido para revisão)\)")
# a printed status is consistent with the ledger's when it is the same or an earlier one
_EARLIER = {"retido para revisão": {"retido para revisão"},
            "a pagar": {"a pagar", "retido para revisão"},
            "pago": {"pago", "a pagar", "retido para revisão"}}
_FOOTER = re.compile(r"— matrícula (\S+) — página \d+")


@dataclasses.dataclass(frozen=True, slots=True)
class Verdict:
    """``ok`` when every slip checks; ``problems`` names each that does not, by registration."""

    slips: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclasses.dataclass(frozen=True, slots=True)
class _Pdf:
    slips: list[tuple[str, str]]  # (registration, code) as the metadata names them
    first: dt.date
    last: dt.date
    tz: ZoneInfo
    office: str
    pages: list[str]  # each page's text, whitespace normalised
    data: bytes  # the file as read
    reader: PdfReader
    header: SlipHeader | None = None  # the paying entity and verification address it prints


def page_texts(reader: PdfReader) -> list[str]:
    """Each page's extracted text with runs of whitespace made one space, stripped."""
    return [re.sub(r"\s+", " ", page.extract_text() or "").strip() for page in reader.pages]


def read_key(path: str | Path) -> bytes:
    """The payslip key in ``path``: exactly ``KEY_BYTES`` bytes, as the office makes it.
    ``BadInput`` for an unreadable file or one of another length (a text file, an empty one)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot read the payslip key: {exc.strerror}", where=str(path)) from exc
    if len(data) != KEY_BYTES:
        raise BadInput(f"not a payslip key ({len(data)} bytes; a key is {KEY_BYTES} random bytes)",
                       where=str(path))
    return data


@contextlib.contextmanager
def _quiet_pypdf():
    """pypdf logs to the ``pypdf`` logger (and may warn) about a damaged file; neither reaches the
    user here (the caller turns a failed read into one ``BadInput`` line)."""
    logger = logging.getLogger("pypdf")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


def _unreadable(data: bytes, path) -> BadInput:
    """The refusal of a file pypdf cannot read: not a PDF at all (no ``%PDF-`` in its first 1024
    bytes, where the format puts its header) or a damaged one. pypdf's own words (``Stream has ended
    unexpectedly``) are left out: they name nothing a person can act on."""
    if b"%PDF-" not in data[:1024]:
        return BadInput("not a PDF file (it does not start with %PDF-)", where=str(path))
    return BadInput("a damaged PDF: it starts as a PDF but its contents cannot be read (cut short or altered?)",
                    where=str(path))


def _read(path: Path) -> _Pdf:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot be opened: {exc.strerror or type(exc).__name__}", where=str(path)) from exc
    try:
        with _quiet_pypdf():
            reader = PdfReader(io.BytesIO(data))
            meta_doc = reader.metadata or {}
            subject, author = meta_doc.get("/Subject"), meta_doc.get("/Author")
            pages = page_texts(reader)
    except (PdfReadError, OSError, ValueError) as exc:
        raise _unreadable(data, path) from exc
    try:
        meta = json.loads(subject or "")
        slips = [(str(r), str(c)) for r, c in meta["slips"]]
        first, last = dt.date.fromisoformat(meta["from"]), dt.date.fromisoformat(meta["to"])
        tz = ZoneInfo(str(meta.get("tz", DEFAULT_TZ)))
        if meta.get("portgate_slips") != 1:
            raise ValueError("version")
        header = SlipHeader(**{k: str(v) for k, v in meta["header"].items()}) if "header" in meta else None
    except (ValueError, KeyError, TypeError, AttributeError, ZoneInfoNotFoundError) as exc:
        raise BadInput("not a portgate payslip (no slip metadata)", where=str(path)) from exc
    if not slips:
        raise BadInput(f"no slip to verify (no statements in {first}..{last})", where=str(path))
    return _Pdf(slips, first, last, tz, str(author or "portgate"), pages, data, reader, header)


def _statuses_aligned(expected: str, printed: str) -> str:
    """``expected`` with each shift status replaced by the one ``printed`` shows at the same place
    when that is an earlier status of the same statement (or the same)."""
    want, got = _STATUS.split(expected), _STATUS.split(printed)
    if len(want) != len(got):
        return expected
    for i in range(1, len(want), 2):  # odd items are the captured statuses
        if got[i] in _EARLIER[want[i]]:
            want[i] = got[i]
    return "".join(f"Total do turno ({p})" if i % 2 else p for i, p in enumerate(want))


def _first_difference(expected: str, printed: str) -> str:
    """The first differing words: ``'printed X where the ledger's slip has Y'``."""
    a, b = expected.split(" "), printed.split(" ")
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    show = lambda words: " ".join(words[i:i + 6]) or "(nothing)"  # noqa: E731
    return f"prints {show(b)!r} where the ledger's slip has {show(a)!r}"


def verify(path: str | Path, engine: Engine, key: bytes) -> Verdict:
    """Check the PDF at ``path``. ``BadInput`` when it is not a portgate payslip PDF or names no
    slip (an empty period's PDF)."""
    pdf = _read(Path(path))
    with engine.connect() as conn:
        ledger = {s.registration: s for s in build_slips(conn, pdf.first, pdf.last)}
        named = [st for reg, _c in pdf.slips if reg in ledger for st in ledger[reg].statements]
        edited = set(altered(conn, named))
        tokens = tokens_of(conn, [c for _reg, c in pdf.slips])  # the QR codes' tokens, as printed
    problems, slips = _against_ledger(pdf, ledger, edited, key)
    if not problems:
        problems = _against_render(pdf, slips, key, tokens, path)
    return Verdict(len(pdf.slips), tuple(problems))


def _against_ledger(pdf, ledger: dict, edited: set, key: bytes) -> tuple[list[str], list]:
    """Each slip of the PDF against the ledger: its statements exist, its code is the ledger's, no
    statement of it was altered after its digest. Returns ``(problems, the ledger's slips)``."""
    problems: list[str] = []
    slips = []
    for reg, claimed in pdf.slips:
        slip = ledger.get(reg)
        bad = [st.statement_id for st in slip.statements if st.statement_id in edited] if slip else []
        if slip is None:
            problems.append(f"{reg}: no statements in the ledger for {pdf.first}..{pdf.last}")
        else:
            if code(key, slip, pdf.header) != claimed:
                problems.append(f"{reg}: code {claimed} does not match the ledger (the slip or the ledger changed)")
            if bad:
                problems.append(f"{reg}: statement {', '.join(bad)} no longer matches its digest (its "
                                "lines or total were altered outside the ledger): not proof of pay; "
                                "run `portgate pay close` for these days")
            if not problems:
                slips.append(slip)
    return problems, slips


def _against_render(pdf, slips: list, key: bytes, tokens, path) -> list[str]:
    """The PDF's pages against the ledger's slips rendered again: the same page count, each page's
    text the same (the first difference named), and nothing added to the file."""
    from central.pay.payslip_pdf import render  # lazy: ReportLab only when a PDF is checked

    problems: list[str] = []
    data, _pages = render(slips, key, tz=pdf.tz, date_from=pdf.first, date_to=pdf.last, office=pdf.office,
                          header=pdf.header, tokens=tokens)
    rendered = PdfReader(io.BytesIO(data))
    expected = page_texts(rendered)
    if len(expected) != len(pdf.pages):
        problems.append(f"{pdf.slips[0][0]}: the PDF has {len(pdf.pages)} page(s), the ledger's slips print "
                        f"{len(expected)} (pages added or removed)")
    for number, (want, got) in enumerate(zip(expected, pdf.pages), start=1):
        want = _statuses_aligned(want, got)
        if want != got:
            footer = _FOOTER.search(want)
            reg = footer.group(1) if footer else pdf.slips[0][0]
            problems.append(f"{reg}: page {number} {_first_difference(want, got)} (edited?)")
            break
    if not problems:
        printed = _as_printed(slips, pdf.pages)
        if printed != slips:
            rendered = PdfReader(io.BytesIO(render(printed, key, tz=pdf.tz, date_from=pdf.first,
                                                   date_to=pdf.last, office=pdf.office, header=pdf.header,
                                                   tokens=tokens)[0]))
        added = _added(pdf, rendered, path)
        if added:
            problems.append(added)
    return problems


def _as_printed(slips: list, pages: list[str]) -> list:
    """``slips`` with each statement's status the one ``pages`` print for it (in order), when that
    is an earlier status of its lifecycle: ``pago`` → ``a pagar`` clears ``paid_at``, ``retido para
    revisão`` clears ``released_at`` too. ``slips`` itself when the pages print another number of
    statuses or none differs (the text check has already compared the statuses)."""
    from central.pay.payslip_pdf import printed_status as _status  # lazy: reportlab, as render in verify

    printed = [found for page in pages for found in _STATUS.findall(page)]
    views = [st for slip in slips for st in slip.statements]
    if len(printed) != len(views):
        return slips
    replaced = iter([dataclasses.replace(st, paid_at=None, paid_ref=None,
                                         released_at=None if status == "retido para revisão" else st.released_at)
                     if status != _status(st) and status in _EARLIER[_status(st)] else st
                     for st, status in zip(views, printed)])
    made = [dataclasses.replace(slip, statements=tuple(next(replaced) for _ in slip.statements)) for slip in slips]
    return slips if made == slips else made


def _added(pdf: _Pdf, rendered: PdfReader, path) -> str | None:
    """The first thing the PDF holds beyond what the renderer writes (``central.pay.slip_structure``)
    as a problem line naming the registration (the page's, or the first slip's); None when nothing.
    ``BadInput`` when an object of the PDF cannot be read."""
    try:
        with _quiet_pypdf():
            found = additions(pdf.data, pdf.reader, rendered)
    except (PdfReadError, OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _unreadable(pdf.data, path) from exc
    if found is None:
        return None
    number, what = found
    if number is None:
        return f"{pdf.slips[0][0]}: {what} (edited?)"
    footer = _FOOTER.search(pdf.pages[number - 1])
    reg = footer.group(1) if footer else pdf.slips[0][0]
    return f"{reg}: page {number} {what} (edited?)"
