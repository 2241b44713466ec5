"""The fixed cost of a signed-in page (issue 32 item 6, docs/performance.md): the session's user read
on the event loop when the ledger is a SQLite file with a connection free (one thread hand-off fewer
per page), through the thread pool otherwise; a code's label looked up once per render. What a page
shows and who may see it are the other web tests'."""

from __future__ import annotations

import pytest

from central.web import render, security
from central.web.users import User
from tests.central.web.conftest import login


def _hops(monkeypatch) -> list[str]:
    """The names of the functions ``central.web.security`` hands to the thread pool, recorded."""
    seen: list[str] = []
    real = security.run_in_threadpool

    async def counted(fn, *args, **kwargs):
        seen.append(getattr(args[0] if args else fn, "__name__", repr(fn)))
        return await real(fn, *args, **kwargs)

    monkeypatch.setattr(security, "run_in_threadpool", counted)
    return seen


def test_a_signed_in_page_reads_its_user_on_the_loop_on_sqlite_and_in_the_pool_on_postgresql(
        app, client, engine, monkeypatch):
    assert login(client, "auditor").status_code == 303
    hops = _hops(monkeypatch)
    r = client.get("/reads")
    assert r.status_code == 200 and 'data-role="auditor"' in r.text  # the user found, the page his
    assert hops == ([] if engine.dialect.name == "sqlite" else ["session_user"])


def test_an_ended_session_is_refused_the_same_on_the_loop(app, client, engine, monkeypatch):
    assert login(client, "office").status_code == 303
    copied = client.cookies.get("portgate_session")
    page = client.get("/reads")
    token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    assert client.post("/logout", data={"csrf_token": token}).status_code == 303
    client.cookies.set("portgate_session", copied)  # the cookie copied before the logout: its session ended
    hops = _hops(monkeypatch)
    r = client.get("/reads")
    assert r.status_code == 303 and r.headers["location"].startswith("/login")
    assert hops == ([] if engine.dialect.name == "sqlite" else ["session_user"])


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_with_every_pooled_connection_taken_the_user_is_read_in_the_pool(app, engine):
    web = app.state.web
    assert web.quick_read_here()
    held = [engine.connect() for _ in range(engine.pool.size())]
    try:
        assert not web.quick_read_here()  # taking one more would wait: the loop must not
    finally:
        for conn in held:
            conn.close()
    assert web.quick_read_here()


def test_a_label_is_looked_up_once_per_code_in_one_render():
    asked: list[str] = []

    def label(code: str) -> str:
        asked.append(code)
        return code.upper()

    named = render.once_per_code(label)
    assert [named(c) for c in ("portalo", "porao", "portalo", "porao", 7, "7")] == \
        ["PORTALO", "PORAO", "PORTALO", "PORAO", "7", "7"]
    assert asked == ["portalo", "porao", "7"]
    assert render.once_per_code(label)("portalo") == "PORTALO" and asked[-1] == "portalo"  # a new render asks again


def test_the_session_s_user_is_the_same_user_row(engine, users):
    from sqlalchemy.orm import Session

    from central.web.users import session_user, start_session
    from central.web.schema import office_users
    from sqlalchemy import select

    with Session(engine) as s, s.begin():
        uid = s.execute(select(office_users.c.id).where(office_users.c.login == "inspector")).scalar_one()
        token = start_session(s, uid)
    with engine.connect() as conn:
        assert session_user(conn, token) == User(uid, "inspector", "inspector user", "inspector", None)
        assert session_user(conn, token + "x") is None
