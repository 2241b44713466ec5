"""Security of the office web application: sessions, roles, CSRF, signed cookies, escaping, the
login rate limit, and hostile filter values."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session
from starlette.testclient import TestClient

from central.config import WebSettings
from central.registry.schema import audit_log
from central.web.app import create_app, route_table
from central.web.users import FREE_ADDRESS, FREE_PAIR
from tests.central.web.conftest import PASSWORD, SECRET, csrf_of, logged_in, login

PUBLIC_PATHS = {"/login", "/lang", "/w/ativar",  # /w/ativar: a worker sets his password with a code
                "/v", "/v/{token}"}  # a payslip's verification (issue 34): total, period, initials only


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "1", path)


def test_every_route_is_guarded_or_public(app):
    for route in route_table(app):
        public = getattr(route.endpoint, "public", False)
        assert public == (route.path in PUBLIC_PATHS), route.path
        if not public:
            assert getattr(route.endpoint, "roles", None), f"{route.path} has no role check"


def test_no_page_or_endpoint_answers_without_a_session(client, app):
    checked = 0
    for route in route_table(app):
        if route.path in PUBLIC_PATHS:
            continue
        for method in sorted(route.methods - {"HEAD"}):
            r = client.request(method, _concrete(route.path))
            if method == "GET":
                assert r.status_code == 303 and r.headers["location"].startswith("/login"), (method, route.path)
            else:
                assert r.status_code == 401, (method, route.path, r.status_code)
            assert "portgate_session" not in r.headers.get("set-cookie", "") or "uid" not in r.text
            checked += 1
    assert checked >= 20
    # htmx and SSE requests get 401, not a login page
    assert client.get("/live/panel", headers={"HX-Request": "true"}).status_code == 401
    assert client.get("/live/stream", headers={"Accept": "text/event-stream"}).status_code == 401


@pytest.mark.parametrize("role, method, path", [
    ("auditor", "POST", "/cases"),
    ("office", "POST", "/cases"),
    ("office", "GET", "/cases"),
    ("inspector", "GET", "/users"),
    ("inspector", "POST", "/ships"),
    ("auditor", "POST", "/ships"),
    ("office", "POST", "/cases/1/decide"),
    ("auditor", "POST", "/users"),
])
def test_a_request_without_the_role_gets_403_never_the_data(app, role, method, path):
    c, token = logged_in(app, role)
    r = c.request(method, path, data={"csrf_token": token, "login": "x", "role": "admin", "password": "p" * 12})
    assert r.status_code == 403
    with Session(app.state.web.engine) as s:
        assert s.execute(select(func.count()).select_from(audit_log)
                         .where(audit_log.c.action != "user.add")).scalar() == 0


def test_a_change_without_or_with_a_wrong_csrf_token_is_refused(app):
    c, token = logged_in(app, "office")
    form = {"ship": "9300001", "ship_name": "X", "voyage": "long_haul", "berth": "berthed",
            "gate_id": "g1", "arrival": "2026-03-15T06:00:00-03:00", "departure": ""}
    assert c.post("/ships", data=form).status_code == 403
    forged = c.post("/ships", data=form | {"csrf_token": "forged"})
    assert forged.status_code == 403 and "recarregue a página" in forged.text  # pt-BR first
    assert forged.headers["content-type"].startswith("text/html")  # the app's page, not text/plain
    assert '<h1>Formulário expirado' in forged.text and 'href="/"' in forged.text
    assert c.post("/ships", data=form, headers={"X-CSRF-Token": "forged"}).status_code == 403
    assert c.post("/logout").status_code == 403  # logging out is a change too
    assert c.post("/ships", data=form | {"csrf_token": token}).status_code == 303
    assert c.post("/ships", data=form, headers={"X-CSRF-Token": token}).status_code == 303


def test_the_login_form_needs_its_csrf_token(client):
    client.get("/login")
    r = client.post("/login", data={"login": "office", "password": PASSWORD})
    assert r.status_code == 403
    assert "uid" not in str(client.cookies)


def test_a_session_cookie_signed_with_another_secret_is_refused(engine, users, clock):
    other = create_app(engine, WebSettings(), b"o" * 32, now=clock, background=False)
    c_other, _ = logged_in(other, "admin")
    cookie = c_other.cookies.get("portgate_session")
    assert cookie
    ours = create_app(engine, WebSettings(), b"s" * 32, now=clock, background=False)
    c = TestClient(ours, follow_redirects=False)
    c.cookies.set("portgate_session", cookie)
    r = c.get("/users")
    assert r.status_code == 303 and r.headers["location"].startswith("/login")
    assert c_other.get("/users").status_code == 200  # the same cookie works where it was signed


def test_the_session_cookie_is_httponly_samesite_lax_and_secure_over_tls(engine, users, clock):
    plain = TestClient(create_app(engine, WebSettings(), b"s" * 32, now=clock, background=False),
                       follow_redirects=False)
    r = login(plain, "office")
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "secure" not in cookie
    tls = TestClient(create_app(engine, WebSettings(), b"s" * 32, secure=True, now=clock, background=False),
                     base_url="https://testserver", follow_redirects=False)
    r = login(tls, "office")
    assert "secure" in r.headers["set-cookie"].lower()
    assert "content-security-policy" in r.headers


def test_a_disabled_user_loses_its_session(app):
    from central.web.users import disable_user

    c, _ = logged_in(app, "auditor")
    assert c.get("/").status_code == 200
    with Session(app.state.web.engine) as s, s.begin():
        disable_user(s, "auditor", actor="test")
    assert c.get("/").status_code == 303
    assert login(TestClient(app, follow_redirects=False), "auditor").status_code == 401


def test_a_logged_out_cookie_opens_nothing(app):
    c, token = logged_in(app, "admin")
    cookie = c.cookies.get("portgate_session")
    other, _ = logged_in(app, "admin")  # another browser of the same user
    assert c.post("/logout", data={"csrf_token": token}).status_code == 303
    thief = TestClient(app, follow_redirects=False)
    thief.cookies.set("portgate_session", cookie)  # a copy of the cookie taken before the logout
    r = thief.get("/users")
    assert r.status_code == 303 and r.headers["location"].startswith("/login")
    assert thief.post("/users", data={"csrf_token": token, "login": "x", "role": "admin",
                                      "password": "p" * 12}).status_code == 401
    assert other.get("/users").status_code == 200  # only that session ended


def test_a_new_password_ends_the_users_sessions(app):
    from central.web.users import set_password

    c, _ = logged_in(app, "office")
    assert c.get("/").status_code == 200
    with Session(app.state.web.engine) as s, s.begin():
        set_password(s, "office", "a new password!", actor="test")
    assert c.get("/").status_code == 303
    assert login(TestClient(app, follow_redirects=False), "office", "a new password!").status_code == 303


def test_html_in_a_workers_name_is_shown_escaped(app):
    from central.registry import store
    from central.rotation.schema import escala
    from portgate.records import Worker, WorkerStatus

    web = app.state.web
    now = web.now()
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    with Session(web.engine) as s, s.begin():
        store.save_worker(s, Worker(registration="V666", name=evil, category="vigia", status=WorkerStatus.ACTIVE,
                                    suspended_from=None, suspended_until=None, health_exam_date=None,
                                    booklet_revalidated_year=None, rotation_number=1),
                          actor="test", now=now, action="worker.import")
        s.execute(escala.insert().values(
            date=now.astimezone(web.tz).date(), period="07-13", ship="9300001", ship_name="<b>Bold</b>",
            voyage="long_haul", berth="berthed", gate_id="g1", post="portalo", function="vigia",
            registration="V666", operator="op", start_at=now - dt.timedelta(hours=1),
            end_at=now + dt.timedelta(hours=5), status="active", created_at=now))
    c, _ = logged_in(app, "auditor")
    html = c.get("/").text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    assert "<script>alert" not in html and "<img src=x" not in html and "<b>Bold</b>" not in html
    assert "&lt;b&gt;Bold&lt;/b&gt;" in html


def test_wrong_passwords_slow_that_login_from_that_address_with_growing_waits(app, clock):
    app.state.web.throttle_now = clock  # the throttle's clock (the wall clock in the office), moved here
    c = TestClient(app, follow_redirects=False)
    for _ in range(FREE_PAIR - 1):
        assert login(c, "inspector", "wrong password!").status_code == 401
    r = login(c, "inspector", "wrong password!")
    assert r.status_code == 429 and r.headers["retry-after"] == "1"  # the FREE_PAIR-th: a wait now
    r = login(c, "inspector", PASSWORD)  # even the right password is refused while waiting (not counted)
    assert r.status_code == 429 and "tente de novo mais tarde" in r.text and "(espere 1 s)" in r.text
    assert login(c, "office", PASSWORD).status_code == 303  # another login from the same address is not slowed
    clock.at += dt.timedelta(seconds=1)
    r = login(c, "inspector", "wrong password!")
    assert r.status_code == 429 and r.headers["retry-after"] == "2"  # counted: the wait doubles
    clock.at += dt.timedelta(seconds=2)
    assert login(c, "inspector", PASSWORD).status_code == 303


def test_wrong_passwords_for_many_logins_slow_the_address(app):
    c = TestClient(app, follow_redirects=False)
    for i in range(FREE_ADDRESS):
        login(c, f"nobody{i}", "whatever password")
    assert login(c, "office", PASSWORD).status_code == 429


HOSTILE = ["' OR '1'='1", "1; DROP TABLE events; --", "%", "_%", '"', "\\", "V001' --", "<script>x</script>",
           "2026-03-15' OR 1=1 --", "\x00", "9999-12-31", "0001-01-01", "99999999999999999999999", "-1"]
OUT_OF_RANGE = ["99999999999999999999999", "9223372036854775808", "0", "-1", "1e309"]


def test_sql_metacharacters_in_every_filter_are_refused_or_match_nothing(app):
    from tests.central.web.test_flags import add_flag_event

    add_flag_event(app.state.web.engine, flags=["BORROWED_CARD"])
    c, _ = logged_in(app, "inspector")
    everything = c.get("/flags")
    assert everything.status_code == 200 and everything.text.count('data-event="') == 1
    for name in ("date", "ship", "gate", "worker", "flag"):
        for value in HOSTILE:
            r = c.get("/flags", params={name: value})
            assert r.status_code in (200, 400), (name, value, r.status_code)
            assert 'data-event="' not in r.text, (name, value)
    with app.state.web.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM events")).scalar() == 1


def test_out_of_range_ids_in_every_route_are_400_or_404_never_500(app):
    from tests.central.web.test_flags import add_flag_event

    add_flag_event(app.state.web.engine, flags=["BORROWED_CARD"])
    checked = 0
    for role in ("inspector", "admin", "office"):
        c, token = logged_in(app, role)
        for route in route_table(app):
            names = re.findall(r"\{([^}]+)\}", route.path)
            if not names:
                continue
            for name in names:
                for value in OUT_OF_RANGE:
                    path = re.sub(r"\{([^}]+)\}", lambda m: value if m.group(1) == name else "1", route.path)
                    for method in sorted(route.methods - {"HEAD"}):
                        r = c.request(method, path, data={"csrf_token": token, "defence": "d", "kind": "x"})
                        assert r.status_code in (400, 403, 404), (role, method, path, r.status_code)
                        checked += 1
    assert checked >= 50
    c, _ = logged_in(app, "inspector")
    assert c.get("/flags", params={"date": "9999-12-31"}).status_code == 400
    assert c.get("/cases/99999999999999999999999").status_code == 404
    assert c.get("/cases/1/attachments/99999999999999999999").status_code == 404


def test_a_locked_database_answers_busy_try_again_not_a_traceback(engine, users, clock):
    """Another writer holds the lock (SQLite: the write lock; PostgreSQL: the table lock): a ledger
    write answers 503 with a page after ``write_lock_timeout_s``, and saves once the lock is gone."""
    import sqlite3

    app = create_app(engine, WebSettings(write_lock_timeout_s=0.5), SECRET, now=clock, background=False)
    c, token = logged_in(app, "office")
    form = {"ship": "9300001", "ship_name": "X", "voyage": "long_haul", "berth": "berthed",
            "gate_id": "g1", "arrival": "2026-03-15T06:00:00-03:00", "departure": "", "csrf_token": token}
    url = engine.url
    if url.get_backend_name() == "sqlite":
        other = sqlite3.connect(url.database, timeout=0)
        other.execute("BEGIN IMMEDIATE")
        release = other.rollback
        engine.dispose()
    else:
        other = engine.connect()
        tx = other.begin()
        other.execute(text("LOCK TABLE ship_calls IN ACCESS EXCLUSIVE MODE"))
        release = tx.rollback
    try:
        r = c.post("/ships", data=form)
    finally:
        release()
        other.close()
    assert r.status_code == 503, r.text[:300]
    assert "ocupado" in r.text and "Traceback" not in r.text
    assert r.headers["retry-after"] == "2"
    assert c.post("/ships", data=form).status_code == 303  # the lock gone, the same form saves


def test_a_body_over_the_limit_is_refused_with_413_before_it_is_read(engine, users, clock):
    app = create_app(engine, WebSettings(max_body_mb=0.01), b"s" * 32, now=clock, background=False)
    c, token = logged_in(app, "office")
    big = b"ship,ship_name\n" + b"9300001,X\n" * 2000  # 20 KB > 10 KB
    r = c.post("/ships/import", data={"csrf_token": token}, files={"file": ("ships.csv", big, "text/csv")})
    assert r.status_code == 413
    assert "grande demais" in r.text and "0.01 MB" in r.text

    def chunks():  # no Content-Length: counted while read
        for _ in range(40):
            yield b"x" * 1024

    r = c.post("/ships/import", content=chunks(), headers={"content-type": "multipart/form-data; boundary=b"})
    assert r.status_code == 413
    assert c.get("/ships").status_code == 200  # the session still works


def test_a_wrong_method_answers_405_with_the_app_s_page_in_portuguese(app):
    c, _ = logged_in(app, "office")
    r = c.get("/whatif/gate")  # a form's target, POST only
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert "Esta página não aceita este tipo de pedido" in r.text and "GET /whatif/gate" in r.text
    assert "Method Not Allowed" not in r.text and 'lang="pt-BR"' in r.text
    r = c.delete("/whatif")
    assert r.status_code == 405 and "GET" in r.headers["allow"] and "não aceita" in r.text


def test_an_unknown_address_answers_404_with_the_app_s_page(app):
    c, _ = logged_in(app, "office")
    r = c.get("/no-such-page")
    assert r.status_code == 404 and "Página não encontrada." in r.text and "Not Found" not in r.text
    # the signed-in clerk keeps his menu (issue 34 item 14): his pages and who he is
    assert 'href="/workers"' in r.text and 'href="/pay"' in r.text and 'data-role="office"' in r.text
    anonymous = TestClient(app, base_url="http://testserver").get("/no-such-page")
    assert anonymous.status_code == 404 and 'href="/pay"' not in anonymous.text


def test_in_english_the_405_page_is_in_english(engine, users, clock):
    app = create_app(engine, WebSettings(lang="en"), SECRET, now=clock, background=False)
    c, _ = logged_in(app, "office")
    r = c.get("/whatif/gate")
    assert r.status_code == 405 and "This page does not take this kind of request" in r.text


def test_every_change_made_in_the_web_is_in_the_audit_log_with_the_user(app):
    c, token = logged_in(app, "office")
    form = {"ship": "9300001", "ship_name": "Aurora", "voyage": "long_haul", "berth": "berthed",
            "gate_id": "g1", "arrival": "2026-03-15T06:00:00-03:00", "departure": "", "csrf_token": token}
    assert c.post("/ships", data=form).status_code == 303
    with Session(app.state.web.engine) as s:
        row = s.execute(select(audit_log).where(audit_log.c.action == "ship_call.save")).one()
    assert row.actor == "web:office" and row.subject == "9300001"


def test_login_never_redirects_off_site(app):
    c = TestClient(app, follow_redirects=False)
    token = csrf_of(c.get("/login").text)
    for target in ("//evil.example/", "https://evil.example/", "/\\evil.example"):
        r = c.post("/login", data={"login": "office", "password": PASSWORD, "csrf_token": token, "next": target})
        assert r.status_code == 303 and r.headers["location"] == "/", target
        token = csrf_of(c.get("/").text)
        c.post("/logout", data={"csrf_token": token})
        token = csrf_of(c.get("/login").text)


@pytest.mark.parametrize("field,value,message", [
    ("days", "ten", "dias: &#39;ten&#39; não é um número inteiro"),  # the service's refusal, in the page's language
    ("start", "15/03/2026", "primeiro dia: &#39;15/03/2026&#39; não é uma data ISO (AAAA-MM-DD)"),
])
def test_a_decision_with_a_bad_field_is_a_400_naming_it_and_changes_nothing(app, field, value, message):
    c, token = logged_in(app, "inspector")
    r = c.post("/cases/1/decide", data={"csrf_token": token, "kind": "suspension", field: value})
    assert r.status_code == 400 and message in r.text, r.text
    with Session(app.state.web.engine) as s:
        assert s.execute(select(func.count()).select_from(audit_log)
                         .where(audit_log.c.action != "user.add")).scalar() == 0
