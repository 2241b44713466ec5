"""Rest between two shifts (RULES.md G7 at the gate, R2 in the rotation; Lei 9.719/1998 art. 8:
at least 11 hours between two shifts of a worker). Pure: no clock is read here.

``rest_between(previous_end, next_start)`` is the rest the worker had: never negative (a shift
that ended after the next one started, an early exit and a return in the same period, is a rest of
0h00). Times are aware datetimes.
"""

from __future__ import annotations

import datetime as dt

#: The legal minimum rest, in hours (Lei 9.719 art. 8): the default of the gate's G7 and of the rotation.
MIN_REST_HOURS = 11


def rest_between(previous_end: dt.datetime, next_start: dt.datetime) -> dt.timedelta:
    """The rest from ``previous_end`` to ``next_start``, at least zero."""
    return max(next_start - previous_end, dt.timedelta(0))

