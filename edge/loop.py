"""The gate loop: reads -> debounce/pairing -> ``decide`` -> journal COMMIT -> indicator -> store.

One thread per reader puts its ``CardRead`` values (and status changes) on a ``queue.Queue``; the
loop thread is the only one that decides, so decisions are made one at a time in arrival order.
For each presentation (``edge.rules.pairing``):

1. ``now`` from the clock (``edge.clock.GuardedClock``: a wall clock that jumps backwards is
   flagged untrusted, G8);
2. ``decide(store, presentation, now, rulebook)``; an exception there is a bug: it is logged with
   its traceback and the read is shown and journaled as DENY "falha interna" (rule id ``INTERNAL``);
3. the tap (and, on a confiscation, the ``ConfiscationPayload`` in the same transaction, priority 1)
   is appended to the journal and COMMITTED;
4. only then the indicator shows the decision (if the journal cannot commit, the watchman sees DENY
   "falha do registro" and nothing is admitted);
5. the store applies the event's effects (``edge.effects``: open/close shift, pending flags, block
   the card at once on a confiscation, inspector session). At start-up, journal events after the
   store's ``applied_seq`` are re-applied first, so a kill between 3 and 5 loses nothing.

Nothing a reader sends can stop the loop: a malformed UID is decided (G1 DENY) and journaled.
Reader faults and recoveries are journaled as ``ReaderPayload`` events (priority 1).
"""

from __future__ import annotations

import queue
import threading
from dataclasses import replace
import time
from collections.abc import Callable, Sequence

import structlog

from drivers.base import CardRead, Reader, ReaderStatus
from edge.effects import effects_of
from edge.indicator import Indicator
from edge.journal import PRIORITY_HIGH, PRIORITY_NORMAL, Journal
from edge.rules.model import Decision, Now, Outcome, Presentation
from edge.rules.pairing import Dropped, Pairing, Read
from edge.rules.rulebook import GateRulebook, GateRulebooks
from edge.store import Store
from edge import metrics
from portgate.errors import StoreError
from wire.events import ConfiscationPayload, Dispatch, Event, ReaderPayload, TapPayload

log = structlog.get_logger(__name__)

INTERNAL_PT = "Falha interna do sistema: entrada negada. Chame o supervisor."
INTERNAL_EN = "Internal failure: entry denied. Call the supervisor."
NO_JOURNAL_PT = "Falha do registro (disco): entrada negada. Chame o supervisor."
NO_JOURNAL_EN = "Journal failure (disk): entry denied. Call the supervisor."
_MAX_UID_TEXT = 64
_STOP = object()
INBOX_SIZE = 16


def internal_failure(message_pt: str = INTERNAL_PT, message_en: str = INTERNAL_EN) -> Decision:
    """The DENY shown when the gate itself failed (not a rule): rule id ``INTERNAL``."""
    return Decision(outcome=Outcome.DENY, rules_failed=("INTERNAL",), message_pt=message_pt,
                    message_en=message_en)


def tap_payload(p: Presentation, d: Decision) -> TapPayload:
    """The journal record of one decided presentation (what the watchman was shown, in pt-BR).
    ``uid`` is the matched card's UID (a partial read names it, G1), else the read's text."""
    dispatch = None
    if d.dispatch is not None:
        e = d.dispatch
        dispatch = Dispatch(date=e.date, period=e.period, ship=e.ship, berth=e.berth.value,
                            voyage=e.voyage.value, post=e.post, function=e.function)
    return TapPayload(
        uid=d.card_uid or p.uid, reader_id=p.reader_id,
        reader_kind="badge" if p.reader_kind == "badge" else "control",
        decision=d.outcome.value, rules_failed=list(d.rules_failed), flags=[f.value for f in d.flags],
        message=d.message_pt, registration=d.registration, card_kind=d.card_kind,
        badge_uid=p.badge_uid, badge_registration=d.badge_registration, dispatch=dispatch,
    )


def _clean_uid(text: object) -> str:
    """A reader's UID text made safe to journal: printable, at most 64 characters."""
    s = text if isinstance(text, str) else repr(text)
    s = "".join(ch if ch.isprintable() else "?" for ch in s)
    return s[:_MAX_UID_TEXT]


class GateLoop:
    """The gate loop (see module doc). Everything comes in through the constructor (STYLE.md 6).

    ``decide``: the rules function (``edge.rules.decide``; replaceable for tests of the failure
    path). ``lang``: the indicator's language. ``on_event``: optional callback after each journaled
    event (metrics, the MQTT publisher's wake-up).
    """

    def __init__(
        self,
        *,
        readers: Sequence[Reader],
        store: Store,
        journal: Journal,
        clock,
        indicator: Indicator,
        rulebook: GateRulebook | GateRulebooks,
        decide: Callable | None = None,
        lang: str = "pt",
        on_event: Callable[[Event], None] | None = None,
        tick_s: float = 0.2,
    ) -> None:
        if decide is None:
            from edge.rules import decide as _decide

            decide = _decide
        self.readers = list(readers)
        self.store = store
        self.journal = journal
        self.clock = clock
        self.indicator = indicator
        self.rulebook = rulebook
        self.decide = decide
        self.lang = lang
        self.on_event = on_event
        self.tick_s = tick_s
        self.pairing = Pairing.from_rulebook(self._rulebook_at(clock.now()))
        self._ttl_ns = self._rulebook_at(clock.now()).g10.inspector_mode_s * 1_000_000_000
        # Bounded: a reader waits (its reads stay in the device/pipe) while the gate is busy, so a
        # crash loses at most INBOX_SIZE undecided reads, and a hostile reader cannot eat memory.
        self.inbox: queue.Queue = queue.Queue(maxsize=INBOX_SIZE)
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._shown_ns = 0

    # -- lifecycle ---------------------------------------------------------------------------------

    def recover(self) -> int:
        """Re-apply to the store the journal events it has not applied (crash between journal
        commit and store update). Returns how many events were re-applied."""
        events = self.journal.events_after(self.store.applied_seq)
        for ev in events:
            self._apply(ev)
        if events:
            log.info("store_recovered_from_journal", events=len(events), last_seq=events[-1].seq)
        return len(events)

    def start_readers(self) -> None:
        """Start one daemon thread per reader, each putting reads on ``inbox``."""
        for reader in self.readers:
            th = threading.Thread(target=self._pump, args=(reader,), name=f"reader-{reader.reader_id}",
                                  daemon=True)
            th.start()
            self._threads.append(th)

    def on_status(self, status: ReaderStatus) -> None:
        """Status callback for the readers' constructors: faults become journal events. Waits at
        most 1 s for room in the inbox; a status that still finds it full is only logged."""
        try:
            self.inbox.put(status, timeout=1.0)
        except queue.Full:
            log.warning("reader_status_dropped", reader_id=status.reader_id, state=status.state.value)

    def run(self, *, watchdog: Callable[[], None] | None = None) -> None:
        """Recover, start the readers and process the inbox until ``stop()``."""
        self.recover()
        self.start_readers()
        while not self._stopping.is_set():
            try:
                item = self.inbox.get(timeout=self.tick_s)
            except queue.Empty:
                item = None
            if item is _STOP:
                break
            self.handle(item)
            if watchdog is not None:
                watchdog()
        for p in self.pairing.flush():
            self.process(p)

    def stop(self) -> None:
        """Ask the loop and the readers to stop (callable from any thread or a signal handler)."""
        self._stopping.set()
        try:
            self.inbox.put_nowait(_STOP)
        except queue.Full:
            pass  # the loop sees _stopping at its next item
        for reader in self.readers:
            try:
                reader.close()
            except Exception:  # a reader failing to close must not stop the others
                log.exception("reader_close_failed", reader_id=reader.reader_id)

    # -- processing --------------------------------------------------------------------------------

    def handle(self, item: CardRead | ReaderStatus | None) -> list[Decision]:
        """Process one inbox item (a read, a reader status, or None for a timer tick); returns the
        decisions shown. Never raises for bad input."""
        if isinstance(item, ReaderStatus):
            self._journal_status(item)
            return []
        if item is None:
            ready = self.pairing.expire(self.clock.now().mono_ns)
        else:
            read = Read(uid=_clean_uid(getattr(item, "uid", "")),
                        reader_id=str(getattr(item, "reader_id", "?")),
                        reader_kind=str(getattr(item, "kind", "control")),
                        mono_ns=int(getattr(item, "mono_ns", 0) or self.clock.now().mono_ns))
            ready = self.pairing.feed(read)
        shown = []
        for p in ready:
            if isinstance(p, Dropped):
                log.debug("read_debounced", uid=p.read.uid, reader_id=p.read.reader_id)
                continue
            shown.append(self.process(p))
        return shown

    def process(self, p: Presentation) -> Decision:
        """Decide, journal (committed), show, then update the store. Returns the decision shown.
        Log lines inside carry ``reader_id``; the decision is counted in ``edge.metrics``."""
        with structlog.contextvars.bound_contextvars(reader_id=p.reader_id):
            self._shown_ns = 0
            decision = self._process(p)
        metrics.observe_decision(decision.outcome.value, decision.rules_failed,
                                 (self._shown_ns - p.mono_ns) / 1e9 if p.mono_ns and self._shown_ns else None)
        return decision

    def _process(self, p: Presentation) -> Decision:
        now: Now = self.clock.now()
        try:
            decision = self.decide(self.store, p, now, self._rulebook_at(now))
        except Exception:  # a bug in the engine or the store: never crash the gate on a read
            log.exception("decide_failed", uid=p.uid, reader_id=p.reader_id)
            decision = internal_failure()
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
        try:
            events = self.journal.append_many(payloads, now=now, priority=priority)
        except StoreError:
            log.exception("journal_append_failed", uid=p.uid)
            failed = replace(internal_failure(NO_JOURNAL_PT, NO_JOURNAL_EN), card_uid=decision.card_uid or p.uid)
            self._show(failed, None)  # counted by the journal, reported once space returns
            return failed
        self._show(decision, events[0])
        for ev in events:
            self._apply(ev)
            if self.on_event is not None:
                self.on_event(ev)
        log.info("gate_decision", seq=events[0].seq, event_id=events[0].event_id, uid=p.uid,
                 outcome=decision.outcome.value, rules=list(decision.rules_failed),
                 clock_trusted=now.clock_trusted)
        return decision

    # -- helpers -----------------------------------------------------------------------------------

    def _rulebook_at(self, now: Now) -> GateRulebook:
        """The rulebook version in force on the local date of ``now`` (a ``GateRulebooks`` file
        holds several, by effective date); a single ``GateRulebook`` is used as is."""
        if not hasattr(self.rulebook, "for_date"):
            return self.rulebook
        tz = self.rulebook.version[-1].tz
        return self.rulebook.for_date(now.wall.astimezone(tz).date())

    def _show(self, decision: Decision, event: Event | None) -> None:
        try:
            self.indicator.show(decision, self.lang, event=event)
        except Exception:  # a broken LED must not stop the gate; the event is already journaled
            log.exception("indicator_failed")
        self._shown_ns = self.clock.now().mono_ns  # read -> indicator latency (edge.metrics)

    def _apply(self, ev: Event) -> None:
        fx = effects_of(ev, boot_id=self.journal.boot_id,
                        inspector_ttl_ns=self._ttl_ns,
                        ship=self.store.ship, find_dispatch=self.store.find_dispatch)
        try:
            self.store.apply(ev.seq, fx)
        except StoreError:  # re-applied at the next start (applied_seq did not move)
            log.exception("store_apply_failed", seq=ev.seq)

    def _journal_status(self, status: ReaderStatus) -> None:
        payload = ReaderPayload(reader_id=status.reader_id, state=status.state.value,
                                detail=status.detail[:500])
        try:
            ev = self.journal.append(payload, now=self.clock.now(), priority=PRIORITY_HIGH)
        except StoreError:
            log.exception("journal_append_failed", reader_id=status.reader_id)
            return
        self._apply(ev)
        log.warning("reader_status", reader_id=status.reader_id, state=status.state.value,
                    detail=status.detail)

    def _pump(self, reader: Reader) -> None:
        backoff = 0.5
        while not self._stopping.is_set():
            try:
                for read in reader.reads():
                    while not self._stopping.is_set():
                        try:
                            self.inbox.put(read, timeout=0.5)
                            break
                        except queue.Full:
                            continue
                    backoff = 0.5
                return  # reads() returned: the reader was closed
            except Exception as exc:  # the Reader contract says never; a bug must not kill the gate
                log.exception("reader_crashed", reader_id=reader.reader_id)
                from drivers.base import ReaderState

                self.inbox.put(ReaderStatus(reader.reader_id, ReaderState.FAULT, f"reader crashed: {exc}"))
                time.sleep(backoff)
                backoff = min(backoff * 2, 10.0)
