"""The verification page's rate limit shared by every web process of the office (issue 37: the
cluster runs several; ``central.web.shared_limit``, table ``rate_hits`` of migration 0032), on a
real SQLite file and a real PostgreSQL database: two application instances on one ledger (each its
own engine, as two processes) count the same look-ups; the window slides and its old rows are
deleted; concurrent callers never pass the limit; the migration goes up, down and up again."""

from __future__ import annotations

import datetime as dt
import threading

from alembic import command
from sqlalchemy import func, inspect, select
from starlette.testclient import TestClient

from central.config import WebSettings
from central.db import make_engine
from central.ledger.migrate import alembic_config, upgrade
from central.pay.slip_codes import new_token
from central.web.app import create_app
from central.web.schema import rate_hits
from central.web.shared_limit import SharedRateLimiter
from tests.central.web.conftest import SECRET

T0 = dt.datetime(2026, 12, 6, 12, 0, tzinfo=dt.UTC)


def _rows(engine, key: str | None = None) -> int:
    q = select(func.count()).select_from(rate_hits)
    with engine.connect() as c:
        return c.execute(q if key is None else q.where(rate_hits.c.key == key)).scalar_one()


def test_two_app_instances_on_one_ledger_count_the_same_lookups(migrated_url):
    engines = [make_engine(migrated_url), make_engine(migrated_url)]
    try:
        apps = [create_app(e, WebSettings(verify_per_minute=3), SECRET, background=False) for e in engines]
        with TestClient(apps[0], base_url="http://testserver") as a, TestClient(apps[1], base_url="http://testserver") as b:
            codes = [c.get(f"/v/{new_token()}").status_code for c in (a, b, a, b, a)]
            limited = b.get(f"/v/{new_token()}")
        assert codes == [404, 404, 404, 429, 429]  # 3 a minute for the client, whichever process answers
        assert limited.status_code == 429 and 0 < int(limited.headers["retry-after"]) <= 60
        assert 'data-state="limited"' in limited.text
        assert _rows(engines[0]) == 3  # the refused look-ups are not counted
    finally:
        for e in engines:
            e.dispose()


def test_the_window_slides_and_rows_older_than_it_are_deleted(migrated_url):
    engine = make_engine(migrated_url)
    try:
        rl = SharedRateLimiter(engine, "verify", 3)
        at = [T0 + dt.timedelta(seconds=s) for s in range(4)]
        assert [rl.hit("a", t) for t in at] == [0, 0, 0, 57]  # the 4th waits for the 1st to leave
        assert rl.hit("b", at[3]) == 0  # another client
        assert rl.hit("a", T0 + dt.timedelta(seconds=59.9)) == 1
        assert rl.hit("a", T0 + dt.timedelta(seconds=60)) == 0  # the first left the window
        assert SharedRateLimiter(engine, "other", 1).hit("a", at[3]) == 0  # another limit, its own count
        assert _rows(engine, "a") == 4 and _rows(engine, "b") == 1
        assert rl.hit("c", T0 + dt.timedelta(minutes=5)) == 0  # any look-up deletes the limit's old rows
        assert _rows(engine) == 2  # c's, and the other limit's (its own window)
    finally:
        engine.dispose()


def test_concurrent_processes_never_pass_the_limit(migrated_url):
    """Four callers (each its own engine: its own connections, as a process) ask 10 times each for
    one client at the same instant; exactly ``limit`` are allowed."""
    allowed: list[int] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def caller() -> None:
        engine = make_engine(migrated_url)
        try:
            rl = SharedRateLimiter(engine, "verify", 7)
            mine = sum(1 for _ in range(10) if rl.hit("10.0.0.9", T0) == 0)
            with lock:
                allowed.append(mine)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            engine.dispose()

    threads = [threading.Thread(target=caller) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sum(allowed) == 7, allowed


def test_the_migration_goes_up_down_and_up(db_url):
    upgrade(db_url, "0032")
    engine = make_engine(db_url)
    try:
        assert SharedRateLimiter(engine, "verify", 1).hit("a", T0) == 0
        names = {ix["name"] for ix in inspect(engine).get_indexes("rate_hits")}
        assert {"ix_rate_hits_name_key_at", "ix_rate_hits_at"} <= names
        command.downgrade(alembic_config(db_url), "0031")
        assert "rate_hits" not in inspect(engine).get_table_names()
        assert upgrade(db_url, "0032") == "0032"
        assert SharedRateLimiter(engine, "verify", 1).hit("a", T0) == 0 and _rows(engine) == 1
    finally:
        engine.dispose()
