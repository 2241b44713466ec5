"""Fixtures for the office web application: a migrated SQLite ledger per test, the real app (its
routes, middleware and templates) under Starlette's TestClient, users of every role, and a
chromium per module for the browser tests."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from sqlalchemy.orm import Session
from starlette.testclient import TestClient

from central.config import WebSettings
from central.db import make_engine
from central.web import users as users_module
from central.web.app import create_app
from central.registry.store import import_files
from central.web.users import add_user
from testkit.browser import launch_chromium

DEMO = Path(__file__).resolve().parents[3] / "config" / "demo"
PASSWORD = "correct horse battery"
SECRET = b"s" * 32
ROLES = ("office", "inspector", "auditor", "admin")


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by Playwright, one per test module (the browser tests' pages)."""
    with launch_chromium() as b:
        yield b


class Clock:
    """The app's clock, moved by tests (rate-limit windows)."""

    def __init__(self) -> None:
        self.at = dt.datetime.now(dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.at


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """A migrated ledger of its own: a copy of the session's migrated SQLite file, or a database
    made from the migrated template in the session's PostgreSQL cluster (``ledgers`` of
    tests/central/conftest.py, shared with the ledger and pay suites)."""
    yield from engine_of(request, tmp_path, ledgers)


def engine_of(request, tmp_path, ledgers, filled: str | None = None):
    """The body of an ``engine`` fixture: a ledger of the test's own, a copy of the session's
    migrated ledger or, with ``filled`` (a key of ``FILLS``), of the one the session filled once
    with ``FILLS[filled]``; disposed after the test."""
    fill = FILLS[filled] if filled else None
    engine = make_engine(ledgers.url(request, request.param, tmp_path, filled, fill))
    yield engine
    engine.dispose()


def import_demo_registry(engine, now: dt.datetime | None = None) -> None:
    """Import config/demo's workers.csv and cards.csv (as ``import_files``, actor "t") at ``now``
    (default: the machine's clock)."""
    with Session(engine) as s, s.begin():
        import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="t",
                     now=now or dt.datetime.now(dt.UTC))


# the office's clock of the escala tests: the evening before 2026-12-02 (18:00 in the port)
EVE = dt.datetime(2026, 12, 1, 21, 0, tzinfo=dt.UTC)

# Ledgers the session fills once and copies for each test that starts from them (issue 32: the demo
# registry's import is ~80 card issues, 1-2 s a test under load). Keyed by ``ledgers``' name: one
# name, one fill, in every module.
FILLS = {
    "demo_registry": import_demo_registry,  # imported at the session's clock (the tests' clock: now)
    "demo_registry_eve": lambda engine: import_demo_registry(engine, EVE),
    "demo_pay": lambda engine: _import_and_pay(engine),  # and tests/central/web/paydata.py's March 2026
}


def _import_and_pay(engine) -> None:
    from tests.central.web.paydata import seed_pay

    import_demo_registry(engine)
    seed_pay(engine)


class _VerifyOnce:
    """The product's argon2id hasher (its parameters), every call passed on, except that ``hash``
    hashes each password once per session (the roles' users and the worker accounts of most tests
    share a password: one real hash, with its salt, instead of one per user and test) and
    ``verify`` runs the real argon2 check once per session for each (stored hash, password) pair
    and answers the same again for that pair: True, or the same error (a wrong password, an
    unreadable hash). A hash or a login costs ~0.2 s of argon2 work on two busy cores (more under
    load); the answer for a pair cannot change. A password never seen before (an activation's
    random secret) is hashed for real."""

    hashes: dict[str, str] = {}
    answers: dict[tuple[str, str], BaseException | None] = {}

    def __init__(self, real) -> None:
        self.real = real

    def __getattr__(self, name):
        return getattr(self.real, name)

    def hash(self, password: str) -> str:
        if password not in self.hashes:
            self.hashes[password] = self.real.hash(password)
        return self.hashes[password]

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
    hashes each password and verifies each (hash, password) pair once per session (``_VerifyOnce``)."""
    monkeypatch.setattr(users_module, "_hasher", _VerifyOnce(users_module._hasher))
    with Session(engine) as s, s.begin():
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
