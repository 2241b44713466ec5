"""A worker's case forms (R7) through the real app on SQLite and PostgreSQL (the ledgers of
``test_worker_web``): a defence or appeal sent twice is recorded once (``central.web.resend``: the
form's one-time send id, or the same text within ``SAME_TEXT_S``), a text over Starlette's 1 MB
form field is 413 with the worker's reason, refusals on ``/w/`` are in the worker's layout with a
link back, an expired form shows the case again with the text typed, and a photo over
``PHOTO_MAX_PIXELS`` is refused naming its size."""

from __future__ import annotations

import datetime as dt
import io
import re

import pytest
from PIL import Image
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from central.registry import cases as case_svc
from central.registry.cases import MAX_TEXT
from central.registry.schema import audit_log, case_attachments, cases
from central.web import resend
from central.web.routes.worker_frame import PHOTO_MAX_PIXELS, checked_photo
from portgate.errors import BadInput
from tests.central.web.test_worker_web import _png, engine, ledger, worker_client  # noqa: F401 (fixtures)

OFFICE_LAYOUT = "escritório"  # the office's <title> ("portgate — escritório"), never on a worker's page


def _send_id(html: str) -> str:
    return re.search(r'name="send_id" value="([^"]+)"', html).group(1)


def _count(engine, action: str, case_id: int) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(audit_log).where(
            audit_log.c.action == action, audit_log.c.subject == str(case_id))).scalar_one()


def _wide_png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("1", (width, height)).save(out, "PNG")  # one bit a pixel: a few hundred KB
    return out.getvalue()


def test_a_defence_sent_twice_is_recorded_once_and_answered_as_the_first(app, ledger, engine, clock):
    case_id = ledger["case"]
    c, token = worker_client(app, "V008")
    send_id = _send_id(c.get(f"/w/processos/{case_id}").text)
    typed = "Saí às 10h por ordem do contramestre."
    form = {"csrf_token": token, "defence": typed, "send_id": send_id}
    for _ in range(2):  # the answer to the first was lost: the phone sends the same form again
        r = c.post(f"/w/processos/{case_id}/defesa", data=form, files={"photo": ("ordem.png", _png(), "image/png")})
        assert r.status_code == 303 and r.headers["location"] == f"/w/processos/{case_id}?saved=defence"
    # the page opened again from the draft: a new send id, the same text (and with no send id at all)
    again = _send_id(c.get(f"/w/processos/{case_id}").text)
    assert again != send_id
    for extra in ({"send_id": again}, {}, {"send_id": "not a send id!"}):
        r = c.post(f"/w/processos/{case_id}/defesa", data={"csrf_token": token, "defence": typed + " "} | extra)
        assert r.status_code == 303 and r.headers["location"].endswith("?saved=defence")
    assert _count(engine, "case.defence", case_id) == 1
    with engine.connect() as conn:
        assert conn.execute(select(cases.c.defence).where(cases.c.id == case_id)).scalar_one().count(typed) == 1
        assert conn.execute(select(func.count()).select_from(case_attachments)
                            .where(case_attachments.c.case_id == case_id)).scalar_one() == 1
        kept = conn.execute(select(audit_log.c.detail).where(audit_log.c.action == "case.defence")).scalar_one()
    assert kept["send"] == send_id
    # another text is another defence; the same text after SAME_TEXT_S with a fresh form is one too
    r = c.post(f"/w/processos/{case_id}/defesa", data={"csrf_token": token, "defence": "Outra defesa."})
    assert r.status_code == 303 and _count(engine, "case.defence", case_id) == 2
    clock.at += dt.timedelta(seconds=resend.SAME_TEXT_S + 1)
    fresh = _send_id(c.get(f"/w/processos/{case_id}").text)
    r = c.post(f"/w/processos/{case_id}/defesa", data={"csrf_token": token, "defence": typed, "send_id": fresh})
    assert r.status_code == 303 and _count(engine, "case.defence", case_id) == 3
    # ...but its send id sent again still counts as sent, after the window too
    clock.at += dt.timedelta(seconds=resend.SAME_TEXT_S + 1)
    r = c.post(f"/w/processos/{case_id}/defesa", data={"csrf_token": token, "defence": typed, "send_id": fresh})
    assert r.status_code == 303 and _count(engine, "case.defence", case_id) == 3


def test_an_appeal_sent_twice_is_recorded_once(app, ledger, engine, clock):
    case_id = ledger["case"]
    with Session(engine) as s, s.begin():
        case_svc.record_defence(s, case_id, "defesa", actor="worker:v008", now=clock())
        case_svc.decide(s, case_id, "reprimand", actor="web:inspector", now=clock())
    c, token = worker_client(app, "V008")
    form = {"csrf_token": token, "appeal": "Peço revisão.", "send_id": _send_id(c.get(f"/w/processos/{case_id}").text)}
    for _ in range(2):
        r = c.post(f"/w/processos/{case_id}/recurso", data=form)
        assert r.status_code == 303 and r.headers["location"] == f"/w/processos/{case_id}?saved=appeal", r.text[:300]
    assert _count(engine, "case.appeal", case_id) == 1
    # another text after the appeal is refused as before (the case is no longer decided)
    r = c.post(f"/w/processos/{case_id}/recurso", data={"csrf_token": token, "appeal": "Outro recurso."})
    assert r.status_code == 400 and "Outro recurso." in r.text and _count(engine, "case.appeal", case_id) == 1


@pytest.mark.parametrize("multipart", [True, False], ids=["multipart", "urlencoded"])
def test_a_defence_over_starlettes_1_mb_field_is_413_with_the_workers_reason(app, ledger, engine, multipart):
    case_id = ledger["case"]
    c, token = worker_client(app, "V008")
    data = {"csrf_token": token, "defence": "x" * (1024 * 1024 + 10)}
    files = {"photo": ("ordem.png", _png(), "image/png")} if multipart else None
    r = c.post(f"/w/processos/{case_id}/defesa", data=data, files=files)
    assert r.status_code == 413, (r.status_code, r.text[:500])
    assert f"mais de {MAX_TEXT} caracteres" in r.text and OFFICE_LAYOUT not in r.text
    assert f'href="/w/processos/{case_id}"' in r.text and "/static/worker.css" in r.text
    assert _count(engine, "case.defence", case_id) == 0


def test_an_expired_form_shows_the_case_again_with_the_reason_and_the_text(app, ledger, engine):
    case_id = ledger["case"]
    c, _token = worker_client(app, "V008")
    typed = "Minha defesa escrita antes de o formulário expirar."
    r = c.post(f"/w/processos/{case_id}/defesa", data={"csrf_token": "expired", "defence": typed})
    assert r.status_code == 403 and "Formulário expirado" in r.text and OFFICE_LAYOUT not in r.text
    assert re.search(r'<textarea id="d-text"[^>]*>' + re.escape(typed) + "</textarea>", r.text)
    with Session(engine) as s, s.begin():
        case_svc.record_defence(s, case_id, "defesa", actor="worker:v008")
        case_svc.decide(s, case_id, "reprimand", actor="web:inspector")
    r = c.post(f"/w/processos/{case_id}/recurso", data={"csrf_token": "", "appeal": "Peço revisão."})
    assert r.status_code == 403 and "Formulário expirado" in r.text and ">Peço revisão.</textarea>" in r.text
    assert _count(engine, "case.defence", case_id) == 1 and _count(engine, "case.appeal", case_id) == 0
    # another worker page's expired form: the worker's layout, a link back to the page
    r = c.post("/w/cartao/perdido", data={"csrf_token": "expired"}, headers={"referer": "http://testserver/w/cartao"})
    assert r.status_code == 403 and "Formulário expirado" in r.text and OFFICE_LAYOUT not in r.text
    assert 'id="back" href="/w/cartao"' in r.text


def test_refusals_on_worker_paths_are_in_the_workers_layout(app, ledger):
    c, _token = worker_client(app, "V008")
    for path, status in (("/w/processos/%00", 400), ("/w/nada", 404)):
        r = c.get(path)
        assert r.status_code == status and OFFICE_LAYOUT not in r.text and "/static/worker.css" in r.text, path
        assert 'id="back" href="/w/"' in r.text
    assert OFFICE_LAYOUT in c.get("/nada").text  # the office's paths keep the office's page


def test_a_photo_over_the_pixel_limit_is_refused_naming_its_size(app, ledger, engine):
    case_id = ledger["case"]
    c, token = worker_client(app, "V008")
    for side, mp in ((12000, 144), (20000, 400)):  # under and over Pillow's own guard (179 MP)
        r = c.post(f"/w/processos/{case_id}/defesa", data={"csrf_token": token, "defence": "foto grande"},
                   files={"photo": ("grande.png", _wide_png(side, side), "image/png")})
        assert r.status_code == 400 and f"A foto tem {mp} megapixels" in r.text, r.text[-1500:]
        assert f"o limite é {PHOTO_MAX_PIXELS // 1_000_000} megapixels" in r.text and "foto grande" in r.text
    assert _count(engine, "case.defence", case_id) == 0


def test_the_pixel_limit_and_the_send_id():
    assert checked_photo(_wide_png(7000, 7000), "a.png")[1] == "image/png"  # 49 MP: a large phone photo
    with pytest.raises(BadInput) as exc:
        checked_photo(_wide_png(7100, 7100), "b.png")
    assert exc.value.where == "photo-pixels" and exc.value.dims == " (7100x7100)"
    assert resend.send_id_of(resend.new_send_id()) and resend.send_id_of("short") is None
    assert resend.send_id_of(None) is None and resend.send_id_of("x" * 65) is None
