"""Asking JetStream's API again when an answer does not come (issue 37).

A JetStream info request (``STREAM.INFO``, ``CONSUMER.INFO``) about a stream whose replicated group
has no leader yet — it was created a moment ago by another office process, or its leader is being
elected after a node was lost — gets no reply at all on NATS 2.9: the request is dropped, and the
client would wait out its whole timeout (``[nats] request_timeout_s``, 30 s by default) although a
second ask a few seconds later is answered. Seen in CI: two office processes starting together on
one port, the second's first ``stream_info`` unanswered for 30 s. ``asked_again`` asks every
``ask_s`` seconds until ``total_s`` have passed. A request answered with "no responders" (nats-py's
``ServiceUnavailableError``: JetStream's API not serving yet, seen in CI just after a cluster's
configuration was reloaded) is asked again after ``PAUSE_S``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import nats.errors
import structlog
from nats.js.errors import ServiceUnavailableError

log = structlog.get_logger("central.ingest")
ASK_S = 5.0  # one ask's wait for a reply; a stream with a leader answers in milliseconds
PAUSE_S = 1.0  # before asking again after "no responders" (answered at once: no wait of its own)
T = TypeVar("T")


async def asked_again(call: Callable[[], Awaitable[T]], total_s: float, what: str) -> T:
    """``await call()`` (a JetStream API request made with a timeout of about ``ASK_S`` seconds),
    asked again after each unanswered try until ``total_s`` seconds (monotonic) have passed since
    the first; a try answered "no responders" (``ServiceUnavailableError``) is asked again after
    ``PAUSE_S``. Returns the first answer; other errors (``NotFoundError``, a lost connection) pass
    through at once. Raises the last ``nats.errors.TimeoutError`` (or ``ServiceUnavailableError``)
    when no try was answered in ``total_s``: the caller (the ingest loop) logs it and starts again
    after a pause."""
    deadline = time.monotonic() + total_s
    tries = 0
    while True:
        tries += 1
        try:
            return await call()
        except (nats.errors.TimeoutError, asyncio.TimeoutError):
            if time.monotonic() >= deadline:
                raise
            log.info("jetstream.asked_again", what=what, tries=tries)
        except ServiceUnavailableError:
            if time.monotonic() >= deadline:
                raise
            log.info("jetstream.asked_again", what=what, tries=tries, cause="no responders")
            await asyncio.sleep(PAUSE_S)
