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
