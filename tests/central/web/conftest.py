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


class _VerifyOnce:
    """The product's argon2id hasher, every call passed on, except that ``verify`` runs the real
    argon2 check once per session for each (stored hash, password) pair and answers the same again
    for that pair: True, or the same error (a wrong password, an unreadable hash). A login costs
    ~0.2 s of argon2 work on two busy cores (more under load), and most tests log the same users in
    with the same password; the answer for a pair cannot change."""

    answers: dict[tuple[str, str], BaseException | None] = {}

    def __init__(self, real) -> None:
        self.real = real

    def __getattr__(self, name):
        return getattr(self.real, name)

    def verify(self, stored: str | bytes, password: str | bytes) -> bool:
        key = (stored, password)
        if key not in self.answers:
            try:
                self.real.verify(stored, password)
                self.answers[key] = None
            except Exception as refused:  # VerificationError, InvalidHashError: the caller's to catch
                self.answers[key] = refused
        refused = self.answers[key]
        if refused is not None:
            raise type(refused)(*refused.args)
        return True


@pytest.fixture
def users(engine, monkeypatch):
    """The four roles' users (login = role, ``PASSWORD``). For the test's duration the users module
    verifies each (hash, password) pair once per session (``_VerifyOnce``)."""
    with pytest.MonkeyPatch.context() as mp, Session(engine) as s, s.begin():
        mp.setattr(users_module, "_hasher", _HashOnce(users_module._hasher))
        for role in ROLES:
            add_user(s, role, role=role, password=PASSWORD, name=f"{role} user", actor="test")
    monkeypatch.setattr(users_module, "_hasher", _VerifyOnce(users_module._hasher))
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
