"""The month close's output digests pack an aware time as its instant (msgpack's timestamp), so
the rows PostgreSQL hands back in the session's zone digest as the same rows bound in UTC, with no
per-value conversion (``central.ledger.reclose._output_digest``, ``central.pay.close._pay_outputs``);
a different instant gives a different digest."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from central.ledger.reclose import _output_digest
from central.pay.close import _pay_outputs

UTC_START = dt.datetime(2026, 3, 10, 10, 0, tzinfo=dt.UTC)
SP = ZoneInfo("America/Sao_Paulo")


def _shift_row(start: dt.datetime) -> tuple:
    return ("100/9300001/2026-03-10/07-13", "100", "9300001", dt.date(2026, 3, 10), "07-13", "vigia",
            "berthed", None, None, "g1", start, start + dt.timedelta(hours=6), None, None, "exit",
            "e1", "e2", False, False)


def _statement_row(end: dt.datetime) -> tuple:
    return ("100", "100/9300001/2026-03-10/07-13@r1", "100/9300001/2026-03-10/07-13", "r1", 1, "d",
            18000, "", None, end, end + dt.timedelta(hours=48))


def test_a_shift_digest_is_the_same_in_any_zone_and_differs_for_another_instant():
    flags = [("100/9300001/2026-03-10/07-13", "LATE", "x")]
    bound = _output_digest([_shift_row(UTC_START)], flags)
    for zone in (SP, dt.timezone(dt.timedelta(hours=-3)), dt.timezone(dt.timedelta(hours=5, minutes=30))):
        assert _output_digest([_shift_row(UTC_START.astimezone(zone))], flags) == bound
    assert _output_digest([_shift_row(UTC_START + dt.timedelta(seconds=1))], flags) != bound


def test_a_statement_digest_is_the_same_in_any_zone_and_differs_for_another_instant():
    bound = _pay_outputs([_statement_row(UTC_START)])
    assert _pay_outputs([_statement_row(UTC_START.astimezone(SP))]) == bound
    assert _pay_outputs([_statement_row(UTC_START + dt.timedelta(microseconds=1))]) != bound
