"""The worker's own pages (issue 35) through the real app (Starlette TestClient) on a migrated
SQLite and PostgreSQL ledger: two workers with accounts (V017: worked example 2 of RULES.md P,
R$ 696,60; V008: an EARLY_EXIT shift and a case), each route tried on the other's data (403/404,
never the data), every office route with a worker session (403), activation codes (single use,
7 days, wrong codes rate-limited), a cancelled registration (R4) disabling the account, defences and
appeals (R7) in the case's audit trail, a card reported lost, page weights."""

from __future__ import annotations

import datetime as dt
import io
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from PIL import Image
from pypdf import PdfReader
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.testclient import TestClient

from central.config import WebSettings
from central.db import make_engine
from central.ledger.schema import events
from central.registry import cases as case_svc
from central.registry.schema import audit_log, card_events, case_attachments, cards, cases, downlink_changes
from central.registry.store import cancel, import_files
from central.rotation.engine import RotationSettings
from central.rotation.service import _store_entry
from central.web.app import route_table
from central.web.routes import worker as worker_routes
from central.web.schema import login_failures
from central.web.workeraccounts import CODE_DAYS, add_account, issue_code
from central.web.workermodel import earliest_period
from portgate.records import Berth, EscalaEntry, Voyage
from portgate.timeutil import as_utc
from tests.central.web.conftest import PASSWORD, csrf_of, logged_in, login
from tests.central.web.paydata import seed_pay

DEMO = Path(__file__).resolve().parents[3] / "config" / "demo"
WORKER_PASSWORD = "minha senha de vigia"
PAGE_LIMIT = 100 * 1024  # bytes of a page with its stylesheet and script (issue 35)


def _fill(engine, today: dt.date) -> None:
    """The demo registry, the worked examples' shifts and statements, a case against V008 (its
    EARLY_EXIT), V017 dispatched on ``today``, accounts for V017 and V008."""
    now = dt.datetime.now(dt.UTC)
    with Session(engine) as s, s.begin():
        import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="t", now=now)
    seed_pay(engine)
    with Session(engine) as s, s.begin():
        ev = s.execute(select(events.c.event_id).where(events.c.registration == "V008",
                                                       events.c.decision == "exit")).scalar_one()
        case_svc.open_from_event(s, ev, flag="EARLY_EXIT", charge="Saída antes do fim do período (V008)",
                                 article=None, evidence="leitura de saída às 10:00", actor="web:inspector")
        _store_entry(s, EscalaEntry(today, "19-01", "9300002", "Nordic Star", Voyage("long_haul"), Berth("anchored"),
                                    "g-b", "portaló", "vigia_chefe", "V017"),
                     operator="op", requisition_id=None, settings=RotationSettings(), actor="t", now=now)
        for reg in ("V017", "V008"):
            add_account(s, reg, password=WORKER_PASSWORD, actor="t", now=now)


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers, clock):
    """The web suite's ``engine`` with ``_fill``'s data for the clock's day in the port: a copy of a
    ledger the session filled once for that day (``ledgers``, tests/central/conftest.py)."""
    today = clock().astimezone(ZoneInfo(WebSettings().tz)).date()
    url = ledgers.url(request, request.param, tmp_path, f"worker_web_{today:%Y%m%d}", lambda e: _fill(e, today))
    engine = make_engine(url)
    yield engine
    engine.dispose()


@pytest.fixture
def ledger(engine, users):
    """``_fill``'s data (the ledger of ``engine``) and the roles' users; ``{"case": V008's case id}``."""
    with engine.connect() as conn:
        case_id = conn.execute(select(cases.c.id).where(cases.c.registration == "V008")).scalar_one()
    return {"case": case_id}


def worker_client(app, registration: str) -> tuple[TestClient, str]:
    c = TestClient(app, base_url="http://testserver", follow_redirects=False)
    r = login(c, registration, WORKER_PASSWORD)
    assert r.status_code == 303 and r.headers["location"] == "/w/", (r.status_code, r.text[:300])
    page = c.get("/w/")
    assert page.status_code == 200, page.text[:500]
    return c, csrf_of(page.text)


def _weight(c: TestClient, html: str) -> int:
    """The page and what it loads (stylesheets, scripts, images), bytes."""
    total = len(html.encode())
    for ref in re.findall(r'(?:href|src)="(/static/[^"]+)"', html):
        total += len(c.get(ref).content)
    return total


def test_a_worker_sees_his_escala_shifts_pay_cases_and_card_each_under_100_kb(app, ledger, clock):
    c, _ = worker_client(app, "V017")
    home = c.get("/w/").text
    assert "Nordic Star" in home and "19-01" in home and "g-b" in home and "fundeado" in home
    # a new dispatch shows within a minute: static/worker.js fetches the days again (no meta refresh)
    assert '<div id="escala-days" data-refresh="60" aria-live="polite">' in home and "http-equiv" not in home
    assert 'id="next"' in home and "Lei 9.719 art. 8" in home
    # dispatched 19-01 today (ends 01:00 tomorrow): 11 h of rest make 13-19 tomorrow the next one (G7)
    tomorrow = (clock().astimezone(ZoneInfo(WebSettings().tz)).date() + dt.timedelta(days=1)).strftime("%d/%m/%Y")
    assert f"período 13-19 de {tomorrow}" in home
    shifts = c.get("/w/turnos", params={"from": "2026-03-01", "to": "2026-03-31"}).text
    assert 'data-shift="V017/9300002/2026-03-15/19-01"' in shifts
    assert shifts.count('data-decision="admit"') == 1 and shifts.count('data-decision="exit"') == 1
    assert "7,53" in shifts  # 18:58 to 02:30
    pay = c.get("/w/pagamento", params={"from": "2026-03-01", "to": "2026-03-31"}).text
    assert "R$ 696,60" in pay and "navio fundeado" in pay and "P7" in pay and "adicional noturno" in pay
    assert 'data-paid="no"' in pay and "ATRASADO" in pay  # due 48 h after 02:30 of 16/03; not marked paid
    q = {"from": "2026-03-01", "to": "2026-03-31"}
    assert c.get("/w/contracheque.pdf", params=q).status_code == 503  # a server without its payslip key
    app.state.web.slip_key = b"k" * 32
    slip = c.get("/w/contracheque.pdf", params=q)
    assert slip.status_code == 200 and slip.headers["content-type"] == "application/pdf"
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(slip.content)).pages)
    assert "R$ 696,60" in text and "V017" in text and "V001" not in text and "V008" not in text
    assert "Nenhum processo" in c.get("/w/processos").text
    card = c.get("/w/cartao").text
    assert "0A04A10011" in card and "0A04A10008" not in card
    for path in ("/w/", "/w/turnos?from=2026-03-01&to=2026-03-31", "/w/pagamento?from=2026-03-01&to=2026-03-31",
                 "/w/processos", "/w/cartao", "/w/ativar"):
        r = c.get(path)
        assert r.status_code == 200 and _weight(c, r.text) < PAGE_LIMIT, path


def test_each_worker_route_on_the_other_workers_data_is_404_never_the_data(app, ledger, engine, clock):
    case_id = ledger["case"]
    with Session(engine) as s, s.begin():
        case_svc.record_defence(s, case_id, "minha defesa", attachments=[("doc.png", "image/png", _png())],
                                actor="worker:v008")
        att = s.execute(select(case_attachments.c.id)).scalar_one()
    c8, token8 = worker_client(app, "V008")
    assert "Saída antes do fim" in c8.get(f"/w/processos/{case_id}").text
    c, token = worker_client(app, "V017")
    paths = {r.path for r in worker_routes.ROUTES}
    tried = set()
    r = c.get(f"/w/processos/{case_id}")
    tried.add("/w/processos/{case_id}")
    assert r.status_code == 404 and "Saída antes do fim" not in r.text and "minha defesa" not in r.text
    r = c.get(f"/w/processos/{case_id}/anexos/{att}")
    tried.add("/w/processos/{case_id}/anexos/{attachment_id}")
    assert r.status_code == 404 and b"PNG" not in r.content
    r = c.post(f"/w/processos/{case_id}/defesa", data={"csrf_token": token, "defence": "não sou eu"})
    tried.add("/w/processos/{case_id}/defesa")
    assert r.status_code == 404
    with Session(engine) as s, s.begin():
        case_svc.decide(s, case_id, "reprimand", actor="web:inspector")
    r = c.post(f"/w/processos/{case_id}/recurso", data={"csrf_token": token, "appeal": "recurso alheio"})
    tried.add("/w/processos/{case_id}/recurso")
    assert r.status_code == 404
    r = c.post("/w/cartao/perdido", data={"csrf_token": token, "uid": "0A04A10008"})
    tried.add("/w/cartao/perdido")
    assert r.status_code == 404 and "Cartão não encontrado" in r.text and "no card" not in r.text
    with Session(engine) as s, s.begin():  # a dispatch of V008's: V017 cannot refuse it
        v8 = _store_entry(s, EscalaEntry(clock().astimezone(ZoneInfo(WebSettings().tz)).date(), "07-13", "9300001",
                                         "MSC Aurora", Voyage("long_haul"), Berth("berthed"), "g-a", "portaló",
                                         "vigia", "V008"),
                          operator="op", requisition_id=None, settings=RotationSettings(), actor="t", now=clock())
    r = c.post(f"/w/escala/{v8}/saude", data={"csrf_token": token, "reason": "x"},
               files={"photo": ("a.png", _png(), "image/png")})
    tried.add("/w/escala/{escala_id}/saude")
    assert r.status_code == 404
    with Session(engine) as s:
        row = s.execute(select(cases).where(cases.c.id == case_id)).one()
        assert "não sou eu" not in row.defence and row.appeal is None
        assert s.execute(select(cards.c.status).where(cards.c.uid == "0A04A10008")).scalar() == "active"
    # the pages that take no id show his data only, never the other's
    for path in ("/w/", "/w/turnos", "/w/pagamento", "/w/processos", "/w/cartao", "/w/contracheque.pdf"):
        q = {"from": "2026-03-01", "to": "2026-03-31"}
        r = c.get(path, params=q)
        tried.add(path)
        assert "V008" not in r.text and "0A04A10008" not in r.text and "Saída antes" not in r.text, path
    tried.add("/w/ativar")  # public: tested below
    assert tried == paths, paths - tried


def test_every_office_route_answers_403_to_a_worker_session(app, ledger, engine):
    c, token = worker_client(app, "V017")
    checked = 0
    for route in route_table(app):
        if route.path.startswith("/w/") or route.path in ("/login", "/lang", "/logout", "/v", "/v/{token}"):  # /v: public
            continue
        path = re.sub(r"\{[^}]+\}", lambda m: str(ledger["case"]) if "case" in m.group(0)
                      else "1" if ":int}" in m.group(0) else "V017", route.path)  # an int path parameter takes a number
        for method in sorted(route.methods - {"HEAD"}):
            r = c.request(method, path, data={"csrf_token": token, "defence": "x", "kind": "none"})
            assert r.status_code == 403, (method, path, r.status_code)
            assert "Saída antes" not in r.text and "0A04A10011" not in r.text
            checked += 1
    assert checked >= 40
    with Session(engine) as s:  # the access-code button is the office's: no code was issued
        assert s.execute(select(audit_log).where(audit_log.c.action == "worker_account.code")).first() is None


def test_the_office_prints_a_code_and_the_worker_activates_his_account_once(app, ledger, engine, clock):
    app.state.web.throttle_now = clock  # the rate limit's clock (the wall clock in the office), moved here
    office, token = logged_in(app, "office")
    inspector, itoken = logged_in(app, "inspector")
    assert inspector.post("/workers/V001/access-code", data={"csrf_token": itoken}).status_code == 403
    r = office.post("/workers/V001/access-code", data={"csrf_token": token})
    assert r.status_code == 200, r.text[:500]
    code = re.search(r'id="code">([A-Z2-7-]+)<', r.text).group(1)
    assert len(code.replace("-", "")) == 20 and "v001" in r.text and "/w/ativar" in r.text
    assert office.post("/workers/NOPE/access-code", data={"csrf_token": token}).status_code == 404
    w = TestClient(app, base_url="http://testserver", follow_redirects=False)
    form = w.get("/w/ativar").text
    assert "Ativar minha conta" in form
    data = {"csrf_token": csrf_of(form), "login": "V001", "code": "AAAA-BBBB-CCCC-DDDD-EEEE",
            "password": "nova senha forte", "password2": "nova senha forte"}
    bad = w.post("/w/ativar", data=data)
    assert bad.status_code == 400 and "código de ativação" in bad.text
    assert w.post("/w/ativar", data=data | {"code": code, "password2": "outra"}).status_code == 400
    assert w.post("/w/ativar", data=data | {"code": code, "password": "curta", "password2": "curta"}).status_code == 400
    typed = code.lower().replace("-", " ").replace("o", "0").replace("i", "1")  # as a person may type it
    ok = w.post("/w/ativar", data=data | {"code": typed})
    assert ok.status_code == 200 and "Conta ativada" in ok.text
    assert w.post("/w/ativar", data=data | {"code": code}).status_code == 400  # single use
    assert login(w, "V001", "nova senha forte").headers["location"] == "/w/"
    with Session(engine) as s:
        actions = [r.action for r in s.execute(select(audit_log).where(audit_log.c.subject == "V001"))]
        assert {"worker_account.add", "worker_account.code", "worker_account.activate"} <= set(actions)
    # a new code expires after 7 days, and resets the password until used
    with Session(engine) as s, s.begin():
        issued = issue_code(s, "V001", actor="t", now=clock())
    assert login(w, "V001", "nova senha forte").status_code == 401
    clock.at += dt.timedelta(days=CODE_DAYS, minutes=1)
    late = w.post("/w/ativar", data=data | {"code": issued.code, "csrf_token": csrf_of(w.get("/w/ativar").text)})
    assert late.status_code == 400
    with Session(engine) as s:  # the expired code counted as a failure for the rate limit
        times = [r.at for r in s.execute(select(login_failures).where(login_failures.c.login == "v001"))]
        assert max(as_utc(t) for t in times) == clock.at


def test_a_cancelled_registration_disables_the_account_at_login_and_on_the_next_request(app, ledger, engine, clock):
    c, _ = worker_client(app, "V017")
    with Session(engine) as s, s.begin():
        cancel(s, "V017", on=clock().date(), reason="R4", article="83.611 art. 21 b", actor="t", now=clock())
    r = c.get("/w/")
    assert r.status_code == 403 and "desativada" in r.text and "Nordic Star" not in r.text
    assert c.get("/w/pagamento").status_code in (303, 403)
    fresh = TestClient(app, base_url="http://testserver", follow_redirects=False)
    assert login(fresh, "V017", WORKER_PASSWORD).status_code == 401
    office, token = logged_in(app, "office")
    assert office.post("/workers/V017/access-code", data={"csrf_token": token}).status_code == 400


def _png(size: tuple[int, int] = (40, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(out, "PNG")
    return out.getvalue()


def test_his_defence_and_appeal_go_into_the_case_with_his_account(app, ledger, engine):
    case_id = ledger["case"]
    c, token = worker_client(app, "V008")
    page = c.get(f"/w/processos/{case_id}").text
    assert "Saída antes do fim do período" in page and "83.611 art. 20 b, e" in page and "leitura de saída" in page
    # a file that is not a photo, and a photo over the limit: refused, the text typed stays in the form
    typed = "Saí às 10h por ordem do contramestre."
    r = c.post(f"/w/processos/{case_id}/defesa", data={"csrf_token": token, "defence": typed},
               files={"photo": ("carta.txt", b"not an image", "text/plain")})
    assert r.status_code == 400 and typed in r.text and "foto JPEG ou PNG" in r.text
    big = b"\x89PNG" + b"0" * (worker_routes.PHOTO_MAX + 1)
    r = c.post(f"/w/processos/{case_id}/defesa", data={"csrf_token": token, "defence": typed},
               files={"photo": ("grande.png", big, "image/png")})
    assert r.status_code in (400, 413) and (r.status_code == 413 or typed in r.text)
    r = c.post(f"/w/processos/{case_id}/defesa", data={"csrf_token": token, "defence": typed},
               files={"photo": ("ordem.png", _png(), "image/png")})
    assert r.status_code == 303, r.text[:500]
    page = c.get(r.headers["location"]).text
    assert typed in page and "ordem.png" in page and "worker:v008" in page
    inspector, _ = logged_in(app, "inspector")
    seen = inspector.get(f"/cases/{case_id}").text
    assert typed in seen and "worker:v008" in seen and "ordem.png" in seen
    with Session(engine) as s, s.begin():
        row = s.execute(select(audit_log).where(audit_log.c.action == "case.defence")).one()
        assert row.actor == "worker:v008" and row.detail["attachments"] == ["ordem.png"]
        case_svc.decide(s, case_id, "reprimand", actor="web:inspector")
    page = c.get(f"/w/processos/{case_id}").text
    assert "repreensão" in page and "recorrer até" in page and "Enviar defesa" not in page
    r = c.post(f"/w/processos/{case_id}/defesa", data={"csrf_token": token, "defence": "tarde demais"})
    assert r.status_code == 400 and "tarde demais" in r.text  # decided: refused, kept in the form
    assert c.post(f"/w/processos/{case_id}/recurso", data={"csrf_token": token, "appeal": " "}).status_code == 400
    r = c.post(f"/w/processos/{case_id}/recurso", data={"csrf_token": token, "appeal": "Peço revisão."})
    assert r.status_code == 303
    assert "Peço revisão." in c.get(f"/w/processos/{case_id}").text
    with Session(engine) as s:
        row = s.execute(select(audit_log).where(audit_log.c.action == "case.appeal")).one()
        assert row.actor == "worker:v008"


def test_an_appeal_after_30_days_is_refused_and_kept_in_the_form(app, ledger, engine, clock):
    case_id = ledger["case"]
    with Session(engine) as s, s.begin():
        case_svc.record_defence(s, case_id, "defesa", actor="worker:v008", now=clock())
        case_svc.decide(s, case_id, "reprimand", actor="web:inspector", now=clock())
    c, token = worker_client(app, "V008")
    clock.at += dt.timedelta(days=31)
    page = c.get(f"/w/processos/{case_id}").text
    assert "O prazo do recurso terminou" in page and "Enviar recurso" not in page
    r = c.post(f"/w/processos/{case_id}/recurso", data={"csrf_token": token, "appeal": "tarde"})
    assert r.status_code == 400 and "tarde" in r.text


def test_reporting_his_card_lost_blocks_it_for_the_gates_and_tells_the_office(app, ledger, engine):
    c, token = worker_client(app, "V017")
    # without the confirmation box ticked (a hand-made POST): refused, the card stays active
    r = c.post("/w/cartao/perdido", data={"csrf_token": token, "uid": "0A04A10011"})
    assert r.status_code == 400 and "Nada foi bloqueado" in r.text
    assert 'data-uid="0A04A10011" data-status="active"' in c.get("/w/cartao").text
    r = c.post("/w/cartao/perdido", data={"csrf_token": token, "uid": "0A04A10011", "confirm": "yes"})
    assert r.status_code == 303 and r.headers["location"] == "/w/cartao?done=lost"
    page = c.get("/w/cartao?done=lost").text
    assert 'data-uid="0A04A10011" data-status="lost"' in page and "Cartão bloqueado" in page
    with Session(engine) as s:
        change = s.execute(select(downlink_changes).where(downlink_changes.c.kind == "cards",
                                                          downlink_changes.c.key == "0A04A10011")
                           .order_by(downlink_changes.c.id.desc())).first()
        assert change.body["status"] == "lost"
        ev = s.execute(select(card_events).where(card_events.c.uid == "0A04A10011",
                                                 card_events.c.event == "lost")).one()
        assert ev.actor == "worker:v017" and "replacement requested" in ev.detail
    assert c.post("/w/cartao/perdido", data={"csrf_token": token, "uid": "0A04A10011"}).status_code == 400
    office, _ = logged_in(app, "office")
    assert "perda comunicada pelo trabalhador: pede um cartão novo" in office.get("/workers/V017").text
    assert c.post("/w/cartao/perdido", data={"uid": "0A04A10011"}).status_code == 403  # no CSRF token


def test_the_english_switch_and_a_worker_logs_out(app, ledger):
    c, token = worker_client(app, "V017")
    r = c.post("/lang", data={"csrf_token": token, "lang": "en", "next": "/w/pagamento"})
    assert r.headers["location"] == "/w/pagamento"
    page = c.get("/w/pagamento", params={"from": "2026-03-01", "to": "2026-03-31"}).text
    assert "My pay" in page and "ship at anchorage" in page and 'lang="en"' in page
    assert c.post("/logout", data={"csrf_token": token}).status_code == 303
    assert c.get("/w/").status_code == 303


def test_the_next_period_respects_11_hours_of_rest():
    tz = ZoneInfo("America/Sao_Paulo")
    now = dt.datetime(2026, 3, 16, 3, 0, tzinfo=tz).astimezone(dt.UTC)
    last_end = dt.datetime(2026, 3, 16, 2, 30, tzinfo=tz).astimezone(dt.UTC)  # 11 h later: 13:30
    assert earliest_period(last_end, now, tz)[:2] == (dt.date(2026, 3, 16), "19-01")
    assert earliest_period(None, now, tz)[:2] == (dt.date(2026, 3, 16), "07-13")
    exact = dt.datetime(2026, 3, 16, 2, 0, tzinfo=tz).astimezone(dt.UTC)  # 11 h later: 13:00 exactly
    assert earliest_period(exact, now, tz)[:2] == (dt.date(2026, 3, 16), "13-19")


def test_add_user_role_worker_prints_an_activation_code_or_takes_a_password(tmp_path, monkeypatch, capsys,
                                                                            sqlite_ledger):
    from app.cli import main
    from central.db import make_engine
    from central.web.users import check_login
    from central.web.workeraccounts import activate

    cfg = tmp_path / "central.toml"
    cfg.write_text(f'database_url = "sqlite:///{tmp_path / "ledger.db"}"\nport = "santos"\n'
                   f'keys_dir = "{tmp_path / "keys"}"\n')
    engine = make_engine(sqlite_ledger(tmp_path / "ledger.db"))  # migrated: a copy of the session's
    with Session(engine) as s, s.begin():
        import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="t",
                     now=dt.datetime.now(dt.UTC))
    monkeypatch.delenv("PORTGATE_PASSWORD", raising=False)
    assert main(["office", "add-user", "--config", str(cfg), "--role", "worker", "--registration", "V017"]) == 0
    out = capsys.readouterr().out
    code = re.search(r"activation code ([A-Z2-7-]{24}) \(single use, valid until", out).group(1)
    assert "user v017 (worker, registration V017) added" in out
    with Session(engine) as s, s.begin():
        assert activate(s, "V017", code, "uma senha boa", address="a") == "v017"
        assert check_login(s, "V017", "uma senha boa", address="a").role == "worker"
    monkeypatch.setenv("PORTGATE_PASSWORD", "senha do V008!")
    assert main(["office", "add-user", "--config", str(cfg), "--role", "worker", "--registration", "V008"]) == 0
    assert "activation code" not in capsys.readouterr().out
    with Session(engine) as s, s.begin():
        assert check_login(s, "v008", "senha do V008!", address="a").login == "v008"
    for args, words in ((["--registration", "V008"], "already has an account"),
                        (["--registration", "NOPE"], "no worker"),
                        ([], "needs --registration"),
                        (["--registration", "V001", "--login", "ana"], "lower case")):
        assert main(["office", "add-user", "--config", str(cfg), "--role", "worker", *args]) == 2
        assert words in capsys.readouterr().err
    assert main(["office", "add-user", "--config", str(cfg), "--role", "office", "--registration", "V001",
                 "--login", "x1"]) == 2
    engine.dispose()


def test_his_pay_page_says_paid_when_and_the_hold_and_its_reason(app, ledger, engine):
    from central.ledger.tables import statements
    from central.pay.statements_store import mark_paid

    q = {"from": "2026-03-01", "to": "2026-03-31"}
    with engine.connect() as conn:
        sid = conn.execute(select(statements.c.statement_id).where(statements.c.registration == "V017",
                                                                   statements.c.superseded_at.is_(None))).scalar_one()
    paid_at = dt.datetime(2026, 3, 17, 12, 0, tzinfo=dt.UTC)
    mark_paid(engine, [sid], paid_at, "folha-03", now=paid_at, actor="t")
    c, _ = worker_client(app, "V017")
    page = c.get("/w/pagamento", params=q).text
    assert 'data-paid="yes"' in page and "Pago em 17/03/2026 (folha-03)" in page and "ATRASADO" not in page
    c8, _ = worker_client(app, "V008")  # V008's EARLY_EXIT statement is on hold for the office's review
    page = c8.get("/w/pagamento", params=q).text
    assert "Retido" in page and 'class="hold"' in page and "R$ 696,60" not in page


def test_the_office_revokes_a_workers_access_and_a_new_code_gives_it_back(app, ledger, engine, clock):
    c, _ = worker_client(app, "V017")
    office, token = logged_in(app, "office")
    inspector, itoken = logged_in(app, "inspector")
    assert inspector.post("/workers/V017/access-revoke", data={"csrf_token": itoken}).status_code == 403
    assert c.get("/w/").status_code == 200
    r = office.post("/workers/V017/access-revoke", data={"csrf_token": token})
    assert r.status_code == 303 and r.headers["location"] == "/workers/V017?access=revoked"
    assert c.get("/w/").status_code == 303  # his open session ended
    fresh = TestClient(app, base_url="http://testserver", follow_redirects=False)
    assert login(fresh, "V017", WORKER_PASSWORD).status_code == 401
    assert office.post("/workers/V001/access-revoke", data={"csrf_token": token}).status_code == 404  # no account
    with Session(engine) as s, s.begin():
        assert s.execute(select(audit_log.c.actor).where(audit_log.c.action == "user.disable",
                                                         audit_log.c.subject == "v017")).scalar() == "web:office"
        issued = issue_code(s, "V017", actor="t", now=clock())
    form = fresh.get("/w/ativar").text
    ok = fresh.post("/w/ativar", data={"csrf_token": csrf_of(form), "login": "V017", "code": issued.code,
                                       "password": "outra senha boa", "password2": "outra senha boa"})
    assert ok.status_code == 200
    assert login(fresh, "V017", "outra senha boa").headers["location"] == "/w/"


def test_a_refusal_for_health_with_a_certificate_is_decided_by_the_office(app, ledger, engine):
    from central.registry.schema import penalties
    from central.rotation.schema import escala, refusals

    with engine.connect() as conn:
        entry = conn.execute(select(escala.c.id).where(escala.c.registration == "V017")).scalar_one()
    c, token = worker_client(app, "V017")
    home = c.get("/w/").text
    assert "Recusar por motivo de saúde" in home
    url = f"/w/escala/{entry}/saude"
    r = c.post(url, data={"csrf_token": token, "reason": "gripe"})  # no photo
    assert r.status_code == 400 and "foto JPEG ou PNG" in r.text
    c8, token8 = worker_client(app, "V008")  # not his dispatch
    assert c8.post(url, data={"csrf_token": token8, "reason": "x"},
                   files={"photo": ("a.png", _png(), "image/png")}).status_code == 404
    r = c.post(url, data={"csrf_token": token, "reason": "gripe forte"}, files={"photo": ("atestado.png", _png(),
                                                                                          "image/png")})
    assert r.status_code == 303 and r.headers["location"] == "/w/?done=health"
    assert 'data-request="pending"' in c.get("/w/").text
    assert c.post(url, data={"csrf_token": token, "reason": "de novo"},
                  files={"photo": ("a.png", _png(), "image/png")}).status_code == 400  # one pending at a time
    inspector, itoken = logged_in(app, "inspector")
    assert inspector.get("/worker-requests").status_code == 403
    office, otoken = logged_in(app, "office")
    listing = office.get("/worker-requests").text
    assert "gripe forte" in listing and "atestado.png" in listing
    rid = re.search(r'data-request="(\d+)" data-status="pending"', listing).group(1)
    photo = office.get(f"/worker-requests/{rid}/photo")
    assert photo.status_code == 200 and photo.content == _png()
    assert inspector.post(f"/worker-requests/{rid}/decide", data={"csrf_token": itoken,
                                                                  "decision": "accept"}).status_code == 403
    r = office.post(f"/worker-requests/{rid}/decide", data={"csrf_token": otoken, "decision": "accept"})
    assert r.status_code == 303
    assert office.post(f"/worker-requests/{rid}/decide", data={"csrf_token": otoken,
                                                               "decision": "reject"}).status_code == 404
    with Session(engine) as s:
        ref = s.execute(select(refusals).where(refusals.c.escala_id == entry)).one()
        assert ref.infraction == 0 and "atestado.png" in ref.health_proof
        assert s.execute(select(escala.c.status).where(escala.c.id == entry)).scalar() == "removed"
        assert s.execute(select(penalties).where(penalties.c.registration == "V017")).first() is None
        actions = {r.action: r.actor for r in s.execute(select(audit_log).where(
            audit_log.c.action.like("worker_request.%")))}
    assert actions == {"worker_request.health": "worker:v017", "worker_request.accept": "web:office"}
    assert 'data-request="accepted"' not in c.get("/w/").text  # the dispatch is gone from his escala
    assert office.get("/worker-requests/999/photo").status_code == 404


def test_a_rejected_refusal_for_health_leaves_the_dispatch(app, ledger, engine):
    from central.rotation.schema import escala

    with engine.connect() as conn:
        entry = conn.execute(select(escala.c.id).where(escala.c.registration == "V017")).scalar_one()
    c, token = worker_client(app, "V017")
    assert c.post(f"/w/escala/{entry}/saude", data={"csrf_token": token, "reason": "dor"},
                  files={"photo": ("a.png", _png(), "image/png")}).status_code == 303
    office, otoken = logged_in(app, "office")
    rid = re.search(r'data-request="(\d+)"', office.get("/worker-requests").text).group(1)
    assert office.post(f"/worker-requests/{rid}/decide", data={"csrf_token": otoken,
                                                               "decision": "reject"}).status_code == 303
    home = c.get("/w/").text
    assert 'data-request="rejected"' in home and "Nordic Star" in home
    with engine.connect() as conn:
        assert conn.execute(select(escala.c.status).where(escala.c.id == entry)).scalar() == "active"


@pytest.fixture
def stevedores(ledger, engine, clock):
    """The demo's stevedores (config/demo/stevedores.csv) and their gangs' production pay
    (config/demo/production, as ``portgate demo`` stores them); accounts for E001 and E002."""
    from app.demo.web import import_production

    with Session(engine) as s, s.begin():
        import_files(s, workers_csv=DEMO / "stevedores.csv", actor="t", now=clock())
        for reg in ("E001", "E002"):
            add_account(s, reg, password=WORKER_PASSWORD, actor="t", now=clock())
    import_production(engine, DEMO / "production", "America/Sao_Paulo", clock())
    return ledger


def _r8(html: str) -> dict[str, tuple[str, str]]:
    """The R8 table of a shifts page: month -> (gangs, hours)."""
    return {m: (g, h) for m, g, h in re.findall(
        r'<tr data-month="([0-9-]+)"><td>[^<]*</td><td class="num gangs">(\d+)</td>'
        r'<td class="num hours">([0-9,.]+)</td></tr>', html)}


def test_a_stevedore_sees_his_r8_hours_per_month_and_only_his(app, stevedores):
    q = {"from": "2026-02-01", "to": "2026-03-31"}
    c1, _ = worker_client(app, "E001")
    page = c1.get("/w/turnos", params=q)
    assert page.status_code == 200 and 'id="r8"' in page.text and "DL 2.032 art. 6" in page.text
    # February: T0 330 min; March: T2 310 min + T1 300 min + 40 min of travel to the anchored
    # ship (E7, art. 16: work time) = 650 min; the rain stop of T1 is not work time
    assert _r8(page.text) == {"2026-02": ("1", "5,50"), "2026-03": ("2", "10,83")}
    assert "E7" in page.text and _weight(c1, page.text) < PAGE_LIMIT
    c2, _ = worker_client(app, "E002")
    assert _r8(c2.get("/w/turnos", params=q).text) == {"2026-02": ("0", "0,00"), "2026-03": ("2", "10,83")}
    assert _r8(c2.get("/w/turnos", params={"from": "2026-03-14", "to": "2026-03-14"}).text) == {
        "2026-03": ("2", "10,83")}  # the whole month, whatever day of it is asked
    c17, _ = worker_client(app, "V017")  # a watchman: no R8 return
    assert 'id="r8"' not in c17.get("/w/turnos", params=q).text


def test_a_stevedore_sees_his_production_statements_with_their_lines_and_only_his(app, stevedores):
    q = {"from": "2026-02-01", "to": "2026-03-31"}
    c1, token = worker_client(app, "E001")
    page = c1.get("/w/pagamento", params=q)
    assert page.status_code == 200 and _weight(c1, page.text) < PAGE_LIMIT
    gangs = re.findall(r'data-gang="(T\d)" data-date="([0-9-]+)"', page.text)
    assert gangs == [("T1", "2026-03-14"), ("T2", "2026-03-13"), ("T0", "2026-02-27")]  # newest first
    t1 = page.text[page.text.index('data-gang="T1"'):page.text.index('data-gang="T2"')]
    # T1: 300 t × R$ 3,20 = R$ 960,00 in 5.5 quotas; E001 general foreman of 2 holds: 2 quotas
    assert "R$ 368,78" in t1 and "contramestre geral" in t1 and "9300002" in t1 and "Cotas: 2" in t1
    for rule, words, article in (("E2", "sua cota da produção do terno", "DL 2.032 art. 24"),
                                 ("E7", "viagem ao navio fundeado e volta", "DL 2.032 art. 16"),
                                 ("E4", "espera por início atrasado, chuva", "DL 2.032 art. 12 §3")):
        line = re.search(rf'<tr data-rule="{rule}">(.*?)</tr>', t1).group(1)
        assert words in line and article in line, (rule, line)
    assert "R$ 349,09" in t1 and "R$ 15,00" in t1 and "R$ 4,69" in t1
    assert "Nenhum demonstrativo" not in page.text
    c2, _ = worker_client(app, "E002")  # the same gangs, his own lines: never E001's
    for params in (q, dict(q, registration="E001")):  # a registration in the query is not read
        other = c2.get("/w/pagamento", params=params).text
        assert re.findall(r'data-gang="(T\d)"', other) == ["T1", "T2"] and "R$ 368,78" not in other
        assert "R$ 349,09" not in other and "R$ 281,51" in other and "Cotas: 1,5" in other
    c17, _ = worker_client(app, "V017")  # a watchman: his gangway statement, no production
    mine = c17.get("/w/pagamento", params=q).text
    assert "R$ 696,60" in mine and "data-gang" not in mine and 'id="production"' not in mine
    c1.post("/lang", data={"csrf_token": token, "lang": "en", "next": "/w/pagamento"})
    en = c1.get("/w/pagamento", params=q).text
    assert "Production (gangs)" in en and "general foreman" in en and "trip to the ship at anchorage" in en


def test_a_health_refusal_decided_after_the_period_ended_is_refused_and_stays_pending(app, ledger, engine, clock):
    """The office's clock past the end of V017's 19-01 (01:00 of the next day, port time): accepting
    his request would change an ended period's escala (issue 34), so it is refused with the reason
    in pt-BR, nothing recorded; the request stays pending (the office rejects it)."""
    from central.rotation.schema import escala, refusals

    with engine.connect() as conn:
        entry = conn.execute(select(escala.c.id).where(escala.c.registration == "V017")).scalar_one()
    c, token = worker_client(app, "V017")
    assert c.post(f"/w/escala/{entry}/saude", data={"csrf_token": token, "reason": "febre"},
                  files={"photo": ("a.png", _png(), "image/png")}).status_code == 303
    today = clock().astimezone(ZoneInfo(WebSettings().tz)).date()
    clock.at = dt.datetime.combine(today + dt.timedelta(days=1), dt.time(1), ZoneInfo(WebSettings().tz))
    office, otoken = logged_in(app, "office")
    rid = re.search(r'data-request="(\d+)"', office.get("/worker-requests").text).group(1)
    r = office.post(f"/worker-requests/{rid}/decide", data={"csrf_token": otoken, "decision": "accept"})
    assert r.status_code == 400
    assert (f"entrada de escala: a entrada de escala {entry} ({today:%d/%m/%Y} 19-01) terminou em "
            f"{today + dt.timedelta(days=1):%d/%m/%Y} 01:00 (hora do porto)") in r.text, r.text[-3000:]
    with engine.connect() as conn:
        assert conn.execute(select(escala.c.status).where(escala.c.id == entry)).scalar() == "active"
        assert conn.execute(select(refusals)).first() is None
    assert f'data-request="{rid}" data-status="pending"' in office.get("/worker-requests").text
