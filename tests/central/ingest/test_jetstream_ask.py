"""``central.ingest.jetstream_ask.asked_again``: a JetStream info request that NATS 2.9 leaves
unanswered (a stream without a leader yet) is asked again, not waited out for the whole
``request_timeout_s``. The unanswered request is a fault a running cluster does not produce on
demand (it needs a stream caught between creation and its leader's election): played here by a
call that times out; the cluster tests (tests/ops/test_nats_requests.py, two offices starting
together on one port) run the real path."""

from __future__ import annotations

import asyncio

import nats.errors
import pytest
from nats.js.errors import NotFoundError, ServiceUnavailableError

from central.ingest.jetstream_ask import asked_again


def calls(*outcomes):
    """An async call that, on each await, raises or returns the next of ``outcomes``; its
    ``count`` says how many times it was called."""
    it = iter(outcomes)

    async def call():
        call.count += 1
        out = next(it)
        if isinstance(out, BaseException):
            raise out
        return out

    call.count = 0
    return call


def test_an_unanswered_ask_is_asked_again_until_answered():
    call = calls(nats.errors.TimeoutError(), asyncio.TimeoutError(), "info")
    assert asyncio.run(asked_again(call, total_s=600.0, what="stream X")) == "info"
    assert call.count == 3


def test_no_answer_within_the_total_raises_the_timeout():
    call = calls(*[nats.errors.TimeoutError()] * 3)
    with pytest.raises(nats.errors.TimeoutError):
        asyncio.run(asked_again(call, total_s=0.0, what="stream X"))
    assert call.count == 1  # the total had passed at the first unanswered try


def test_other_errors_pass_through_at_once():
    call = calls(NotFoundError(), "never")
    with pytest.raises(NotFoundError):
        asyncio.run(asked_again(call, total_s=600.0, what="stream X"))
    assert call.count == 1


def test_no_responders_is_asked_again_after_a_pause(monkeypatch):
    """JetStream's API not serving yet (CI: a stream look-up just after the cluster's configuration
    was reloaded): answered "no responders" at once, asked again after ``PAUSE_S``."""
    import central.ingest.jetstream_ask as ask

    pauses = []

    async def pause(s):
        pauses.append(s)

    monkeypatch.setattr(ask.asyncio, "sleep", pause)
    call = calls(ServiceUnavailableError(), ServiceUnavailableError(), "info")
    assert asyncio.run(asked_again(call, total_s=600.0, what="stream X")) == "info"
    assert call.count == 3 and pauses == [ask.PAUSE_S, ask.PAUSE_S]
    call = calls(ServiceUnavailableError(), "never")
    with pytest.raises(ServiceUnavailableError):
        asyncio.run(asked_again(call, total_s=0.0, what="stream X"))
