"""Garbage-collector settings for the long-running services (office ingest and its writers), and
``paused()`` for the batch runs of pay.

paho-mqtt leaves about ten objects in reference cycles per received message (each message's
info object holds a condition variable and its lock), which only CPython's cyclic collector frees.
With the default thresholds (700, 10, 10) the collector runs every few dozen messages and, in a
process that has imported SQLAlchemy and the whole office, walks tens of thousands of long-lived
objects each time a older generation is due: measured on the ingest benchmark, 4,300 -> 5,100
events/s for the same stream once tuned.

``tune_for_service()`` freezes what exists after start-up (``gc.freeze``: modules, tables, config
never become garbage, so the collector stops walking them) and raises the youngest generation's
threshold so collections come every ``gen0`` allocations instead of 700. Memory cost: at most a
few megabytes of garbage waiting between collections. ``inherited=True`` in a process forked from a
server that imported the modules (the ingest writer, central/ingest/link.py): frozen without a
full collection first, which would touch every object inherited from the server and copy each
page of its heap (copy-on-write): 40-120 ms of the writer's start measured; the few objects the
server left as garbage stay frozen with the rest.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

GEN0 = 20_000
GEN1 = 20
GEN2 = 20


def tune_for_service(gen0: int = GEN0, gen1: int = GEN1, gen2: int = GEN2, *, inherited: bool = False) -> None:
    """Collect once, freeze the survivors and set the thresholds; call after start-up imports.
    ``inherited``: freeze without collecting first (nothing is walked)."""
    if not inherited:
        gc.collect()
    gc.freeze()
    gc.set_threshold(gen0, gen1, gen2)


def freeze_start_up() -> int:
    """Collect once and freeze the survivors, the thresholds left as they are (the gate: its
    garbage is small and its RSS budget tight); returns how many objects are frozen. Call when
    start-up is done (imports, store caches, journal opened).

    Why the gate needs it (issue 32, docs/performance.md "The gate's quota p99, 2026-12-07"): a
    full collection walks every object the imports and the store's caches made (~35,000 on the
    bench's state) and took 17-25 ms of CPU in the middle of a read, most of a 25 ms per 100 ms
    CPU quota: that read waited out the rest of the period (63-96 ms). Frozen objects are not
    walked: the same collection then walks only what the loop made since."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


@contextlib.contextmanager
def paused(*, long_lived: bool = False) -> Iterator[None]:
    """Pause the cyclic collector for a burst of long-lived objects that form no cycles (a month's
    pay statements: ~10^5 of them), which it would otherwise rescan again and again as they pile
    up; the previous state is restored on the way out, also on an exception.

    ``long_lived=True``: what the burst built is kept (results, not scratch), so on a normal exit
    every tracked object goes straight to the oldest generation (``gc.freeze`` then
    ``gc.unfreeze``) instead of being scanned by the young collections that the burst's allocation
    count would start at once; skipped while anything is frozen (``tune_for_service``), which
    ``gc.unfreeze`` would release."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    except BaseException:
        if enabled:
            gc.enable()
        raise
    if long_lived and gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
    if enabled:
        gc.enable()
