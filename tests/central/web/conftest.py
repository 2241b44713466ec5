"""Fixtures for the office web application: a migrated SQLite ledger per test, the real app (its
routes, middleware and templates) under Starlette's TestClient, users of every role."""

from __future__ import annotations

import datetime as dt
import itertools
import re

import pytest
from sqlalchemy.orm import Session
from starlette.testclient import TestClient

from central.config import WebSettings
from central.db import make_engine
from central.ledger.migrate import upgrade_engine
from central.web import users as users_module
from central.web.app import create_app
from central.web.users import add_user

PASSWORD = "correct horse battery"
SECRET = b"s" * 32
ROLES = ("office", "inspector", "auditor", "admin")


class Clock:
    """The app's clock, moved by tests (rate-limit windows)."""

    def __init__(self) -> None:
        self.at = dt.datetime.now(dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.at


_counter = itertools.count(1)


@pytest.fixture(scope="session")
def pg_cluster():
    """One throw-away PostgreSQL cluster for the web suite, removed at the end."""
    from testkit.postgres import PostgresCluster

    cluster = PostgresCluster()
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path):
    """A migrated ledger: a SQLite file, or a fresh database in the session's PostgreSQL cluster."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'ledger.db'}"
    else:
        url = request.getfixturevalue("pg_cluster").create_database(f"web{next(_counter)}")
    engine = make_engine(url)
    upgrade_engine(engine)
    yield engine
    engine.dispose()


class _HashOnce:
    """The product's argon2id hasher (its parameters), hashing each password once per session: the
    roles share one password, so a test's users cost one hash, not four. Logins verify for real."""

    hashes: dict[str, str] = {}

    def __init__(self, real) -> None:
        self.real = real

    def hash(self, password: str) -> str:
        if password not in self.hashes:
            self.hashes[password] = self.real.hash(password)
        return self.hashes[password]


@pytest.fixture
def users(engine):
    with pytest.MonkeyPatch.context() as mp, Session(engine) as s, s.begin():
        mp.setattr(users_module, "_hasher", _HashOnce(users_module._hasher))
        for role in ROLES:
            add_user(s, role, role=role, password=PASSWORD, name=f"{role} user", actor="test")
    return ROLES


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def app(engine, users, clock):
    return create_app(engine, WebSettings(), SECRET, now=clock, background=False)


@pytest.fixture
def client(app):
    with TestClient(app, base_url="http://testserver", follow_redirects=False) as c:
        yield c


def csrf_of(html: str) -> str:
    m = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert m, "no CSRF token in the page"
    return m.group(1)


def login(client: TestClient, user: str, password: str = PASSWORD):
    token = csrf_of(client.get("/login").text)
    return client.post("/login", data={"login": user, "password": password, "csrf_token": token, "next": "/"})


def logged_in(app, role: str) -> tuple[TestClient, str]:
    """A new client logged in as ``role``; returns it and its CSRF token."""
    c = TestClient(app, base_url="http://testserver", follow_redirects=False)
    r = login(c, role)
    assert r.status_code == 303, r.text
    return c, csrf_of(c.get("/").text)
