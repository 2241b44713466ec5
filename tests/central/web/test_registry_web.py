"""Registry screens over the real app (TestClient, SQLite and PostgreSQL): search by name,
registration and every UID form, the worker's page, the audited edit with the CSV import's
validation, the all-or-nothing upload, photos re-encoded at two sizes."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import re

import pytest
from PIL import Image
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from central.config import WebSettings
from central.registry.edit import edit_worker
from central.registry.photos import GATE_MAX_BYTES, reencode
from central.registry.schema import audit_log, cards, downlink_changes, health_exams, workers
from central.web.app import create_app
from portgate.errors import BadInput
from tests.central.web.conftest import SECRET, engine_of, logged_in



@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """The web suite's ``engine``; a test that uses ``registry`` starts with the demo registry in it
    (a copy of a ledger the session imported it into once: tests/central/web/conftest.py's FILLS)."""
    yield from engine_of(request, tmp_path, ledgers, "demo_registry" if "registry" in request.fixturenames else None)


@pytest.fixture
def registry(engine, users):
    """The ledger with config/demo's workers and cards (imported at the session's clock) and the users."""
    return engine


@pytest.fixture
def photo_app(engine, registry, clock, tmp_path):
    return create_app(engine, WebSettings(photos_dir=str(tmp_path / "photos")), SECRET, now=clock, background=False)


def _count(engine, table, *where):
    with engine.connect() as c:
        return c.execute(select(func.count()).select_from(table).where(*where)).scalar()


@pytest.mark.parametrize("query, why", [
    ("0A04A10001", "uid hex"),          # canonical hex
    ("0100A1040A", "uid hex_reversed"),
    ("0077660161", "uid decimal10"),     # DEZ10 of the low 32 bits 04A10001
    ("V001", "registration"),
    ("ana lima", "name"),
])
def test_search_finds_a_worker_by_any_form(app, registry, query, why):
    c, _ = logged_in(app, "inspector")
    r = c.get("/workers", params={"q": query})
    assert r.status_code == 200
    assert 'data-registration="V001"' in r.text and why in r.text


def test_search_with_like_metacharacters_matches_nothing(app, registry):
    c, _ = logged_in(app, "office")
    for q in ("%", "_", "\\", "' OR 1=1 --"):
        r = c.get("/workers", params={"q": q})
        assert r.status_code == 200 and "data-registration" not in r.text, q


def test_the_worker_page_shows_validity_cards_and_record(app, registry):
    c, _ = logged_in(app, "auditor")
    r = c.get("/workers/V001")
    assert r.status_code == 200
    assert "0A04A10001" in r.text and "emitido" in r.text
    assert re.search(r"emitido \d\d/\d\d/\d{4} \d\d:\d\d:\d\d", r.text)  # a card's history spans years
    assert "01/06/2025" in r.text and "24 meses para vigia" in r.text
    assert c.get("/workers/NOPE").status_code == 404


def _shift(engine, clock, *, admit_h: float, end_h: float, exit_h: float | None) -> None:
    """One shift of V001: admitted ``admit_h`` hours from the clock, the period ending ``end_h``
    hours from it, the exit ``exit_h`` hours from it (None: no exit read)."""
    from central.ledger.tables import shifts

    at = clock()

    def h(x):
        return at + dt.timedelta(hours=x)

    with engine.begin() as conn:
        conn.execute(shifts.insert().values(
            shift_id="V001/9300001/x/07-13", registration="V001", ship="9300001", work_date=at.date(),
            period="07-13", function="vigia", berth="B1", period_start=h(admit_h), period_end=h(end_h),
            admit_at=h(admit_h), exit_at=None if exit_h is None else h(exit_h),
            closed_by="exit" if exit_h is not None else "period_end", meal_worked=False, held=False,
            rebuilt_at=at))


@pytest.mark.parametrize("exit_h, end_h, shown", [
    (None, 2.0, "em serviço"),   # aboard: the period runs 2 more hours, no exit yet
    (-3.0, -2.0, "3,0 h"),       # out 3 h ago
    (None, -12.0, "12,0 h"),     # no exit read, the period ended 12 h ago: rest counted from its end
])
def test_the_rest_since_the_last_shift_is_never_negative(app, registry, clock, exit_h, end_h, shown):
    _shift(registry, clock, admit_h=-5.0, end_h=end_h, exit_h=exit_h)
    c, _ = logged_in(app, "auditor")
    r = c.get("/workers/V001")
    rest = r.text.split('id="w-rest">', 1)[1].split("</dd>", 1)[0]
    assert shown in rest and "-" not in rest.split("(")[0]


def test_an_edit_writes_one_audit_row_a_roster_change_and_the_exam_history(app, registry):
    c, token = logged_in(app, "office")
    before = _count(registry, downlink_changes)
    form = {"csrf_token": token, "name": "Ana Lima Souza", "category": "vigia", "status": "active",
            "suspended_from": "", "suspended_until": "", "health_exam_date": "2026-02-01",
            "booklet_revalidated_year": "", "rotation_number": "1"}
    r = c.post("/workers/V001", data=form)
    assert r.status_code == 303 and r.headers["location"] == "/workers/V001?saved=2"
    with Session(registry) as s:
        row = s.execute(select(audit_log).where(audit_log.c.action == "worker.edit")).one()
        assert row.actor == "web:office" and row.subject == "V001"
        assert row.detail["changed"] == {"name": ["Ana Lima", "Ana Lima Souza"],
                                         "health_exam_date": ["2025-06-01", "2026-02-01"]}
        assert s.execute(select(workers.c.name).where(workers.c.registration == "V001")).scalar() == "Ana Lima Souza"
    assert _count(registry, downlink_changes) == before + 1
    assert _count(registry, health_exams, health_exams.c.exam_date == dt.date(2026, 2, 1)) == 1


@pytest.mark.parametrize("field, value, words", [
    ("status", "retired", "situação &#39;retired&#39; não é um dos valores active|suspended|cancelled"),
    ("health_exam_date", "31/02/2026", "data do exame de saúde &#39;31/02/2026&#39; não é uma data válida (dd/mm/aaaa)"),
    ("health_exam_date", "2026-02-31", "data do exame de saúde &#39;2026-02-31&#39; não é uma data válida (dd/mm/aaaa)"),
    ("suspended_from", "2026-03-10", "o início da suspensão 10/03/2026 é depois do fim da suspensão 01/03/2026"),
    ("rotation_number", "-1", "o número de rodízio -1 é negativo"),
    ("name", "", "nome é um campo obrigatório"),
])
def test_a_bad_edit_is_refused_like_a_csv_row_and_writes_nothing(app, registry, field, value, words):
    c, token = logged_in(app, "office")
    form = {"csrf_token": token, "suspended_until": "2026-03-01", field: value}
    r = c.post("/workers/V001", data=form)
    assert r.status_code == 400 and words in r.text
    assert _count(registry, audit_log, audit_log.c.action == "worker.edit") == 0


def test_on_the_english_page_a_bad_edit_names_the_field_in_english(app, registry):
    c, token = logged_in(app, "office")
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    r = c.post("/workers/V001", data={"csrf_token": token, "name": ""})
    assert r.status_code == 400 and "name is required" in r.text and "obrigatório" not in r.text


def test_an_edit_to_a_rotation_number_held_by_another_worker_is_refused_in_pt(app, registry):
    c, token = logged_in(app, "office")
    with Session(registry) as s:
        holder, number = s.execute(select(workers.c.registration, workers.c.rotation_number).where(
            workers.c.registration != "V001", workers.c.category == "vigia",
            workers.c.rotation_number.is_not(None))).first()
    r = c.post("/workers/V001", data={"csrf_token": token, "rotation_number": str(number)})
    assert r.status_code == 400
    assert f"o número de rodízio {number} já pertence a {holder} (vigia)" in r.text
    assert _count(registry, audit_log, audit_log.c.action == "worker.edit") == 0


def test_a_too_long_or_undecodable_name_is_refused_in_pt_and_nothing_saved(app, registry):
    c, token = logged_in(app, "office")
    r = c.post("/workers/V001", data={"csrf_token": token, "name": "x" * 200_000})
    assert r.status_code == 400 and "o nome tem mais de 255 caracteres" in r.text
    r = c.post("/workers/V001", content=f"csrf_token={token}&name=Jo%E3o".encode(),
               headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 400 and "não é texto UTF-8" in r.text
    assert _count(registry, audit_log, audit_log.c.action == "worker.edit") == 0


def test_an_edit_that_changes_nothing_writes_nothing(registry, clock):
    with Session(registry) as s, s.begin():
        _w, changed = edit_worker(s, "V001", {"name": "Ana Lima"}, actor="web:x", now=clock())
    assert changed == {}
    assert _count(registry, audit_log, audit_log.c.action == "worker.edit") == 0
    with Session(registry) as s, pytest.raises(BadInput, match="no worker"):
        edit_worker(s, "NOPE", {}, actor="web:x", now=clock())


@pytest.mark.parametrize("typed", ["vigia ", " Vigia", "VIGIA", "vigia\u00a0"])
def test_a_category_typed_with_blanks_or_capitals_is_the_same_category_and_changes_nothing(app, registry, typed):
    c, token = logged_in(app, "office")
    r = c.post("/workers/V001", data={"csrf_token": token, "category": typed}, follow_redirects=False)
    assert r.status_code in (200, 303)
    assert _count(registry, audit_log, audit_log.c.action == "worker.edit") == 0
    with Session(registry) as s:
        assert set(s.execute(select(workers.c.category)).scalars()) <= {"vigia", "estivador"}


def test_a_category_typed_with_blanks_and_a_taken_rotation_number_is_refused_as_the_same_list(app, registry):
    c, token = logged_in(app, "office")
    r = c.post("/workers/V001", data={"csrf_token": token, "category": " Vigia ", "rotation_number": "2"})
    assert r.status_code == 400 and "o número de rodízio 2 já pertence a V002 (vigia)" in r.text


def test_only_the_office_edits(app, registry):
    c, token = logged_in(app, "inspector")
    assert c.post("/workers/V001", data={"csrf_token": token, "name": "X"}).status_code == 403
    assert c.post("/workers/V001", data={"name": "X"}).status_code == 403


def test_an_upload_with_bad_rows_names_each_and_writes_nothing(app, registry):
    c, token = logged_in(app, "office")
    workers_csv = ("registration,name,category,status,suspended_from,suspended_until,health_exam_date,"
                   "booklet_revalidated_year,rotation_number\n"
                   "N001,Nova,vigia,active,,,2026-01-10,,90\n"
                   "N002,Bad Status,vigia,retired,,,2026-01-10,,91\n")
    cards_csv = "uid,kind,registration,status\n0A04A19001,control,N001,active\n0A04A19002,control,GHOST,active\n"
    before = (_count(registry, workers), _count(registry, cards), _count(registry, audit_log))
    r = c.post("/workers/upload", data={"csrf_token": token},
               files={"workers": ("new-workers.csv", workers_csv.encode()), "cards": ("new-cards.csv", cards_csv.encode())})
    assert r.status_code == 400
    assert "new-workers.csv:3" in r.text and "status" in r.text
    assert (_count(registry, workers), _count(registry, cards), _count(registry, audit_log)) == before
    good = workers_csv.replace("retired", "active")
    r = c.post("/workers/upload", data={"csrf_token": token},
               files={"workers": ("w.csv", good.encode()), "cards": ("c.csv", cards_csv.encode())})
    assert r.status_code == 400 and "c.csv:3: matrícula &#39;GHOST&#39; não está cadastrada" in r.text
    r = c.post("/workers/upload", data={"csrf_token": token},
               files={"workers": ("w.csv", good.encode()), "cards": ("c.csv", cards_csv.replace("GHOST", "N002").encode())})
    assert r.status_code == 200 and 'id="upload-done"' in r.text
    assert "Importado: 2 trabalhador(es) novo(s) ou alterado(s), 2 cartão(ões) emitido(s)</p>" in r.text
    assert _count(registry, workers) == before[0] + 2
    again = (_count(registry, workers), _count(registry, cards), _count(registry, audit_log))
    r = c.post("/workers/upload", data={"csrf_token": token},
               files={"workers": ("w.csv", good.encode()), "cards": ("c.csv", cards_csv.replace("GHOST", "N002").encode())})
    assert r.status_code == 200
    assert "Nada mudou (4 linha(s) já estava(m) assim no cadastro)" in r.text and "cards 2" not in r.text
    assert (_count(registry, workers), _count(registry, cards), _count(registry, audit_log)) == again


def test_a_ships_upload_with_a_bad_row_rolls_back_the_workers_too(app, registry):
    c, token = logged_in(app, "office")
    w = ("registration,name,category,status,suspended_from,suspended_until,health_exam_date,"
         "booklet_revalidated_year,rotation_number\nN010,Nova,vigia,active,,,2026-01-10,,90\n")
    ships = ("ship,ship_name,voyage,berth,gate_id,arrival,departure\n"
             "9300001,Aurora,long_haul,floating,g1,2026-03-15T06:00:00-03:00,\n")
    r = c.post("/workers/upload", data={"csrf_token": token},
               files={"workers": ("w.csv", w.encode()), "ships": ("ships.csv", ships.encode())})
    assert r.status_code == 400 and "ships.csv:2" in r.text
    assert _count(registry, workers, workers.c.registration == "N010") == 0


def _picture(fmt: str, size=(1200, 1600), noise=True) -> bytes:
    import random

    img = Image.new("RGB", size, (200, 150, 100))
    if noise:  # a hard-to-compress picture: a random colour at every second pixel of every second row
        width, height = size
        data = bytearray(img.tobytes())
        row = 3 * ((width + 1) // 2)  # the noise bytes of one row (bytearray slices: ~1000x Python's loop)
        noise = random.Random(1).randbytes(row * ((height + 1) // 2))
        for n, y in enumerate(range(0, height, 2)):
            for c in range(3):
                data[y * width * 3 + c:(y + 1) * width * 3:6] = noise[n * row + c:(n + 1) * row:3]
        img = Image.frombytes("RGB", size, bytes(data))
    out = io.BytesIO()
    img.save(out, fmt)
    return out.getvalue()


def test_reencode_keeps_the_gate_size_under_30_kb_and_strips_metadata():
    office, gate = reencode(_picture("PNG"))
    assert len(gate) <= GATE_MAX_BYTES
    with Image.open(io.BytesIO(gate)) as g, Image.open(io.BytesIO(office)) as o:
        assert g.format == "JPEG" and max(g.size) <= 320 and not g.info.get("exif")
        assert o.format == "JPEG" and max(o.size) <= 800 and o.size[0] > g.size[0]


@pytest.mark.parametrize("data, words", [
    (b"", "empty"),
    (b"GIF89a not a picture", "^the photo is not a JPEG or PNG picture$"),
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "^the photo .*not a .*JPEG or PNG picture$"),
    (b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + b"\x00" * 10, "^the photo .*not a .*JPEG or PNG picture$"),
])
def test_reencode_refuses_what_is_not_a_jpeg_or_png(data, words):
    with pytest.raises(BadInput, match=words) as refused:
        reencode(data)
    assert "object at 0x" not in str(refused.value) and "<_io" not in str(refused.value)


def test_a_decompression_bomb_is_refused_in_plain_words(monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10)  # Pillow's own bomb check, on a small file
    out = io.BytesIO()
    Image.new("RGB", (8, 8)).save(out, "PNG")
    with pytest.raises(BadInput, match="too many pixels") as refused:
        reencode(out.getvalue())
    assert "DOS" not in str(refused.value)


def test_reencode_refuses_a_gif():
    out = io.BytesIO()
    Image.new("RGB", (10, 10)).save(out, "GIF")
    with pytest.raises(BadInput, match="only JPEG or PNG"):
        reencode(out.getvalue())


def test_a_photo_upload_goes_to_the_photos_directory_the_publisher_scans(photo_app, tmp_path):
    from central.broadcast.photos import scan

    c, token = logged_in(photo_app, "office")
    r = c.post("/workers/V001/photo", data={"csrf_token": token},
               files={"photo": ("me.jpg", _picture("JPEG"), "image/jpeg")})
    assert r.status_code == 303
    found = scan(tmp_path / "photos")
    assert list(found) == ["V001"] and found["V001"][0].size <= GATE_MAX_BYTES
    assert c.get("/workers/V001").text.count('id="w-photo"') == 1
    shown = c.get("/workers/V001/photo")
    assert shown.status_code == 200 and shown.headers["content-type"] == "image/jpeg"
    r = c.post("/workers/V001/photo", data={"csrf_token": token}, files={"photo": ("x.jpg", b"nope", "image/jpeg")})
    assert r.status_code == 400
    with Session(photo_app.state.web.engine) as s:
        assert s.execute(select(func.count()).select_from(audit_log)
                         .where(audit_log.c.action == "worker.photo")).scalar() == 1


def test_a_damaged_photo_is_refused_in_our_words_in_pt_and_en_and_pillow_s_only_in_the_log(photo_app):
    """A PNG cut short (a failed copy): the page says so in the page's language, never Pillow's
    English exception; the log keeps Pillow's detail for whoever looks into it."""
    from structlog.testing import capture_logs

    cut = _picture("PNG", size=(200, 200))[:2000]
    c, token = logged_in(photo_app, "office")
    with capture_logs() as logs:
        pt = c.post("/workers/V001/photo", data={"csrf_token": token}, files={"photo": ("me.png", cut, "image/png")})
        assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
        en = c.post("/workers/V001/photo", data={"csrf_token": token}, files={"photo": ("me.png", cut, "image/png")})
        junk = c.post("/workers/V001/photo", data={"csrf_token": token},
                      files={"photo": ("me.png", b"GIF89a not a picture", "image/png")})
    assert pt.status_code == en.status_code == junk.status_code == 400
    assert ("o arquivo da foto está danificado ou incompleto: não é uma imagem JPEG ou PNG legível"
            in pt.text)
    assert "the photo file is damaged or cut short: not a readable JPEG or PNG picture" in en.text
    assert "the photo is not a JPEG or PNG picture" in junk.text
    for page in (pt.text, en.text, junk.text):
        assert not re.search(r"truncated|broken|cannot identify|not processed|image file", page), page
    refused = [e for e in logs if e["event"] == "photo_refused"]
    assert [e["reason"] for e in refused] == ["damaged", "damaged", "not_a_picture"]
    assert all(e["detail"] for e in refused)  # Pillow's words, for the log only


def test_a_photo_upload_without_a_photos_directory_says_so(app, registry):
    c, token = logged_in(app, "office")
    r = c.post("/workers/V001/photo", data={"csrf_token": token}, files={"photo": ("me.png", _picture("PNG", noise=False))})
    assert r.status_code == 400 and "photos_dir" in r.text


def test_an_upload_does_not_bring_a_confiscated_card_back_and_says_so_in_portuguese(app, registry):
    from central.registry.confiscation import record_confiscation
    from central.registry.schema import card_events, cases
    from tests.central.registry.test_confiscation import confiscation, event
    with Session(registry) as s, s.begin():
        record_confiscation(s, event(confiscation(uid="0A04A10008", registration="V008")))
    c, token = logged_in(app, "office")
    cards_csv = ("uid,kind,registration,status\n0A04A10001,control,V001,active\n"
                 "0A04A10008,control,V008,active\n0A04A10002,control,V001,active\n")
    before = (_count(registry, card_events), _count(registry, downlink_changes), _count(registry, audit_log))
    r = c.post("/workers/upload", data={"csrf_token": token}, files={"cards": ("cards.csv", cards_csv.encode())})
    assert r.status_code == 400
    assert ("cards.csv:3: o cartão 0A04A10008 está apreendido: uma importação não o torna ativo; use o comando "
            "`portgate registry return-card 0A04A10008 --decision TEXT` (encerra o processo aberto do cartão)") in r.text
    assert ("cards.csv:4: o cartão 0A04A10002 está ativo e pertence a V002: uma importação não passa um "
            "cartão para outra matrícula (dê a V001 um cartão com um novo uid)") in r.text
    assert (_count(registry, card_events), _count(registry, downlink_changes), _count(registry, audit_log)) == before
    with registry.connect() as conn:
        assert conn.execute(select(cases.c.status)).scalars().all() == ["open"]
        assert conn.execute(select(cards.c.registration).where(cards.c.uid == "0A04A10002")).scalar() == "V002"


def test_an_upload_with_an_unknown_column_names_it_in_portuguese_and_writes_nothing(app, registry):
    c, token = logged_in(app, "office")
    w = ("registration,name,category,status,suspended_from,suspended_until,health_exam_date,"
         "booklet_revalidated_year,rotation_numbr\nN011,Nova,vigia,active,,,2026-01-10,,90\n")
    r = c.post("/workers/upload", data={"csrf_token": token}, files={"workers": ("w.csv", w.encode())})
    assert r.status_code == 400
    assert "w.csv:1: coluna(s) desconhecida(s) rotation_numbr (o arquivo aceita registration, name" in r.text
    ships = ("ship,ship_name,voyage,berth,gate_id,arrival,departure,obs\n"
             "9300009,Nova,long_haul,berthed,g1,2026-03-15T06:00:00-03:00,,x\n")
    r = c.post("/workers/upload", data={"csrf_token": token}, files={"ships": ("ships.csv", ships.encode())})
    assert r.status_code == 400 and "ships.csv:1: coluna(s) desconhecida(s) obs" in r.text
    assert _count(registry, workers, workers.c.registration == "N011") == 0


def test_a_ships_upload_refuses_a_gate_id_the_gate_refuses(app, registry):
    from central.calls.schema import ship_calls
    c, token = logged_in(app, "office")
    ships = ("ship,ship_name,voyage,berth,gate_id,arrival,departure\n"
             "9300009,Nova,long_haul,berthed,g/x#,2026-03-15T06:00:00-03:00,\n")
    r = c.post("/workers/upload", data={"csrf_token": token}, files={"ships": ("ships.csv", ships.encode())})
    assert r.status_code == 400
    assert "ships.csv:2: portaló: portaló (gate_id) &#39;g/x#&#39; não é um id válido" in r.text, r.text
    assert _count(registry, ship_calls) == 0


def test_the_worker_page_names_cards_history_and_record_in_the_pages_language(app, registry):
    """Kinds, states, lifecycle events and their details, the record's kind and reason: pt-BR on a
    pt-BR page (the flag by its name), English on an English one; the codes stay in attributes."""
    from central.registry.confiscation import record_confiscation
    from tests.central.registry.test_confiscation import confiscation, event
    with Session(registry) as s, s.begin():  # the demo import issued the card ("import")
        record_confiscation(s, event(confiscation(uid="0A04A10008", registration="V008")))
    c, token = logged_in(app, "office")
    html = c.get("/workers/V008").text
    cards_html = html.split('id="cards"')[1].split("</table>")[0]
    record = html.split('id="penalties"')[1].split("</table>")[0]
    assert '<td data-kind="control">de controle</td><td data-status="confiscated">apreendido</td>' in cards_html
    assert "emitido " in cards_html and "(importação)" in cards_html
    assert "apreendido " in cards_html and "(processo 1: salto no rodízio (G6) (83.611 art. 20 i))" in cards_html
    assert "issued" not in cards_html and "ROTATION_JUMP" not in cards_html and "case 1" not in cards_html
    assert '<td data-kind="infraction">infração</td>' in record
    assert "cartão 0A04A10008 apreendido: salto no rodízio (G6)" in record and "ROTATION_JUMP" not in record
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    html = c.get("/workers/V008").text
    assert '<td data-kind="control">control</td><td data-status="confiscated">confiscated</td>' in html
    assert "(case 1: rotation jump (G6) (83.611 art. 20 i))" in html and "(import)" in html
    assert '<td data-kind="infraction">infraction</td>' in html
    assert "card 0A04A10008 confiscated: rotation jump (G6)" in html


def test_registry_details_and_reasons_that_are_not_known_shapes_stay_as_typed():
    from central.web.service_texts import card_detail, card_word, penalty_reason
    assert card_detail("pt", "replaces 0A04A10001") == "substitui 0A04A10001"
    assert card_detail("pt", "replaced by 0A04A10009") == "substituído por 0A04A10009"
    assert card_detail("pt", "DTM decidiu devolver") == "DTM decidiu devolver"
    assert card_word("pt", "returned") == "devolvido" and card_word("pt", "badge") == "chapa"
    assert penalty_reason("pt", "reprimand: atraso") == "repreensão: atraso"
    assert penalty_reason("pt", "refused dispatch 12: doente") == "recusou a escala 12: doente"
    assert penalty_reason("pt", "texto livre") == "texto livre"
