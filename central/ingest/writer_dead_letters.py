"""The ingest writer's dead letters (a mixin of ``central.ingest.writer.LedgerWriter``): how many
of a batch's rejects are stored (per sending gate at most ``[ingest] dead_letters_per_gate_min`` a
minute, then one summary row, the rest counted) and the warnings logged for them and for the gates'
recorded losses (at most 20 ``ingest.dead_letter`` warnings a minute, the next says how many were
``suppressed``).
"""

from __future__ import annotations

import structlog

from central.ingest import event_store as ledger
from portgate.errors import BadInput
from wire import topics

log = structlog.get_logger("central.ingest")


class DeadLetters:
    """The dead-letter part of ``LedgerWriter`` (its ``_stats``, ``_log_budget``, ``_dead_budget``)."""

    def _log_losses_and_dead_letters(self, losses, rejected) -> None:
        for loss in losses:
            self._stats["losses_recorded"] += 1
            log.warning(
                "ingest.gate_loss_recorded", gate_id=loss.gate_id, seq_from=loss.seq_from, seq_to=loss.seq_to,
                event_id=loss.event_id, reason="journal quarantined on the gate; not replayable",
            )
        for d in rejected:
            swallowed = self._log_budget.take()
            if swallowed is not None:
                log.warning("ingest.dead_letter", topic=d.topic[:255], reason=d.reason[:300], gate_id=d.gate_id,
                            suppressed=swallowed)

    def _limit_dead_letters(self, rejected: list) -> list:
        """The dead letters to store: per sending gate (its topic's) at most
        ``[ingest] dead_letters_per_gate_min`` a minute, then one summary row, the rest counted
        (``dead_letters_dropped``) and logged within the log budget (``DeadLetterBudget``)."""
        kept = []
        for d in rejected:
            try:
                sender = topics.parse_gate_topic(d.topic)[1]
            except BadInput:
                sender = d.topic[:255]
            verdict = self._dead_budget.keep(sender)
            if verdict == "store":
                kept.append(d)
            elif verdict == "summary":
                kept.append(ledger.DeadLetter(
                    topic=d.topic, raw=b"", gate_id=d.gate_id,
                    reason=(f"rate limited: more than {self._dead_budget.per_window} dead letters a minute from "
                            f"{sender}; the rest of this minute are counted (dead_letters_dropped), not stored")))
                log.warning("ingest.dead_letters_limited", sender=sender, per_minute=self._dead_budget.per_window)
            else:
                self._stats["dead_letters_dropped"] += 1
        return kept
