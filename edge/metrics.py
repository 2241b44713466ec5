"""The gate's Prometheus metrics (``portgate edge run``; default registry, served by
``portgate.metrics.serve``). Counters and the histogram are updated where things happen; the gauges
are callbacks attached by ``watch_gate`` and computed at scrape time.

- ``portgate_decisions_total{outcome,rule}``: decisions shown; ``rule`` is the first rule that
  failed (the one whose message the watchman sees) or ``none`` for an ADMIT/EXIT without objection.
  Created at 0 for ``none`` with every outcome and for DENY with every rule of ``RULE_IDS``.
- ``portgate_tap_latency_seconds``: histogram, read (monotonic time the reader saw the card) ->
  decision shown on the indicator; includes the pairing window when a control card waits for a badge.
- ``portgate_outbox_depth{gate_id}``, ``portgate_outbox_oldest_age_seconds{gate_id}``: unsent
  events and how long the oldest has waited (0 when the outbox is empty).
- ``portgate_clock_synchronised{gate_id}``: 1 when the kernel says NTP has synchronised the clock
  (events carry the same flag as ``clock_trusted``, rule G8).
- ``portgate_uplink_connected{gate_id}``: 1 while the MQTT session is up; absent on a standalone gate.
- ``portgate_uplink_published_total``, ``_acked_total``, ``_rejected_total``, ``_unrouted_total``
  ``{gate_id}`` (``edge.sync``): created at 0 by ``watch_gate`` when the gate has a sync.
- ``portgate_reader_up{reader_id}``, ``portgate_reader_faults_total{reader_id,kind}``: from
  ``drivers.metrics`` (every fault kind at 0 from the reader's start).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable

from prometheus_client import Counter, Gauge, Histogram

import drivers.metrics  # noqa: F401  (reader_up / reader_faults_total families, always exposed)
from portgate.metrics import flag
from portgate.timeutil import as_utc

# the rule ids a DENY can name first (RULES.md G1-G10; INTERNAL: the gate itself failed)
RULE_IDS = ("G1", "G2", "G3", "G4", "G5", "G6", "G7", "G8", "G9", "G10", "INTERNAL")
OUTCOMES = ("admit", "exit", "deny", "inspector")

DECISIONS = Counter("portgate_decisions_total", "Gate decisions shown, by outcome and first failed rule",
                    ["outcome", "rule"])
TAP_LATENCY = Histogram(
    "portgate_tap_latency_seconds", "Card read to decision shown on the indicator (seconds)",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 2.0, 5.0),
)
OUTBOX_DEPTH = Gauge("portgate_outbox_depth", "Unsent events in the gate outbox", ["gate_id"])
OUTBOX_OLDEST_AGE = Gauge("portgate_outbox_oldest_age_seconds",
                          "Age of the oldest unsent event in the gate outbox (0 if empty)", ["gate_id"])
CLOCK_SYNCHRONISED = Gauge("portgate_clock_synchronised",
                           "1 when the gate's wall clock is NTP-synchronised (events carry clock_trusted)",
                           ["gate_id"])
UPLINK_CONNECTED = Gauge("portgate_uplink_connected", "1 while the gate's MQTT session is connected",
                         ["gate_id"])


_DECISION_COUNTERS: dict[tuple[str, str], object] = {}  # (outcome, rule) -> DECISIONS child


def start_at_zero() -> None:
    """Create the decision counters for the known label values at 0 (see module doc)."""
    for outcome in OUTCOMES:
        DECISIONS.labels(outcome=outcome, rule="none")
    for rule in RULE_IDS:
        DECISIONS.labels(outcome="deny", rule=rule)


def observe_decision(outcome: str, rules_failed: Iterable[str], latency_s: float | None) -> None:
    """Count one decision shown and, when the read time is known, its read -> indicator latency."""
    rules = list(rules_failed)
    key = (outcome, rules[0] if rules else "none")
    child = _DECISION_COUNTERS.get(key)
    if child is None:  # the labelled child is the registry's own: kept, not looked up per tap
        child = _DECISION_COUNTERS[key] = DECISIONS.labels(outcome=key[0], rule=key[1])
    child.inc()
    if latency_s is not None and latency_s >= 0:
        TAP_LATENCY.observe(latency_s)


def _age_s(oldest: Callable[[], dt.datetime | None]) -> float:
    at = as_utc(oldest())
    if at is None:
        return 0.0
    return max(0.0, (dt.datetime.now(dt.UTC) - at).total_seconds())


def watch_gate(gate_id: str, journal, clock, sync=None) -> None:
    """Attach the gate's callback gauges: outbox depth and oldest age (``journal``), clock
    synchronised (``clock.now().clock_trusted``), MQTT connected (``sync.connected``, if any); and
    the labelled counters at 0 (``start_at_zero``, the uplink's when ``sync`` is given)."""
    start_at_zero()
    OUTBOX_DEPTH.labels(gate_id).set_function(lambda: float(journal.outbox_depth()))
    OUTBOX_OLDEST_AGE.labels(gate_id).set_function(lambda: _age_s(journal.oldest_unsent_at))
    inner = getattr(clock, "inner", clock)  # GuardedClock wraps the SystemClock (NTP probe)
    synced = inner.trusted if hasattr(inner, "trusted") else (lambda: clock.now().clock_trusted)
    CLOCK_SYNCHRONISED.labels(gate_id).set_function(flag(synced))
    if sync is not None:
        from edge.sync.service import ACKED, PUBLISHED, REJECTED, UNROUTED

        for counter in (PUBLISHED, ACKED, REJECTED, UNROUTED):
            counter.labels(gate_id)
        UPLINK_CONNECTED.labels(gate_id).set_function(flag(sync.connected.is_set))
