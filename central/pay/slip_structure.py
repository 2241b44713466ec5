"""What a payslip PDF may hold besides its text: exactly what ``central.pay.payslip_pdf`` writes.

A PDF reader shows more than a page's content stream: annotations (``/Annots``: a FreeText box
over a total), form XObjects, optional content, actions (``/OpenAction``, ``/AA``, JavaScript in
``/Names``), forms (``/AcroForm``), a crop box on the page tree, and a later revision appended to
the file (an incremental update) that replaces any object. The text comparison of
``central.pay.verify_slip`` sees none of these, so :func:`additions` compares the structure of the
PDF under verification with the structure of the PDF the ledger renders now (same renderer):

- one revision: the file holds one ``startxref`` (an incremental update appends another);
- the document catalog, the page tree nodes and the document info hold the keys the renderer
  writes, the catalog's values and the title are the renderer's;
- each page holds the keys the renderer writes (no ``/Annots``, ``/AA``, ``/Group``, ...), the same
  media box, rotation and transition, resources of the same kinds with the same font and
  XObject names (none added), and one content stream as the renderer writes;
- each font the renderer's page names is there and equals the renderer's font, resolved and compared
  recursively (:func:`_difference`): ``/Widths``, ``/FirstChar``/``/LastChar``, ``/Encoding`` (and
  its ``/Differences``), ``/ToUnicode``, ``/FontDescriptor`` (``/FontBBox``, ``/Flags``,
  ``/ItalicAngle``, ...) and the embedded font program. A stream is compared by its decoded bytes
  and its dictionary without ``/Length``, ``/Filter`` and ``/DecodeParms`` (the same bytes stored
  compressed another way show the same): the renderer's subsets, ToUnicode maps and font programs
  are byte for byte the same for the same slips, so nothing else is ignored;
- each image (the QR code of the verification address) is the renderer's, compared as the fonts;
- each page's content stream is the renderer's operator for operator (no drawing added: a white
  box over a figure is an ``re f`` the renderer never writes), and every operand but the shown
  strings is the renderer's (colours, positions, fonts, transforms); the strings themselves are
  the text ``verify_slip`` compares.

Not compared: bytes after the last ``%%EOF`` (no reader shows them).
"""

from __future__ import annotations

from pypdf import PdfReader
from pypdf.generic import ContentStream, StreamObject

_SHOWN = {b"Tj", b"TJ", b"'", b'"'}  # the strings of these are compared as text by verify_slip
_PAGE_VALUES = ("/MediaBox", "/Rotate", "/Trans", "/CropBox", "/BleedBox", "/TrimBox", "/ArtBox")
_STORAGE = {"/Length", "/Filter", "/DecodeParms"}  # how a stream is stored, not what it holds
_NAMED_RESOURCES = ("/Font", "/XObject", "/ExtGState", "/Properties", "/Pattern", "/Shading", "/ColorSpace")


def revisions(data: bytes) -> int:
    """How many revisions the PDF bytes hold: its ``startxref`` keywords (the renderer writes one,
    each incremental update appends one)."""
    return data.count(b"startxref")


def _keys(obj) -> set[str]:
    return {str(k) for k in obj.get_object().keys()} if obj is not None else set()


def _plain(value):
    """``value`` resolved and made comparable (indirect references followed, PDF objects made
    Python lists, dicts, numbers and strings)."""
    value = value.get_object() if hasattr(value, "get_object") else value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if str(k) != "/Parent"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _difference(got, want, path: str = "") -> str | None:
    """The path (``/FontDescriptor/FontBBox``, ``/Widths[3]``, ``/ToUnicode`` for a stream's bytes;
    ``""`` for the object itself) of the first place where ``got`` differs from the renderer's
    ``want``, both resolved through indirect references; None when they are equal. The walk follows
    ``want`` (the renderer's acyclic objects), so a reference cycle in ``got`` ends it. Streams:
    decoded bytes and dictionary without ``_STORAGE``. pypdf's errors decoding a stream propagate."""
    got = got.get_object() if hasattr(got, "get_object") else got
    want = want.get_object() if hasattr(want, "get_object") else want
    if isinstance(want, StreamObject):
        if not isinstance(got, StreamObject) or got.get_data() != want.get_data():
            return path
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return path
        keys = lambda d: {str(k) for k in d} - (_STORAGE if isinstance(d, StreamObject) else set())  # noqa: E731
        extra = sorted(keys(got) ^ keys(want))
        if extra:
            return path + extra[0]
        for key in sorted(keys(want)):
            found = _difference(got[key], want[key], path + key)
            if found is not None:
                return found
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return path
        return next((found for i, (g, w) in enumerate(zip(got, want))
                     if (found := _difference(g, w, f"{path}[{i}]")) is not None), None)
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (got, want))
    return None if (numbers or type(got) is type(want)) and got == want else path


def _fonts(got_res, want_res) -> str | None:
    """What differs between the page's fonts and the renderer's (names already checked added), or
    None: ``font /F2+0 (AAAAAA+DejaVuSans) has a /Widths[3] that is not the office's``."""
    got_fonts = got_res.get_object().get("/Font") if got_res is not None else None
    want_fonts = want_res.get_object().get("/Font") if want_res is not None else None
    if want_fonts is None:
        return None
    got_fonts = got_fonts.get_object() if got_fonts is not None else {}
    for name, wanted in sorted(want_fonts.get_object().items()):
        base = str(wanted.get_object().get("/BaseFont", "")).lstrip("/")
        said = f"font {name} ({base})" if base else f"font {name}"
        if name not in got_fonts:
            return f"lacks the {said}"
        found = _difference(got_fonts[name], wanted)
        if found is not None:
            what = f"a {found} that is" if found else "a dictionary that is"
            return f"has a {said} with {what} not the office's (it draws the text otherwise)"
    return None


def _images(got_res, want_res) -> str | None:
    """What differs between the page's XObjects (the QR code image of the verification address)
    and the renderer's, or None: an image replaced under the same name sends a reader elsewhere."""
    want = want_res.get_object().get("/XObject") if want_res is not None else None
    if want is None:
        return None
    got = got_res.get_object().get("/XObject") if got_res is not None else None
    got = got.get_object() if got is not None else {}
    for name, wanted in sorted(want.get_object().items()):
        if name not in got:
            return f"lacks the image {name}"
        if _difference(got[name], wanted) is not None:
            return f"has an image {name} that is not the office's (its QR code leads elsewhere)"
    return None


def _tree_nodes(node):
    """The intermediate nodes of the page tree under ``node`` (``/Type /Pages``), ``node`` first."""
    node = node.get_object()
    yield node
    for kid in node.get("/Kids", []):
        kid = kid.get_object()
        if kid.get("/Type") == "/Pages":
            yield from _tree_nodes(kid)


def _document(got: PdfReader, want: PdfReader) -> str | None:
    """What the document level of ``got`` holds that ``want`` does not, or None."""
    got_root, want_root = got.trailer["/Root"].get_object(), want.trailer["/Root"].get_object()
    extra = sorted(_keys(got_root) - _keys(want_root))
    if extra:
        return f"the document catalog carries {', '.join(extra)}, which the office never writes"
    for key in sorted(_keys(want_root) - {"/Pages"}):
        if _plain(got_root.get(key)) != _plain(want_root.get(key)):
            return f"the document catalog's {key} is not the office's"
    for node in _tree_nodes(got_root["/Pages"]):
        extra = sorted(_keys(node) - {"/Type", "/Kids", "/Count", "/Parent"})
        if extra:
            return f"the page tree carries {', '.join(extra)}, which the office never writes"
    got_info, want_info = got.trailer.get("/Info"), want.trailer.get("/Info")
    extra = sorted(_keys(got_info) - _keys(want_info))
    if extra:
        return f"the document information carries {', '.join(extra)}, which the office never writes"
    if _plain(got_info.get("/Title") if got_info else None) != _plain(want_info.get("/Title")):
        return "the document title is not the office's"
    return None


def _operations(page, reader: PdfReader) -> list[tuple[bytes, list]]:
    contents = page.get_contents()
    if contents is None:
        return []
    return [(op, [] if op in _SHOWN else _plain(operands))
            for operands, op in ContentStream(contents, reader).operations]


def _page(got, want, got_reader: PdfReader, want_reader: PdfReader) -> str | None:
    """What page ``got`` holds that the renderer's page ``want`` does not, or None."""
    extra = sorted(_keys(got) - _keys(want) - {"/Parent"})
    if extra:
        kinds = {"/Annots": "annotations", "/AA": "actions", "/Group": "a transparency group"}
        said = ", ".join(f"{k} ({kinds[k]})" if k in kinds else k for k in extra)
        return f"carries {said}, which the office never writes: a reader shows what the slip does not say"
    for key in _PAGE_VALUES:
        if _plain(got.get(key)) != _plain(want.get(key)):
            return f"has a {key} that is not the office's"
    got_res, want_res = got.get("/Resources"), want.get("/Resources")
    extra = sorted(_keys(got_res) - _keys(want_res))
    if extra:
        return f"has resources {', '.join(extra)}, which the office never writes"
    for kind in _NAMED_RESOURCES:
        added = sorted(_keys(got_res.get_object().get(kind)) - _keys(want_res.get_object().get(kind)))
        if added:
            return f"has {kind} {', '.join(added)}, which the office never writes"
    found = _fonts(got_res, want_res)
    if found:
        return found
    found = _images(got_res, want_res)
    if found:
        return found
    got_streams, want_streams = got.get("/Contents"), want.get("/Contents")
    count = lambda c: len(c.get_object()) if isinstance(c.get_object(), list) else int(c is not None)  # noqa: E731
    if count(got_streams) != count(want_streams):
        return "has content streams added or removed"
    got_ops, want_ops = _operations(got, got_reader), _operations(want, want_reader)
    if [op for op, _ in got_ops] != [op for op, _ in want_ops]:
        return "draws what the office's slip does not (operators added, removed or reordered)"
    for (op, operands), (_op, wanted) in zip(got_ops, want_ops):
        if operands != wanted:
            return f"draws with {op.decode(errors='replace')} operands the office's slip does not use"
    return None


def additions(data: bytes, got: PdfReader, want: PdfReader) -> tuple[int | None, str] | None:
    """The first thing the PDF ``got`` (its bytes ``data``) holds beyond the renderer's ``want``:
    ``(None, what)`` for the document, ``(page number from 1, what)`` for a page; None when its
    structure is the renderer's. Pages are compared pairwise; the caller checks the page count.
    pypdf's ``PdfReadError`` for a damaged object propagates."""
    if revisions(data) != 1:
        return None, (f"the file holds {revisions(data)} revisions (an update appended after it was "
                      "made replaces what a reader shows)")
    found = _document(got, want)
    if found:
        return None, found
    for number, (page, wanted) in enumerate(zip(got.pages, want.pages), start=1):
        found = _page(page, wanted, got, want)
        if found:
            return number, found
    return None
