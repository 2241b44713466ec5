"""The rotation suite shares the registry suite's fixtures: a SQLite office database per test."""

from tests.central.registry.conftest import db_url, engine, session  # noqa: F401
