"""Work the web server does on its own while it runs: the office coverage check (G11) and the
reader alarm check every second (``central.calls.coverage.evaluate``,
``central.ledger.reader_alarms.evaluate``), so an alarm is raised and ended live."""

from __future__ import annotations

import asyncio

import structlog
from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool

from central.calls.coverage import evaluate
from central.ledger import reader_alarms

log = structlog.get_logger("central.web")

EVERY_S = 1.0


def start_coverage(state) -> asyncio.Task:
    async def loop():
        while True:
            try:
                await run_in_threadpool(
                    state.with_session,
                    lambda s: evaluate(s, state.now(), state.tz, state.settings.coverage_grace_min)
                    + reader_alarms.evaluate(s, state.now()))
            except SQLAlchemyError as exc:  # the database is down: the next round tries again
                log.error("web.coverage_failed", error=str(exc).splitlines()[0])
            await asyncio.sleep(EVERY_S)

    return asyncio.get_running_loop().create_task(loop(), name="coverage")
