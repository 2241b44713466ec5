"""The login throttle measures its waits on a clock that moves (the machine's wall clock), not on
the office's business clock: with that clock frozen (``portgate demo --keep-serving`` after the
demo day, the tests' ``Clock``) a login slowed by wrong passwords is accepted again once its wait
is over (``central.web.users.check_login``, ``WebState.throttle_now``)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.testclient import TestClient

from central.web.schema import login_failures
from central.web.users import FREE_PAIR
from portgate.timeutil import as_utc
from testkit.wait import wait_until
from tests.central.web.conftest import PASSWORD, Clock, login


def _slow_down(c: TestClient) -> None:
    for _ in range(FREE_PAIR - 1):
        assert login(c, "inspector", "wrong password!").status_code == 401
    r = login(c, "inspector", "wrong password!")
    assert r.status_code == 429 and r.headers["retry-after"] == "1"


def test_a_frozen_business_clock_does_not_hold_the_wait_forever(app, clock):
    frozen = clock.at  # the business clock: nobody moves it in this test
    c = TestClient(app, follow_redirects=False)
    _slow_down(c)
    wait_until(lambda: login(c, "inspector", PASSWORD).status_code == 303, timeout=120, interval=0.2,
               what="the right password accepted after the 1 s wait on the wall clock")
    assert clock.at == frozen


def test_the_wait_counts_on_the_throttle_clock_and_the_failures_are_stamped_with_it(app, clock):
    throttle = Clock()
    throttle.at = clock.at + dt.timedelta(days=3)  # the business clock stands days behind
    app.state.web.throttle_now = throttle
    c = TestClient(app, follow_redirects=False)
    _slow_down(c)
    assert login(c, "inspector", PASSWORD).status_code == 429  # still waiting on the throttle's clock
    with Session(app.state.web.engine) as s:
        stamps = [r.at for r in s.execute(select(login_failures.c.at))]
    assert len(stamps) == FREE_PAIR and all(abs(as_utc(a) - throttle.at) < dt.timedelta(seconds=1)
                                            for a in stamps)
    throttle.at += dt.timedelta(seconds=1)
    assert login(c, "inspector", PASSWORD).status_code == 303


def test_a_wall_clock_put_back_does_not_lengthen_the_wait(app, clock):
    """The wall clock stepped back an hour (an administrator, NTP) after the failures: the wait is
    still the 1 s the failures call for, counted from the correction, not 1 h 1 s."""
    throttle = Clock()
    app.state.web.throttle_now = throttle
    c = TestClient(app, follow_redirects=False)
    _slow_down(c)
    throttle.at -= dt.timedelta(hours=1)
    r = login(c, "inspector", PASSWORD)
    assert r.status_code == 429 and r.headers["retry-after"] == "1"  # not 3601
    throttle.at += dt.timedelta(seconds=1)
    assert login(c, "inspector", PASSWORD).status_code == 303
    with Session(app.state.web.engine) as s:  # a success clears the login's failures, restamped or not
        assert s.execute(select(login_failures.c.at)).first() is None


def test_a_wall_clock_put_back_does_not_lengthen_the_wait_of_the_next_failure(app, clock):
    throttle = Clock()
    app.state.web.throttle_now = throttle
    c = TestClient(app, follow_redirects=False)
    _slow_down(c)
    throttle.at -= dt.timedelta(days=1)
    assert login(c, "inspector", PASSWORD).status_code == 429  # the clock's correction is seen here
    throttle.at += dt.timedelta(seconds=1)
    r = login(c, "inspector", "wrong password!")  # counted: the wait doubles, from now
    assert r.status_code == 429 and r.headers["retry-after"] == "2"
    throttle.at += dt.timedelta(seconds=2)
    assert login(c, "inspector", PASSWORD).status_code == 303


def test_the_worker_activation_s_wait_does_not_grow_with_a_clock_put_back(tmp_path, sqlite_ledger):
    """``workeraccounts.activate``'s rate limit (the same failures and waits as the login's): wrong
    codes, then the wall clock put back an hour: the right code is taken once the 1 s is over."""
    from central.db import make_engine
    from central.registry.store import import_files
    from central.web.workeraccounts import activate, add_account
    from portgate.errors import BadInput
    from tests.central.web.test_worker_web import DEMO

    engine = make_engine(sqlite_ledger(tmp_path / "ledger.db"))
    now = dt.datetime.now(dt.UTC)
    with Session(engine) as s, s.begin():
        import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="t", now=now)
        code = add_account(s, "V017", actor="t", now=now).code

    def attempt(the_code: str, at: dt.datetime) -> str:
        with Session(engine) as s, s.begin():  # committed also on refusal, as the route does
            try:
                return activate(s, "V017", the_code, "uma senha boa", address="a", now=now, throttle_at=at)
            except BadInput as exc:
                return exc.where

    try:
        assert [attempt("AAAA-BBBB-CCCC-DDDD-EEEE", now) for _ in range(FREE_PAIR)] == ["code"] * FREE_PAIR
        back = now - dt.timedelta(hours=1)
        assert attempt(code, back) == "locked"
        assert attempt(code, back + dt.timedelta(seconds=1)) == "v017"
    finally:
        engine.dispose()
