"""What the gate tells the office about itself: the retained ``GateStatus`` and the outbox's depth.

A mixin of ``edge.sync.service.Sync`` (see there for the attributes it shares and for when a
status goes out: the Last Will, the birth on each connect, progress while connected, the graceful
offline on stop). Here is what a status says: the state and reason, the boot id, ``sent_seq``,
the outbox depth and its oldest unsent event, whether the clock is trusted (G8/G13), when the
office's copies were last updated (G8) and the readers' states; signed with the gate's key like
its events. Also the outbox's watch (``CheckDepth``): the ``portgate_outbox_depth`` gauge, one
``OUTBOX_HIGH_WATER`` alert event when the depth reaches ``high_water`` (re-armed below half) and
the full disk's refused reads reported once space returns.
"""

from __future__ import annotations

import datetime as dt

import structlog

from edge.metrics import OUTBOX_DEPTH
from portgate.errors import StoreError
from wire import downlink as dl
from wire.events import AlertPayload

log = structlog.get_logger("edge.sync")


def _utc(seconds: float | None) -> dt.datetime | None:
    return None if seconds is None else dt.datetime.fromtimestamp(seconds, dt.UTC)


def _reader_health(v) -> dl.ReaderHealth:
    """A ``edge.reader_health.ReaderView`` as the status message carries it."""
    return dl.ReaderHealth(reader_id=v.reader_id, kind=v.kind, state=v.state, since=_utc(v.since),
                           last_read_at=_utc(v.last_read), detail=v.detail)


class SyncStatus:
    """The status and the outbox watch of ``edge.sync.service.Sync``."""

    def _check_depth(self) -> None:
        """OUTBOX_HIGH_WATER once the depth reaches ``high_water`` (re-armed below half); the
        refused reads of a full disk reported once space returns (``Journal.report_refusals``)."""
        report = getattr(self.journal, "report_refusals", None)
        if report is not None and report(now=self.now()):
            self.core.reread()  # the priority alert goes before the rows read ahead
        depth = self.journal.outbox_depth()
        OUTBOX_DEPTH.labels(self.gate_id).set(depth)
        if depth >= self.settings.high_water and not self._alerted:
            try:
                self.journal.append(
                    AlertPayload(code="OUTBOX_HIGH_WATER", detail=f"{depth} events unsent"),
                    now=self.now(),
                    priority=1,
                )
            except StoreError as exc:  # a full disk: raised again at the next check
                log.warning("outbox.high_water_not_journaled", gate_id=self.gate_id, error=str(exc))
                return
            self._alerted = True
            self.core.reread()
            log.warning("outbox.high_water", gate_id=self.gate_id, depth=depth)
        elif depth < self.settings.high_water // 2:
            self._alerted = False

    def _status(self, state: str, reason: str) -> bytes:
        """The retained status with what the office's live view shows: outbox depth and oldest
        unsent event, clock trusted (G8/G13), when the local copies were last updated (G8); signed
        with the gate's key (the journal's, ``wire.downlink.sign_status``). ``at`` is the gate's
        clock, the one its events carry (``now().wall``: the system clock, or its G8 estimate
        while untrusted; the demo's scripted day, so the office's "since" agrees with the page's
        clock there)."""
        wall = getattr(self.now(), "wall", None)
        status = dl.GateStatus(
            port=self.port, gate_id=self.gate_id, boot_id=self.boot_id, state=state,
            reason=reason, at=wall if wall is not None else dt.datetime.now(dt.UTC), sent_seq=self.core.sent_seq,
            **self._health(),
        )
        key = getattr(self.journal, "key", None)  # signed like events: the office refuses it unsigned
        return dl.encode(dl.sign_status(status, key) if key else status)

    def _health_mark(self) -> tuple:
        """What changes a status besides ``sent_seq``: clock trust, the copies' update time, the
        readers' states."""
        store = getattr(self.downlink, "store", None)
        updated = getattr(store, "data_updated_at", None)
        readers = self.readers.mark() if self.readers is not None else None
        return (getattr(self.now(), "clock_trusted", None), updated() if updated is not None else None, readers)

    def _health(self) -> dict:
        out: dict = {}
        depth = getattr(self.journal, "outbox_depth", None)
        if depth is not None:
            out["outbox_depth"] = depth()
        oldest = getattr(self.journal, "oldest_unsent_at", None)
        if oldest is not None:
            value = oldest()
            out["oldest_unsent_at"] = value if value is not None and value.tzinfo else None  # naive: not said
        trusted = getattr(self.now(), "clock_trusted", None)
        if isinstance(trusted, bool):
            out["clock_trusted"] = trusted
        store = getattr(self.downlink, "store", None)
        updated = getattr(store, "data_updated_at", None)
        if updated is not None:
            value = updated()
            out["copies_updated_at"] = value if value is not None and value.tzinfo else None  # naive: not said
        if self.readers is not None:
            out["readers"] = [_reader_health(v) for v in self.readers.snapshot()]
        return out
