"""Fixtures for the office web application: a migrated SQLite ledger per test, the real app (its
routes, middleware and templates) under Starlette's TestClient, users of every role."""

from __future__ import annotations

import datetime as dt
import itertools
import re
import sqlite3
from contextlib import closing
from pathlib import Path

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
def migrated_sqlite(tmp_path_factory) -> Path:
    """A SQLite ledger migrated to head once per session (the migrations have their own tests in
    tests/central/ledger); each test's ``engine`` starts from a copy of it."""
    path = tmp_path_factory.mktemp("web-ledger") / "ledger.db"
    engine = make_engine(f"sqlite:///{path}")
    upgrade_engine(engine)
    engine.dispose()
    return path


@pytest.fixture(scope="session")
def migrated_postgresql(pg_cluster) -> str:
    """The name of a database of the session's cluster migrated to head once per session, the
    template of each test's PostgreSQL ``engine`` (``CREATE DATABASE ... TEMPLATE``)."""
    engine = make_engine(pg_cluster.create_database("web_template"))
    upgrade_engine(engine)
    engine.dispose()
    return "web_template"


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path):
    """A migrated ledger of its own: a copy of the session's migrated SQLite file, or a database
    made from the migrated template in the session's PostgreSQL cluster (``pg_cluster`` of
    tests/central/conftest.py, shared with the ledger and pay suites)."""
    if request.param == "sqlite":
        path = tmp_path / "ledger.db"
        with closing(sqlite3.connect(request.getfixturevalue("migrated_sqlite"))) as src, \
                closing(sqlite3.connect(path)) as dst:
            src.backup(dst)
        url = f"sqlite:///{path}"
    else:
        template = request.getfixturevalue("migrated_postgresql")
        url = request.getfixturevalue("pg_cluster").create_database(f"web{next(_counter)}", template=template)
    engine = make_engine(url)
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
