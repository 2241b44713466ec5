"""What the gate loop (``edge.loop``) journals of the gate itself on its tick: the clock becoming
implausible and trusted again (G13, ``_watch_clock``) and the live coverage gaps (G11,
``_check_coverage``), each a priority-1 event (``_alert``).
A mixin of ``edge.loop.GateLoop``: it works on the loop's clock, store, journal and batch.
"""

from __future__ import annotations

import structlog

from edge.journal import PRIORITY_HIGH
from edge.loop_records import _coverage_payload
from edge.rules.coverage import coverage_gaps, covering_watchman
from edge.rules.model import Now
from portgate.errors import StoreError
from wire.events import AlertPayload

log = structlog.get_logger("edge.loop")


class GateWatch:
    """The clock and coverage alerts of ``edge.loop.GateLoop`` (see there for the attributes it shares)."""

    def _alert(self, payload, now: Now) -> None:
        """Journal a priority-1 event of the gate itself (clock, coverage) and apply it; inside a
        batch it joins the batch (committed with the reads, in order)."""
        if self._batch is not None:
            self._stage([payload], now, PRIORITY_HIGH)
            return
        try:
            ev = self.journal.append(payload, now=now, priority=PRIORITY_HIGH)
        except StoreError:
            log.exception("journal_append_failed", kind=type(payload).__name__)
            return
        self._apply(ev)
        if self.on_event is not None:
            self.on_event(ev)

    def _watch_clock(self, now: Now) -> None:
        """G13: journal the clock becoming implausible (with the reading and the estimate) and
        trusted again (the anchor the office places this boot's untrusted events by). While the
        clock is an estimate, the office's stamp on the local copies bounds it from below."""
        if now.estimated and hasattr(self.clock, "hint"):
            stamp = self.store.data_updated_at()
            if stamp is not None:
                self.clock.hint(stamp)
        if now.estimated and self._clock_trusted is not False:
            raw = getattr(self.clock, "last_raw", None)
            detail = (f"wall clock read {raw.isoformat() if raw else '?'} is implausible; "
                      f"deciding on the estimate {now.wall.isoformat()} and the newest rulebook; "
                      f"boot={self.journal.boot_id} mono_ns={now.mono_ns}")
            self._clock_trusted = False
            log.warning("clock_untrusted", detail=detail)
            self._alert(AlertPayload(code="CLOCK_UNTRUSTED", detail=detail), now)
        elif now.clock_trusted and self._clock_trusted is False:
            self._clock_trusted = True
            detail = f"wall clock trusted again; boot={self.journal.boot_id} mono_ns={now.mono_ns}"
            log.info("clock_trusted", detail=detail)
            self._alert(AlertPayload(code="CLOCK_TRUSTED", detail=detail), now)
        elif self._clock_trusted is None and now.clock_trusted:
            self._clock_trusted = True

    def _check_coverage(self, now: Now, *, force: bool = False) -> None:
        """G11 (83.611 arts. 5-8) live: raise and end coverage gaps from the local copy."""
        if not force and self._coverage_at is not None and \
                0 <= now.mono_ns - self._coverage_at < self._coverage_every_ns:
            return
        self._coverage_at = now.mono_ns
        if not now.clock_trusted:
            return
        try:
            aboard = self.store.open_shifts_here()
            gaps = coverage_gaps(self.store.gate_dispatches(now.wall), aboard, now.wall,
                                 self._rulebook_at(now))
        except Exception:  # a bug must not stop the gate deciding; the next tick tries again
            log.exception("coverage_check_failed")
            return
        current = {g.key: g for g in gaps}
        for key, gap in current.items():
            if key not in self._gaps:
                self._gaps[key] = gap
                log.warning("coverage_gap", ship=gap.ship, date=gap.date.isoformat(), period=gap.period)
                self._alert(_coverage_payload(gap, "raised"), now)
        for key, gap in list(self._gaps.items()):
            if key in current:
                continue
            del self._gaps[key]
            watchman = covering_watchman(gap, aboard, self._rulebook_at(now))  # G11: a watchman
            ended_by = "period_end" if now.wall >= gap.end else "watchman_admitted"
            log.info("coverage_gap_ended", ship=gap.ship, period=gap.period, ended_by=ended_by)
            self._alert(_coverage_payload(gap, "ended", ended_by=ended_by,
                                          watchman=watchman if ended_by == "watchman_admitted" else None), now)
