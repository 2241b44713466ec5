"""One group commit of the gate loop (``edge.loop``): the inbox's reads through the pairing
(``_ready``, ``_read_time``), each decided on the state the ones before it left (``_decide_one``,
``_stage``), the journal committed once, then shown (``_show``, or ``_show_failure`` when the
journal cannot commit) and the store committed (``_decide_group``, ``_apply``).

A read's store effects are applied to the store batch lazily (``_settle``): just before anything of
the batch reads the store again (the next read's pairing or decision, a coverage check), else
after the lights. Nothing decided differs (every read still sees the effects of the ones before
it); the effects of the batch's last read cost nothing before its light. They never needed to be
there for durability: the journal commit is the record, the store is re-applied from it at boot.
A mixin of ``edge.loop.GateLoop``: it works on the loop's store, journal, pairing and batch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import structlog
from structlog.contextvars import bind_contextvars, reset_contextvars

from drivers.base import CardRead
from edge import metrics
from edge.effects import effects_of
from edge.journal import PRIORITY_HIGH, PRIORITY_NORMAL
from edge.loop_records import (NO_JOURNAL_EN, NO_JOURNAL_EXIT_EN, NO_JOURNAL_EXIT_PT, NO_JOURNAL_PT,
                               _clean_uid, _meal_payload, internal_exit, internal_failure,
                               tap_payload)
from edge.rules.model import Decision, Now, Outcome, Presentation
from edge.rules.pairing import Dropped, Read
from portgate.errors import StoreError
from wire.events import ConfiscationPayload, Event

log = structlog.get_logger("edge.loop")


class GroupCommit:
    """The deciding of ``edge.loop.GateLoop`` (see there for the attributes it shares)."""

    def _handle_reads(self, items: Sequence[CardRead | None]) -> list[Decision]:
        if not items:
            return []
        return self._decide_group(items, feed=True)

    def _ready(self, item: CardRead | None) -> list[tuple[Presentation, Now | None]]:
        """The presentations an inbox item releases from the pairing, each with the time it is
        decided at (``_read_time``) (a tick also watches the clock and G11 coverage)."""
        self._settle()  # the pairing and the tick read the store: the reads before this one are in it
        if item is None:
            now = self.clock.now()
            self._watch_clock(now)
            self._check_coverage(now)
            self._expire_enrol(now)
            ready = self.pairing.expire(now.mono_ns)
            read = None
        else:
            taken = self.clock.now()
            read = Read(uid=_clean_uid(getattr(item, "uid", "")),
                        reader_id=str(getattr(item, "reader_id", "?")),
                        reader_kind=str(getattr(item, "kind", "control")),
                        mono_ns=int(getattr(item, "mono_ns", 0) or taken.mono_ns))
            self._taking = taken  # the rulebook the pairing asks about is the one in force now
            try:
                ready = self.pairing.feed(read)
            finally:
                self._taking = None
        out = []
        for p in ready:
            if isinstance(p, Dropped):
                log.debug("read_debounced", uid=p.read.uid, reader_id=p.read.reader_id)
                continue
            out.append((p, self._read_time(p)))
        if read is not None and self.pairing.holding is read:
            self._held_at = (read, taken)
        return out

    def _decide_group(self, items: Sequence, *, feed: bool = False) -> list[Decision]:
        """Decide every presentation (``feed``: every inbox item through the pairing first) in
        order inside one store batch and one journal batch, each decision on the store with the
        effects of the ones before it; commit the journal once; only then show each decision;
        then commit the store. If the journal cannot commit, nothing of the batch is kept and
        every read is shown the journal failure (G13: an exit is shown as not recorded)."""
        if self._replay_needed:  # a store commit failed earlier: re-apply what the journal has
            self._replay_needed = False
            self.recover()
        if not feed and not items:
            return []
        done: list[tuple[Presentation, Decision, list[Event], Now]] = []
        with self.store.batch(), self.journal.batch() as batch:
            self._batch, self._batch_events, self._unapplied = batch, [], []
            if feed:  # the batch's cards, holders and last shift ends: one query, not three per read
                self._look_ahead(items)
            try:
                for item in items:
                    for p, at in (self._ready(item) if feed else ((item, self._read_time(item)),)):
                        tokens = bind_contextvars(reader_id=p.reader_id)
                        try:
                            done.append(self._decide_one(p, at))
                        finally:
                            reset_contextvars(**tokens)
                batch.commit()
            except StoreError:
                log.exception("journal_append_failed", reads=len(done))
                self.store.rollback()
                self._batch, self._unapplied = None, []  # the waiting effects go with the batch
                return [self._show_failure(p, d) for p, d, _e, _n in done]
            finally:
                self._batch = None
            events = self._batch_events
            for p, decision, evs, _now in done:
                self._show(decision, evs[0])
                self._observe(p, decision)
            self._settle()  # the last read's effects: after its light, before the store commit
            try:
                self.store.commit()
            except StoreError:  # the journal has them: re-applied before the next batch
                log.exception("store_apply_failed", seq=events[0].seq if events else None)
                self._replay_needed = True
        for ev in events:
            if self.on_event is not None:
                self.on_event(ev)
        for p, decision, evs, now in done:
            log.info("gate_decision", seq=evs[0].seq, event_id=evs[0].event_id, uid=p.uid,
                     outcome=decision.outcome.value, rules=list(decision.rules_failed),
                     clock_trusted=now.clock_trusted, reader_id=p.reader_id, batch=len(done))
        return [d for _p, d, _e, _n in done]

    def _look_ahead(self, items: Sequence) -> None:
        """Have the store look up the cards of the batch's reads (and the one the pairing holds)
        at once (``Store.prefetch``); the decisions are the same, taken one by one."""
        uids = [_clean_uid(item.uid) for item in items if isinstance(item, CardRead)]
        held = self.pairing.holding
        if held is not None:
            uids.append(held.uid)
        if uids:
            self.store.prefetch(uids)

    def _decide_one(self, p: Presentation, at: Now | None = None) -> tuple[Presentation, Decision, list[Event], Now]:
        """Decide one presentation inside the open batch and stage its events (journal batch,
        store batch), as of ``at`` (``_read_time``; None: now); returns ``(presentation,
        decision, events, now)``."""
        self._settle()  # decided on the effects of every read before it
        direction = self.directions.get(p.reader_id)
        if direction is not None and direction != p.direction:  # G6/G9: the reader's declaration
            p = dataclasses.replace(p, direction=direction)
        now: Now = self.clock.now()
        self._watch_clock(now)
        at = at or now  # G13: whose monotonic clock (a ``Now`` made at once: not ``dataclasses.replace``)
        now = Now(at.wall, at.mono_ns, at.clock_trusted, at.estimated, self.journal.boot_id)
        enrol = self._enrol
        if enrol is not None and not enrol.active(now.mono_ns):
            self._expire_enrol(now)
            enrol = None
        try:
            if enrol is None:
                decision = self.decide(self.store, p, now, self._rulebook_at(now))
            else:  # issue 34: enrol mode is an input of the rules
                decision = self.decide(self.store, p, now, self._rulebook_at(now), enrol=enrol)
        except Exception:  # a bug in the engine or the store: never crash the gate on a read
            log.exception("decide_failed", uid=p.uid, reader_id=p.reader_id)
            leaving = self._leaving(p)
            decision = (internal_failure() if leaving is None
                        else internal_exit(registration=leaving.registration, dispatch=leaving.dispatch))
        if enrol is not None and "ENROL" in decision.rules_failed:  # one card, then enrol mode ends
            log.info("enrol_ended", session=enrol.session, by="card_read", uid=decision.card_uid)
            self._enrol = self._enrol_until_unix = None
        payloads = [tap_payload(p, decision)]
        priority = PRIORITY_NORMAL
        if decision.confiscate:
            session = self.store.inspector_session()
            payloads.append(ConfiscationPayload(
                uid=decision.card_uid or p.uid, registration=decision.registration,
                inspector_uid=session.inspector_uid if session else "",
                inspector_registration=session.inspector_registration if session else None,
                reason_flag=decision.confiscation_reason or "INSPECTOR_DECISION",
                article=decision.confiscation_article or "83.611 art. 20 §1",
            ))
            priority = PRIORITY_HIGH
        meal = _meal_payload(self.store.inspector_session(), payloads[0]) if decision.meal_worked else None
        if meal is not None:  # P6: recorded in the same transaction as the worker's tap
            payloads.append(meal)
        events = self._stage(payloads, now, priority, defer=True)
        if decision.outcome is Outcome.ADMIT and self._gaps:
            self._settle()  # G11 reads the shifts open here, this admit's included
            self._check_coverage(now, force=True)  # G11: a watchman admitted ends the gap at once
        return p, decision, events, now

    def _read_time(self, p: Presentation) -> Now | None:
        """The clock as the loop took the read of ``p`` if the pairing held that read and lets it
        go alone (G4: a badge alone, a control card whose badge never came): it is decided and
        journaled (``occurred_at``, ``mono_ns``, clock trust) as of its read, as ``portgate
        replay`` decides it, not up to ``g4.pairing_window_s`` later. None otherwise (decided
        now: a read at once, a pair at its second read)."""
        held = self._held_at
        if held is None or p.badge_uid is not None:
            return None
        read, taken = held
        if (p.uid, p.reader_id, p.mono_ns) != (read.uid, read.reader_id, read.mono_ns):
            return None
        self._held_at = None
        return taken

    def _stage(self, payloads: Sequence, now: Now, priority: int, *, defer: bool = False) -> list[Event]:
        """Add ``payloads`` to the open journal batch and apply their effects to the store batch
        (uncommitted), so the next read of the batch is decided on them: at once, or with
        ``defer`` when the store is next read (``_settle``; a read's tap: its effects are not
        needed before its light)."""
        events = self._batch.add(payloads, now=now, priority=priority)
        self._batch_events.extend(events)
        if defer:
            self._unapplied.extend(events)
        else:
            self._settle()  # in journal order
            for ev in events:
                self._apply(ev)
        return events

    def _settle(self) -> None:
        """Apply to the store batch the effects of the events staged with ``defer``, in order."""
        pending = self._unapplied
        if pending:
            self._unapplied = []
            for ev in pending:
                self._apply(ev)

    def _show_failure(self, p: Presentation, decision: Decision) -> Decision:
        """The journal could not commit the batch: what the watchman sees for this read."""
        if decision.outcome is Outcome.EXIT:  # G13: never keep a worker aboard for a gate fault
            failed = internal_exit(NO_JOURNAL_EXIT_PT, NO_JOURNAL_EXIT_EN,
                                   registration=decision.registration)
        else:
            failed = internal_failure(NO_JOURNAL_PT, NO_JOURNAL_EN)
        failed = dataclasses.replace(failed, card_uid=decision.card_uid or p.uid)
        self._show(failed, None)  # counted by the journal, reported once space returns
        if self.on_unjournaled is not None:
            try:
                self.on_unjournaled(failed.card_uid or p.uid, failed.outcome.value, failed.registration)
            except Exception:  # the screen's record must not stop the gate
                log.exception("unjournaled_note_failed")
        self._observe(p, failed)
        return failed

    def _observe(self, p: Presentation, decision: Decision) -> None:
        last_read_ns = max(p.mono_ns, p.badge_mono_ns or 0)  # a pair is decided at its second read
        metrics.observe_decision(decision.outcome.value, decision.rules_failed,
                                 (self._shown_ns - last_read_ns) / 1e9 if p.mono_ns and self._shown_ns else None)

    def _show(self, decision: Decision, event: Event | None) -> None:
        try:
            self.indicator.show(decision, self.lang, event=event)
        except Exception:  # a broken LED must not stop the gate; the event is already journaled
            log.exception("indicator_failed")
        self._shown_ns = self.clock.now().mono_ns  # read -> indicator latency (edge.metrics)

    def _apply(self, ev: Event, *, strict: bool = False) -> None:
        fx = effects_of(ev, boot_id=self.journal.boot_id,
                        inspector_ttl_ns=self._ttl_ns,
                        ship=self.store.ship, find_dispatch=self.store.find_dispatch,
                        control_cards=self.store.control_cards)
        if strict:
            self.store.apply(ev.seq, fx)
            return
        try:
            self.store.apply(ev.seq, fx)
        except StoreError:  # re-applied at the next start (applied_seq did not move)
            log.exception("store_apply_failed", seq=ev.seq)
