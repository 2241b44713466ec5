"""What the ingest writer does beside storing a batch's events (a mixin of
``central.ingest.writer.LedgerWriter``): in the batch's transaction, the registry's case for each
new confiscation and the gates' signed chain receipts; after the commit, the receipts published
(retained) and a ``PresenceDelta`` relayed per new admit/exit.
"""

from __future__ import annotations

import datetime as dt

import msgspec
import structlog
from sqlalchemy.orm import Session

from central.broadcast import presence
from central.ingest import receipts
from central.registry.confiscation import record_confiscation
from portgate.errors import BadInput, ConfigError
from wire import topics
from wire.events import ConfiscationPayload

log = structlog.get_logger("central.ingest")


class CommitSends:
    """The confiscations, receipts and presence relay of ``LedgerWriter`` (its ``keys``, ``port``,
    ``client``, ``broadcast``, ``_stats``, ``_office_key``, ``_receipts_out``)."""

    def _issue_receipts(self, conn, seen, now) -> None:
        """Signed receipts of the gates whose chain advanced (central.ingest.receipts), kept to
        be published once the batch is committed. Without a usable office key: logged, none."""
        if self._office_key is None:
            try:
                self._office_key = receipts.office_key(self.keys.keys_dir)
            except (ConfigError, OSError) as exc:
                self._office_key = False
                log.error("ingest.office_key_unusable", error=str(exc), action="no chain receipts")
        if self._office_key:
            self._receipts_out = receipts.issue(conn, self._office_key, self.port, seen, now)

    def _publish_receipts(self) -> None:
        for r in self._receipts_out:
            body = msgspec.json.encode({"body": r["body"].decode("utf-8"), "sig": r["sig"]})
            self.client.publish(topics.gate_receipt(self.port, r["gate_id"]), body, qos=1, retain=True)
            self._stats["receipts_issued"] += 1
        self._receipts_out = []

    def _relay(self, inserted, now) -> None:
        for row_id, event in inserted:
            delta = presence.delta_for(row_id, event, now)
            if delta is not None:
                self.broadcast.send("presence", "delta", delta)
                self._stats["presence_relayed"] += 1

    def _record_confiscations(self, conn, inserted, now: dt.datetime) -> int:
        """Open the case (and block the card in the registry, when it holds the card) for each new
        confiscation (``record_confiscation``, idempotent by event id), in the ledger's transaction.
        A confiscation the registry refuses (``BadInput``, e.g. an unknown registration) is logged
        and stays in the ledger (its card is still blocked through the ledger part of the blocklist)."""
        done = 0
        found = [event for _row, event in inserted if isinstance(event.payload, ConfiscationPayload)]
        if not found:
            return done
        with Session(bind=conn, join_transaction_mode="create_savepoint") as session:
            for event in found:
                try:
                    with session.begin_nested():
                        record_confiscation(session, event)
                    done += 1
                except BadInput as exc:
                    log.error("ingest.confiscation_not_recorded", event_id=event.event_id, error=str(exc))
            session.commit()  # releases the session's savepoint; the ledger transaction commits it
        return done
