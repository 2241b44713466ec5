"""``no_cyclic_gc()``: pause Python's cyclic garbage collector around a burst of long-lived
objects that form no cycles (a month's statements read back, a batch PDF's pages), which the
collector would otherwise rescan again and again as they pile up. Reference counting still frees
what is dropped; the collector is re-enabled (if it was on) when the block ends, raising or not."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
