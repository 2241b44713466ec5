"""``portgate pay verify-slip`` against forged payslips: real PDFs from ``central.pay.payslip_pdf``
for the ledger of ``tests.central.web.paydata`` (V017 is RULES.md P worked example 2, R$ 696,60),
edited in their content stream with pypdf, or with something added that a reader shows beyond the
content (annotations, form XObjects, actions, optional content, an appended revision). Every
printed word or figure that differs from the ledger's slip fails (exit 1), and so does every addition."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from pypdf import PdfReader, PdfWriter
from pypdf.annotations import FreeText
from pypdf.generic import (ArrayObject, DecodedStreamObject, DictionaryObject, NameObject, NumberObject,
                           TextStringObject)
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cli import main
from central.db import make_engine
from central.ledger.migrate import upgrade_engine
from central.ledger.tables import statements
from central.pay.payslip import build_slips
from central.pay.payslip_pdf import render
from central.pay.verify_slip import page_texts
from central.pay.statements_store import mark_paid, release_holds
from central.registry.store import import_files
from tests.central.web.paydata import FIRST, LAST, raise_first_line, seed_pay

DEMO = Path(__file__).resolve().parents[3] / "config" / "demo"
KEY = b"k" * 32
Z = ZoneInfo("America/Sao_Paulo")


def _seeded_ledger(path):
    """A migrated SQLite ledger at ``path`` with the demo registry and ``seed_pay``'s shifts."""
    engine = make_engine(f"sqlite:///{path}")
    upgrade_engine(engine)
    with Session(engine) as s, s.begin():
        import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="t",
                     now=dt.datetime(2026, 4, 5, tzinfo=dt.UTC))
    seed_pay(engine)
    return engine


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    """A SQLite ledger with the demo registry and the four paid shifts of ``seed_pay``; its URL."""
    engine = _seeded_ledger(tmp_path_factory.mktemp("ledger") / "ledger.db")
    yield engine
    engine.dispose()


def _pdf(engine, registration=None, first=FIRST, last=LAST) -> bytes:
    with engine.connect() as conn:
        slips = build_slips(conn, first, last, registration=registration)
    return render(slips, KEY, tz=Z, date_from=first, date_to=last)[0]


def _verify(engine, tmp_path, data: bytes, *, key: bytes | None = KEY, extra=()) -> int:
    path = tmp_path / "slip.pdf"
    path.write_bytes(data)
    args = ["pay", "verify-slip", "--db", engine.url.render_as_string(hide_password=False)]
    if key is not None:
        (tmp_path / "payslip.key").write_bytes(key)
        args += ["--key-file", str(tmp_path / "payslip.key")]
    return main([*args, *extra, str(path)])


def _edited(data: bytes, old: bytes, new: bytes) -> bytes:
    """``data`` with ``old`` replaced by ``new`` in the first page content holding it."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    for page in writer.pages:
        content = page.get_contents()
        raw = content.get_data()
        if old in raw:
            content.set_data(raw.replace(old, new, 1))
            page[NameObject("/Contents")] = content
            break
    else:
        raise AssertionError(f"{old!r} is not in the page content")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _text(data: bytes) -> str:
    return "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(data)).pages)


def test_the_slip_and_the_batch_as_made_verify(ledger, tmp_path, capsys):
    assert _verify(ledger, tmp_path, _pdf(ledger, "V017")) == 0
    assert "1 slip(s) verified against the ledger" in capsys.readouterr().out
    assert _verify(ledger, tmp_path, _pdf(ledger)) == 0
    assert "4 slip(s) verified against the ledger" in capsys.readouterr().out


FORGERIES = [  # (what, bytes in the page content, replacement, text the forged page shows)
    ("worker name", b"ria Almeida)", b"ria Almeido)", "Quitéria Almeido"),
    ("shift date", b"(15/03/2026)", b"(16/03/2026)", "Turno 16/03/2026 19-01"),
    ("category", b"(vigia)", b"(conferente)", "Categoria: conferente"),
    ("rulebook id", b"(decreto-83611-1979)", b"(decreto-83611-1989)", "usada: decreto-83611-1989"),
    ("extra line", b"\nET", b"\n1 0 0 1 300 300 Tm\n(R$ 1.000,00) Tj\nET", "R$ 1.000,00"),
    ("amount", b"(R$ 108,00)", b"(R$ 188,00)", "R$ 188,00"),
    ("status", b"\\(a pagar\\)", b"\\(pago\\)", "Total do turno (pago)"),
]


@pytest.mark.parametrize("what,old,new,shown", FORGERIES, ids=[f[0] for f in FORGERIES])
def test_a_forged_slip_fails_naming_the_registration_and_the_text(ledger, tmp_path, capsys, what, old, new, shown):
    forged = _edited(_pdf(ledger, "V017"), old, new)
    assert shown in _text(forged)  # the forgery is what a reader of the PDF sees
    assert _verify(ledger, tmp_path, forged) == 1
    err = capsys.readouterr().err
    assert "FAILED V017: page 1 prints" in err and "where the ledger's slip has" in err


def test_a_batch_with_a_page_duplicated_fails_on_the_page_count(ledger, tmp_path, capsys):
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(_pdf(ledger))))
    writer.add_page(writer.pages[0])
    out = io.BytesIO()
    writer.write(out)
    assert _verify(ledger, tmp_path, out.getvalue()) == 1
    assert "the PDF has 5 page(s), the ledger's slips print 4" in capsys.readouterr().err


def test_a_slip_printed_before_payment_verifies_after_it(ledger, tmp_path):
    data = _pdf(ledger, "V001")
    assert "Total do turno (a pagar)" in _text(data)
    with ledger.connect() as conn:
        ids = list(conn.execute(select(statements.c.statement_id).where(statements.c.registration == "V001"))
                   .scalars())
    mark_paid(ledger, ids, dt.datetime(2026, 4, 6, tzinfo=dt.UTC), "batch-1",
              now=dt.datetime(2026, 4, 6, tzinfo=dt.UTC))
    assert "Total do turno (pago)" in _text(_pdf(ledger, "V001"))
    assert _verify(ledger, tmp_path, data) == 0


def test_a_white_box_over_a_figure_is_refused(ledger, tmp_path, capsys):
    """A drawing without text leaves the extracted text as the ledger's; the content stream's
    operators are the renderer's, so the added ``re f`` fails."""
    covered = _edited(_pdf(ledger, "V017"), b"\nET\n", b"\nET\nq 1 g 480 636 60 12 re f Q\n")
    assert "R$ 696,60" in _text(covered)
    assert _verify(ledger, tmp_path, covered) == 1
    assert "FAILED V017: page 1 draws what the office's slip does not" in capsys.readouterr().err


def test_a_moved_figure_is_refused(ledger, tmp_path, capsys):
    """Same text, same operators, a position moved (the title pushed off the page): refused."""
    moved = _edited(_pdf(ledger, "V017"), b"1 0 0 1 51.02 790.87 Tm", b"1 0 0 1 51.02 990.87 Tm")
    assert _verify(ledger, tmp_path, moved) == 1
    assert "draws with Tm operands the office's slip does not use" in capsys.readouterr().err


def _written(writer: PdfWriter) -> bytes:
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _annotated(data: bytes, *, incremental: bool = False) -> bytes:
    """The tester's forgery: a FreeText box with another total over the slip's."""
    writer = (PdfWriter(io.BytesIO(data), incremental=True) if incremental
              else PdfWriter(clone_from=PdfReader(io.BytesIO(data))))
    writer.add_annotation(0, FreeText(text="R$ 996,60", rect=(490, 630, 560, 650), background_color="ffffff"))
    return _written(writer)


def _form_xobject(data: bytes) -> bytes:
    """A form XObject hiding the total, added to the page's resources and drawn by an added
    content stream (the page's own text untouched)."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    page = writer.pages[0]
    form = DecodedStreamObject()
    form.set_data(b"q 1 g 480 630 80 20 re f Q")  # a white box over the total, drawn outside the page content
    form.update({NameObject("/Type"): NameObject("/XObject"), NameObject("/Subtype"): NameObject("/Form"),
                 NameObject("/BBox"): ArrayObject([NumberObject(0), NumberObject(0), NumberObject(600),
                                                   NumberObject(850)]),
                 NameObject("/Resources"): page["/Resources"]})
    resources = page["/Resources"].get_object()
    resources[NameObject("/XObject")] = DictionaryObject({NameObject("/Fm9"): writer._add_object(form)})
    drawing = DecodedStreamObject()
    drawing.set_data(b"q /Fm9 Do Q")
    page[NameObject("/Contents")] = ArrayObject([page.raw_get("/Contents"), writer._add_object(drawing)])
    return _written(writer)


def _in_catalog(key: str, value_of):
    def forge(data: bytes) -> bytes:
        writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
        writer._root_object[NameObject(key)] = value_of(writer)
        return _written(writer)
    return forge


def _on_page(key: str, value_of):
    def forge(data: bytes) -> bytes:
        writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
        writer.pages[0][NameObject(key)] = value_of(writer)
        return _written(writer)
    return forge


def _javascript(writer: PdfWriter):
    return DictionaryObject({NameObject("/S"): NameObject("/JavaScript"),
                             NameObject("/JS"): TextStringObject("app.alert('R$ 996,60')")})


def _appended_revision(data: bytes) -> bytes:
    """A second revision appended that changes nothing a reader shows (still not the file made)."""
    writer = PdfWriter(io.BytesIO(data), incremental=True)
    writer.add_metadata({"/Keywords": "revisto"})
    return _written(writer)


def _optional_content(writer: PdfWriter):
    group = writer._add_object(DictionaryObject({NameObject("/Type"): NameObject("/OCG"),
                                                 NameObject("/Name"): TextStringObject("total")}))
    return DictionaryObject({NameObject("/OCGs"): ArrayObject([group]),
                             NameObject("/D"): DictionaryObject({NameObject("/OFF"): ArrayObject([group])})})


ADDITIONS = [  # (what, forge(bytes) -> bytes, words of the refusal)
    ("FreeText annotation", _annotated, "page 1 carries /Annots (annotations)"),
    ("annotation as an incremental update", lambda d: _annotated(d, incremental=True), "2 revisions"),
    ("second appended revision", _appended_revision, "2 revisions"),
    ("form XObject", _form_xobject, "page 1 has resources /XObject"),
    ("OpenAction JavaScript", _in_catalog("/OpenAction", _javascript), "catalog carries /OpenAction"),
    ("JavaScript in Names", _in_catalog("/Names", lambda w: DictionaryObject(
        {NameObject("/JavaScript"): DictionaryObject({NameObject("/Names"): ArrayObject(
            [TextStringObject("x"), _javascript(w)])})})), "catalog carries /Names"),
    ("optional content", _in_catalog("/OCProperties", _optional_content), "catalog carries /OCProperties"),
    ("page action", _on_page("/AA", lambda w: DictionaryObject({NameObject("/O"): _javascript(w)})),
     "page 1 carries /AA (actions)"),
    ("crop box hiding lines", _on_page("/CropBox", lambda w: ArrayObject(
        [NumberObject(0), NumberObject(660), NumberObject(595), NumberObject(842)])), "page 1 carries /CropBox"),
]


@pytest.mark.parametrize("what,forge,said", ADDITIONS, ids=[a[0] for a in ADDITIONS])
def test_what_a_reader_shows_beyond_the_signed_content_is_refused(ledger, tmp_path, capsys, what, forge, said):
    """Each addition leaves the extracted page text as the ledger's (the text check alone passes
    it) and is refused on its own, naming the registration (exit 1)."""
    data = _pdf(ledger, "V017")
    forged = forge(data)
    assert page_texts(PdfReader(io.BytesIO(forged))) == page_texts(PdfReader(io.BytesIO(data)))
    assert _verify(ledger, tmp_path, forged) == 1
    err = capsys.readouterr().err
    assert "FAILED V017: " in err and said in err, err


def test_a_batch_with_an_annotation_on_a_later_page_names_that_page(ledger, tmp_path, capsys):
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(_pdf(ledger))))
    writer.add_annotation(2, FreeText(text="R$ 996,60", rect=(490, 630, 560, 650)))
    assert _verify(ledger, tmp_path, _written(writer)) == 1
    assert "page 3 carries /Annots" in capsys.readouterr().err


def test_an_empty_period_slip_is_refused_as_nothing_to_verify(ledger, tmp_path, capsys):
    empty = _pdf(ledger, first=dt.date(2026, 1, 1), last=dt.date(2026, 1, 31))
    assert "Nenhum demonstrativo no período" in _text(empty)
    assert _verify(ledger, tmp_path, empty) == 2
    err = capsys.readouterr().err
    assert "no slip to verify" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("key", [Path("/etc/passwd").read_bytes(), b"", b"k" * 31, b"k" * 33],
                         ids=["passwd", "empty", "short", "long"])
def test_a_key_file_that_is_not_a_payslip_key_is_refused(ledger, tmp_path, capsys, key):
    assert _verify(ledger, tmp_path, _pdf(ledger, "V017"), key=key) == 2
    err = capsys.readouterr().err
    assert "not a payslip key" in err and len(err.strip().splitlines()) == 1


def test_config_with_db_is_refused(ledger, tmp_path, capsys):
    config = tmp_path / "central.toml"
    config.write_text("")
    assert _verify(ledger, tmp_path, _pdf(ledger, "V017"), extra=["--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "not both" in err and len(err.strip().splitlines()) == 1


def test_neither_config_nor_key_is_refused(ledger, tmp_path, capsys):
    assert _verify(ledger, tmp_path, _pdf(ledger, "V017"), key=None) == 2
    assert "give --config central.toml, or --db URL --key-file FILE" in capsys.readouterr().err


@pytest.mark.parametrize("content, said", [
    ("passwd", "not a PDF file (it does not start with %PDF-)"),
    ("truncated", "a damaged PDF: it starts as a PDF but its contents cannot be read (cut short or altered?)"),
])
def test_a_file_that_is_not_a_pdf_is_one_line_without_pypdf_warnings(ledger, tmp_path, content, said):
    """Through the real command (pypdf's warnings go to stderr by logging's last-resort handler,
    which pytest's own log capture would hide in-process): one line saying which, none of pypdf's
    own words (``Stream has ended unexpectedly``)."""
    import subprocess
    import sys

    path = tmp_path / "slip.pdf"
    data = Path("/etc/passwd").read_bytes() if content == "passwd" else _pdf(ledger, "V017")[:400]
    path.write_bytes(data)
    (tmp_path / "payslip.key").write_bytes(KEY)
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "pay", "verify-slip", "--db", ledger.url.render_as_string(hide_password=False),
         "--key-file", str(tmp_path / "payslip.key"), str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [f"portgate: {path}: {said}"], done.stderr


def test_a_slip_of_a_statement_whose_line_was_edited_in_the_ledger_is_refused(tmp_path, capsys):
    """The ledger's own rows edited (one line raised by 1,00, the total left): a slip rendered from
    them carries a matching code, and is still refused, naming the statement."""
    engine = _seeded_ledger(tmp_path / "edited.db")
    try:
        sid = raise_first_line(engine, "V017")
        capsys.readouterr()
        assert _verify(engine, tmp_path, _pdf(engine, "V017")) == 1
        out = capsys.readouterr()
        assert f"statement {sid} no longer matches its digest" in out.out + out.err
        assert "verified" not in (out.out + out.err).replace("not verified", "")
    finally:
        engine.dispose()


def _font_edited(data: bytes, edit) -> bytes:
    """``data`` with ``edit(writer, font)`` applied to the regular DejaVu font of page 1 (the pay
    lines' font), the page's text and content untouched."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    fonts = writer.pages[0]["/Resources"]["/Font"]
    name = next(n for n, f in fonts.items() if str(f.get_object()["/BaseFont"]).endswith("+DejaVuSans"))
    edit(writer, fonts[name].get_object())
    return _written(writer)


def _zero_widths(writer, font):
    font[NameObject("/Widths")] = ArrayObject([NumberObject(0)] * len(font["/Widths"]))


def _differences(writer, font):
    """An ``/Encoding`` whose ``/Differences`` map the digits' codes to other glyph names."""
    font[NameObject("/Encoding")] = DictionaryObject({
        NameObject("/Type"): NameObject("/Encoding"),
        NameObject("/Differences"): ArrayObject([NumberObject(48), NameObject("/one"), NameObject("/zero")])})


def _to_unicode(writer, font):
    """The ToUnicode map with code 0x5A ("Z", not printed on the slip, so the text check still
    passes) mapped to "9". (A code the slip prints, remapped, already fails the text check.)"""
    data = font["/ToUnicode"].get_object().get_data()
    assert b"<5A> <005A>" in data
    replaced = DecodedStreamObject()
    replaced.set_data(data.replace(b"<5A> <005A>", b"<5A> <0039>"))
    font[NameObject("/ToUnicode")] = writer._add_object(replaced)


FONT_EDITS = [  # (what, edit, words of the refusal)
    ("widths zeroed", _zero_widths, "(AAAAAA+DejaVuSans) with a /Widths[0] that is not the office's"),
    ("encoding differences", _differences, "(AAAAAA+DejaVuSans) with a /Encoding that is not the office's"),
    ("ToUnicode changed", _to_unicode, "(AAAAAA+DejaVuSans) with a /ToUnicode that is not the office's"),
]


@pytest.mark.parametrize("what,edit,said", FONT_EDITS, ids=[f[0] for f in FONT_EDITS])
def test_a_slip_whose_font_was_edited_is_refused_naming_page_and_font(ledger, tmp_path, capsys, what, edit, said):
    """The tester's forgery and its kin: the page's content and font names are the renderer's, one
    font dictionary is not (the pay lines drawn as blobs, other glyphs, or other text copied)."""
    data = _pdf(ledger, "V017")
    forged = _font_edited(data, edit)
    assert page_texts(PdfReader(io.BytesIO(forged))) == page_texts(PdfReader(io.BytesIO(data)))
    assert _verify(ledger, tmp_path, forged) == 1
    err = capsys.readouterr().err
    assert "FAILED V017: page 1 has a font /F" in err and said in err, err
    assert len(err.strip().splitlines()) == 1


def test_a_slip_stored_with_its_font_streams_uncompressed_still_verifies(ledger, tmp_path, capsys):
    """How a stream is stored is not what it holds: the font program and ToUnicode map decoded and
    written back without ``/Filter`` verify (their decoded bytes are the renderer's)."""
    def decompressed(writer, font):
        for holder, key in ((font, "/ToUnicode"), (font["/FontDescriptor"].get_object(), "/FontFile2")):
            old = holder[key].get_object()
            plain = DecodedStreamObject()
            plain.set_data(old.get_data())
            plain.update({k: v for k, v in old.items() if k not in ("/Filter", "/Length", "/DecodeParms")})
            holder[NameObject(key)] = writer._add_object(plain)
    assert _verify(ledger, tmp_path, _font_edited(_pdf(ledger, "V017"), decompressed)) == 0
    assert "1 slip(s) verified against the ledger" in capsys.readouterr().out


def test_a_slip_printed_while_held_verifies_after_the_release(tmp_path, capsys):
    """Printed with ``retido para revisão`` (V008's EARLY_EXIT shift), verified after the office
    released it (the ledger's slip now says ``a pagar``): an earlier status is not an edit, and the
    fonts of the slip as printed are the renderer's."""
    engine = _seeded_ledger(tmp_path / "held.db")
    try:
        data = _pdf(engine, "V008")
        assert "Total do turno (retido para revisão)" in _text(data)
        with engine.connect() as conn:
            ids = list(conn.execute(select(statements.c.statement_id).where(
                statements.c.registration == "V008", statements.c.hold_reason.is_not(None))).scalars())
        release_holds(engine, ids, dt.datetime(2026, 4, 6, tzinfo=dt.UTC), "revisto pelo escritório")
        assert "Total do turno (a pagar)" in _text(_pdf(engine, "V008"))
        assert _verify(engine, tmp_path, data) == 0, capsys.readouterr().err
    finally:
        engine.dispose()
