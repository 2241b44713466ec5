"""Bulk builders run without the cyclic garbage collector's passes (``paused``).

CPython's collector walks the container objects made since its last pass every 700 new ones, and
every object of the process now and then: a builder that makes tens of thousands of tuples and
lists that are kept (a year of a crew's work periods, its book's lines) pays for passes that find
nothing to free, since such records hold no reference cycles. Reference counting frees everything
as usual while the collector is off; a cycle made meanwhile is collected at its next pass.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def paused(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` run with the cyclic garbage collector off, then on again if it was on when the call
    began, whether ``fn`` returns or raises. A call inside another (or one in another thread while
    it is off) finds it off and leaves it off; the outer call turns it back on. For builders of
    many acyclic records only (the crew hours book: a fifth of its time went to the collector,
    docs/performance.md, "Crew book and office lists margin")."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        was_on = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was_on:
                gc.enable()

    return run
