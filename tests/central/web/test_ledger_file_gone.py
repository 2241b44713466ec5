"""``portgate office serve`` on a SQLite ledger whose file is replaced by junk or removed while it
runs: every request, on a new pooled connection or an old one, answers the app's 503 page "the
ledger (database) is unavailable ... try again" (pt-BR first, one log line
``web.ledger_unreachable``), never a 500 and never stale data from the unlinked file; the server
never creates a new empty ledger file; when the good file is back the same session goes on. The
real entry point in a child process on a free loopback port, a real SQLite file moved away."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest
from sqlalchemy import text

from app.cli import main
from app.demo.mosquitto import free_port
from central.db import make_engine
from testkit.wait import wait_until
from tests.central.web.conftest import csrf_of

from .private_ledger import DOWN_PT

PASSWORD = "long enough password"


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    """A migrated SQLite ledger with one office clerk, served by ``portgate office serve``:
    (base URL, ledger path, server log path)."""
    tmp = tmp_path_factory.mktemp("ledger-file")
    db = tmp / "ledger.db"
    cfg = tmp / "central.toml"
    cfg.write_text(f'database_url = "sqlite:///{db}"\nport = "santos"\nkeys_dir = "keys"\n')
    assert main(["ledger", "migrate", "--config", str(cfg)]) == 0
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PORTGATE_PASSWORD", PASSWORD)
        assert main(["office", "add-user", "--config", str(cfg), "--login", "clerk", "--role", "office"]) == 0
    port = free_port()
    log = tmp / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "office", "serve", "--config", str(cfg),
                                 "--port", str(port)], stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def up():
        assert proc.poll() is None, log.read_text()
        try:
            return httpx.get(f"{base}/login", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_until(up, timeout=60, what="office serve listening")
        yield base, db, log
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _signed_in(base: str) -> httpx.Client:
    c = httpx.Client(base_url=base, follow_redirects=False, timeout=30)
    token = csrf_of(c.get("/login").text)
    r = c.post("/login", data={"login": "clerk", "password": PASSWORD, "csrf_token": token, "next": "/"})
    assert r.status_code == 303, r.text[:2000]
    return c


def _down(r: httpx.Response) -> None:
    assert r.status_code == 503, (r.status_code, r.text[:2000])
    assert DOWN_PT in r.text and "Tente de novo" in r.text, r.text[:2000]


def _warm(clients: list[httpx.Client]) -> str:
    """Every client reads /workers (the server's pool holds connections to the good file); the
    form's CSRF token."""
    for c in clients:
        assert c.get("/workers").status_code == 200
    return csrf_of(clients[0].get("/workers/new").text)


def _requests_while_gone(clients: list[httpx.Client], csrf: str) -> None:
    for c in clients * 3:  # more requests than the pool's connections: old and new ones answer alike
        _down(c.get("/workers"))
        _down(c.post("/workers/new", data={"csrf_token": csrf, "name": "Maria da Silva"}))


def test_a_ledger_file_replaced_by_junk_answers_503_then_the_good_file_serves_again(office):
    base, db, log = office
    clients = [_signed_in(base) for _ in range(3)]
    csrf = _warm(clients)
    aside = db.with_name("ledger.good")
    os.replace(db, aside)
    junk = db.with_name("junk.tmp")
    junk.write_bytes(b"this is not a ledger " * 500)
    os.replace(junk, db)  # a new inode: the pooled connections still hold the old file
    try:
        _requests_while_gone(clients, csrf)
        stranger = httpx.Client(base_url=base, follow_redirects=False, timeout=30)
        token = csrf_of(stranger.get("/login").text)
        _down(stranger.post("/login", data={"login": "clerk", "password": PASSWORD, "csrf_token": token,
                                            "next": "/"}))
    finally:
        os.replace(aside, db)
    wait_until(lambda: clients[0].get("/workers").status_code == 200, timeout=30, what="/workers served again")
    for c in clients:
        assert c.get("/workers").status_code == 200
    said = log.read_text()
    assert "web.ledger_unreachable" in said and "file is not a database" in said, said[-3000:]
    assert "Traceback" not in said and "Internal Server Error" not in said, said[-3000:]


def test_a_removed_ledger_file_answers_503_is_never_created_and_comes_back(office):
    base, db, log = office
    clients = [_signed_in(base) for _ in range(3)]
    csrf = _warm(clients)
    aside = db.with_name("ledger.good")
    os.replace(db, aside)
    try:
        _requests_while_gone(clients, csrf)
        stranger = httpx.Client(base_url=base, follow_redirects=False, timeout=30)
        token = csrf_of(stranger.get("/login").text)
        _down(stranger.post("/login", data={"login": "clerk", "password": PASSWORD, "csrf_token": token,
                                            "next": "/"}))
        assert not db.exists(), "the server created a new ledger file"
    finally:
        os.replace(aside, db)
    wait_until(lambda: clients[0].get("/workers").status_code == 200, timeout=30, what="/workers served again")
    assert _signed_in(base).get("/workers").status_code == 200  # a login writes (login_failures): the real file
    said = log.read_text()
    assert "unable to open database file" in said, said[-3000:]
    assert "Traceback" not in said and "Internal Server Error" not in said, said[-3000:]


def test_an_existing_file_engine_never_creates_the_file_nor_reuses_a_connection_to_a_removed_one(tmp_path):
    """``make_engine(existing_file=True)`` itself: a missing file is an ``unreachable`` error, not
    a new file; a pooled connection is not reused once its file was moved away (before: it read
    the unlinked file's rows), and the file put back is read again."""
    from sqlalchemy.exc import OperationalError

    from central.db import unreachable

    db, aside = tmp_path / "l.db", tmp_path / "aside.db"
    engine = make_engine(f"sqlite:///{db}", existing_file=True)
    with pytest.raises(OperationalError) as refused:
        engine.connect()
    assert unreachable(refused.value) and not db.exists()
    first = make_engine(f"sqlite:///{db}")  # a command that may start a ledger makes it
    with first.begin() as conn:
        conn.execute(text("CREATE TABLE t (v TEXT)"))
        conn.execute(text("INSERT INTO t VALUES ('kept')"))
    first.dispose()
    with engine.connect() as conn:  # now pooled
        assert conn.execute(text("SELECT v FROM t")).scalar_one() == "kept"
    os.replace(db, aside)
    with pytest.raises(OperationalError) as refused:
        engine.connect()
    assert unreachable(refused.value) and not db.exists(), refused.value
    os.replace(aside, db)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT v FROM t")).scalar_one() == "kept"
    engine.dispose()
