"""The gate loop: reads -> debounce/pairing -> ``decide`` -> journal COMMIT -> indicator -> store.

One thread per reader puts its ``CardRead`` values (and status changes) on a ``queue.Queue``; the
loop thread is the only one that decides, so decisions are made one at a time in arrival order.

Group commit: each turn the loop takes every item waiting in the inbox (at most ``INBOX_SIZE``)
as one batch. The reads of a batch are decided one by one in arrival order, each on the store with
the effects of the ones before it already applied (an entry and the same worker's exit in one
batch are decided as if one after the other); their events are journaled in ONE transaction (one
fsync); only after that commit is any of them shown; then the store's changes of the whole batch
commit together (one transaction with the last ``applied_seq``). A kill before the journal commit
leaves nothing of the batch (none of its reads was shown); a kill after it is repaired at boot
from the journal (below). A reader status in the inbox closes the batch before it.

For each presentation (``edge.rules.pairing``):

1. ``now`` from the clock (``edge.clock.GuardedClock``: an implausible wall clock, G13, is
   replaced by the gate's estimate and flagged untrusted, G8); the rulebook version is the one in
   force on that date, or the newest held when the clock is an estimate
   (``GateRulebooks.in_force``);
2. ``decide(store, presentation, now, rulebook)``; an exception there is a bug: it is logged with
   its traceback and the read is shown and journaled as DENY "falha interna" (rule id ``INTERNAL``),
   except for a worker with an open shift at this gate: an exit is never refused because of a gate
   fault (G13), so it is an EXIT with rule id ``INTERNAL``;
3. the tap (and, on a confiscation, the ``ConfiscationPayload`` in the same transaction, priority 1;
   on a meal worked recorded in the inspector's meal mode, the ``MealWorkedPayload``, P6) is
   appended to the journal batch, its effects staged in the store batch, and the batch COMMITTED;
4. only then the indicator shows the decision (if the journal cannot commit, every read of the
   batch is shown the failure: the watchman sees DENY "falha do registro" and nothing is admitted;
   a worker leaving is shown EXIT "saída não registrada" and his shift stays open, G13; the store
   batch is rolled back);
5. the store commits the event's effects (``edge.effects``: open/close shift, pending flags, block
   the card at once on a confiscation, inspector session). At start-up, journal events after the
   store's ``applied_seq`` are re-applied first, so a kill between 3 and 5 loses nothing.

Enrol mode (issue 34): the office's ``EnrolCommand`` (``wire.downlink``, on the gate's ``cmd``
topic) reaches the loop through the inbox (``enrol_command``, called by the sync thread), so it
is applied between decisions. While it lasts, ``decide`` gets it as an input (``EnrolMode``): the
next unknown card read whole is DENY ``G1``/``ENROL`` ("cartão em cadastro"), journaled and sent
up as an ordinary tap (the office's candidate), and enrol mode ends after that read, at its
deadline (``until`` on a trusted clock, at most ``timeout_s`` on the monotonic clock; checked on
each tick) or on a cancel of the same session. ``enrol_state()`` says it to the heartbeat (the
watchman's screen). It does not survive a restart (the office's deadline ends it there too).

Nothing a reader sends can stop the loop: a malformed UID is decided (G1 DENY) and journaled.
Reader faults and recoveries are journaled as ``ReaderPayload`` events (priority 1).

Card + badge (G4): the first read of a pair is held by the pairing until the other arrives or the
window passes; the loop's tick (``handle(None)``, every ``tick_s`` when no read comes) releases
it, so BADGE_MISSING is decided at most a tick after the window. A held read that goes alone is
decided and journaled as of its read (``occurred_at`` and ``mono_ns`` of the read, the clock as
the loop took the read), not of the window's end; a pair as of its second read.

On its tick the loop also (priority-1 events, so they leave the outbox first):

- journals ``AlertPayload(code="CLOCK_UNTRUSTED")`` when the wall clock becomes implausible (G13:
  detail = the wall clock as read, the estimate, the boot id) and ``code="CLOCK_TRUSTED"`` when it
  is plausible and trusted again: a trusted event of this boot the office places the untrusted
  ones from (boot id, seq, monotonic time);
- every ``coverage_every_s`` (and after every admit) evaluates G11 on the local copy
  (``edge.rules.coverage``, with the watchmen aboard = the shifts open at this gate) and journals
  a ``CoveragePayload`` ``raised`` for each new gap and ``ended`` when a watchman is admitted or
  the period ends. Not evaluated while the clock is untrusted (an estimate could raise a false gap).
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence

import structlog
from structlog.contextvars import bind_contextvars, reset_contextvars

from drivers.base import CardRead, Reader, ReaderState, ReaderStatus
from edge.effects import effects_of
from edge.indicator import Indicator
from edge.journal import PRIORITY_HIGH, PRIORITY_NORMAL, Journal
from edge.rules.coverage import CoverageGap, coverage_gaps, covering_watchman
from edge.rules.model import Decision, EnrolMode, Now, Outcome, Presentation
from edge.rules.pairing import Dropped, Pairing, Read, badge_expected
from edge.rules.rulebook import GateRulebook, GateRulebooks
from edge.store import Store
from edge import metrics
from portgate.errors import StoreError
from wire.downlink import EnrolCommand
from wire.events import (AlertPayload, ConfiscationPayload, CoveragePayload, Dispatch, Event,
                         MealWorkedPayload, ReaderPayload, TapPayload)

log = structlog.get_logger(__name__)

INTERNAL_PT = "Falha interna do sistema: entrada negada. Chame o supervisor."
INTERNAL_EN = "Internal failure: entry denied. Call the supervisor."
NO_JOURNAL_PT = "Falha do registro (disco): entrada negada. Chame o supervisor."
NO_JOURNAL_EN = "Journal failure (disk): entry denied. Call the supervisor."
INTERNAL_EXIT_PT = "SAÍDA — falha interna do sistema: saída registrada. Avise o supervisor."
INTERNAL_EXIT_EN = "EXIT — internal failure: exit recorded. Tell the supervisor."
NO_JOURNAL_EXIT_PT = "SAÍDA — falha do registro (disco): saída NÃO registrada. Anote a hora e chame o supervisor."
NO_JOURNAL_EXIT_EN = "EXIT — journal failure (disk): exit NOT recorded. Write down the time and call the supervisor."
_MAX_UID_TEXT = 64
_STOP = object()
INBOX_SIZE = 16


def internal_failure(message_pt: str = INTERNAL_PT, message_en: str = INTERNAL_EN) -> Decision:
    """The DENY shown when the gate itself failed (not a rule): rule id ``INTERNAL``."""
    return Decision(outcome=Outcome.DENY, rules_failed=("INTERNAL",), message_pt=message_pt,
                    message_en=message_en)


def internal_exit(message_pt: str = INTERNAL_EXIT_PT, message_en: str = INTERNAL_EXIT_EN,
                  registration: str | None = None, dispatch=None) -> Decision:
    """The EXIT shown when the gate itself failed for a worker with an open shift here: an exit
    is never refused because of a gate fault (G13). Rule id ``INTERNAL``."""
    return Decision(outcome=Outcome.EXIT, rules_failed=("INTERNAL",), message_pt=message_pt,
                    message_en=message_en, registration=registration, card_kind="control",
                    dispatch=dispatch)


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
    """A reader's UID text made safe to journal and show: printable, at most 64 characters; a
    byte the reader's decoder could not read (U+FFFD) is shown as ``?`` like a control byte."""
    s = text if isinstance(text, str) else repr(text)
    if not s.isprintable() or "\ufffd" in s:
        s = "".join(ch if ch.isprintable() and ch != "\ufffd" else "?" for ch in s)
    return s[:_MAX_UID_TEXT]


class GateLoop:
    """The gate loop (see module doc). Everything comes in through the constructor (STYLE.md 6).

    ``decide``: the rules function (``edge.rules.decide``; replaceable for tests of the failure
    path). ``lang``: the indicator's language. ``on_event``: optional callback after each journaled
    event (metrics, the MQTT publisher's wake-up). ``directions``: reader id -> declared direction
    (``in|out|both``, G6/G9), set on each presentation before it is decided; absent = ``both``.
    ``on_unjournaled``: optional callback ``(uid, outcome, registration)`` for each read shown
    whose journal write failed (the heartbeat carries it to the watchman's screen, which cannot
    read it from the journal); set after construction (``edge.service``).
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
        coverage_every_s: float = 5.0,
        directions: Mapping[str, str] | None = None,
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
        start = self._rulebook_at(clock.now())
        self.pairing = Pairing.from_rulebook(start, expects_badge=self._expects_badge,
                                             holder=self._holder)
        self._ttl_ns = start.g10.inspector_mode_s * 1_000_000_000
        self._coverage_every_ns = int(coverage_every_s * 1e9)
        self._coverage_at: int | None = None
        self._gaps: dict[tuple, CoverageGap] = {}  # G11 gaps raised and not yet ended
        self._clock_trusted: bool | None = None  # last clock state journaled (None: none yet)
        self.directions = dict(directions or {})
        # Bounded: a reader waits (its reads stay in the device/pipe) while the gate is busy, so a
        # crash loses at most INBOX_SIZE undecided reads, and a hostile reader cannot eat memory.
        self.inbox: queue.Queue = queue.Queue(maxsize=INBOX_SIZE)
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._shown_ns = 0
        self.on_unjournaled: Callable[[str, str, str | None], None] | None = None
        self.reader_health = None  # edge.reader_health.ReaderHealth: the readers' states for the screen/office
        self._batch = None  # the open journal batch (inside _decide_group)
        self._batch_events: list[Event] = []
        self._replay_needed = False
        # G4: the read the pairing holds and the clock when the loop took it; a held read decided
        # alone is decided and journaled at that time, not when its window ran out.
        self._held_at: tuple[Read, Now] | None = None
        # issue 34: the office's enrol mode (an input of decide) and its end in Unix seconds (screen)
        self._enrol: EnrolMode | None = None
        self._enrol_until_unix: float | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    def recover(self) -> int:
        """Re-apply to the store the journal events it has not applied (crash between journal
        commit and store update). Returns how many events were re-applied. Raises ``StoreError``
        (one line) if an event cannot be applied: a gate whose store forgets its journal must not
        start (it would admit a worker aboard again, G5)."""
        events = self.journal.events_after(self.store.applied_seq)
        for ev in events:
            try:
                self._apply(ev, strict=True)
            except StoreError as exc:
                raise StoreError(f"store recovery from the journal failed at seq {ev.seq}: {exc}") from exc
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
        most 1 s for room in the inbox; a status that still finds it full is only logged. The
        reader's health (``reader_health``) follows at once, journaled or not."""
        if self.reader_health is not None:
            self.reader_health.note_status(status)
        try:
            self.inbox.put(status, timeout=1.0)
        except queue.Full:
            log.warning("reader_status_dropped", reader_id=status.reader_id, state=status.state.value)

    def run(self, *, watchdog: Callable[[], None] | None = None) -> None:
        """Recover, start the readers and process the inbox until ``stop()``: each turn takes
        every item waiting (``take_batch``) and handles them as one batch."""
        self.recover()
        self.start_readers()
        while not self._stopping.is_set():
            items, stop = self.take_batch()
            if items:
                self.handle_batch(items)
            if watchdog is not None:
                watchdog()
            if stop:
                break
        self._decide_group(self.pairing.flush())

    def take_batch(self, timeout: float | None = None) -> tuple[list, bool]:
        """Wait at most ``timeout`` seconds (default ``tick_s``) for an inbox item, then take
        every item already waiting behind it, at most ``INBOX_SIZE`` in all. Returns ``(items,
        stop)``: ``[None]`` (a tick) when nothing came; ``stop`` when ``stop()`` was called."""
        try:
            item = self.inbox.get(timeout=self.tick_s if timeout is None else timeout)
        except queue.Empty:
            return [None], False
        if item is _STOP:
            return [], True
        items = [item]
        while len(items) < INBOX_SIZE:
            try:
                more = self.inbox.get_nowait()
            except queue.Empty:
                break
            if more is _STOP:
                return items, True
            items.append(more)
        return items, False

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
        return self.handle_batch([item])

    def enrol_command(self, command: EnrolCommand) -> None:
        """Hand an office ``EnrolCommand`` to the loop (any thread: the sync's); applied in order
        with the reads. Waits at most 1 s for room in the inbox; a command that still finds it full
        is logged and dropped (the office's deadline ends its session)."""
        try:
            self.inbox.put(command, timeout=1.0)
        except queue.Full:
            log.warning("enrol_command_dropped", session=command.session, action=command.action)

    def enrol_state(self) -> dict | None:
        """The enrol mode in force, for the heartbeat: ``{"session", "registration", "until"}``
        (``until``: Unix seconds, system clock), or None."""
        mode, until = self._enrol, self._enrol_until_unix
        if mode is None or until is None:
            return None
        return {"session": mode.session, "registration": mode.registration, "until": until}

    def _apply_enrol(self, cmd: EnrolCommand, now: Now) -> None:
        """Start or cancel enrol mode (see the module doc). A start already past its ``until`` on a
        trusted clock, or with no time left, is ignored (logged)."""
        if cmd.action == "cancel":
            if self._enrol is not None and self._enrol.session == cmd.session:
                log.info("enrol_ended", session=cmd.session, by="cancel")
                self._enrol = self._enrol_until_unix = None
            return
        left_s = float(cmd.timeout_s)
        if cmd.until is not None and now.clock_trusted:
            left_s = min(left_s, (cmd.until - now.wall).total_seconds())
        if left_s <= 0:
            log.warning("enrol_ignored", session=cmd.session, reason="expired")
            return
        self._enrol = EnrolMode(session=cmd.session, registration=cmd.registration,
                                until_mono_ns=now.mono_ns + int(left_s * 1e9))
        self._enrol_until_unix = time.time() + left_s
        log.info("enrol_started", session=cmd.session, registration=cmd.registration, seconds=round(left_s, 1))

    def _expire_enrol(self, now: Now) -> None:
        if self._enrol is not None and not self._enrol.active(now.mono_ns):
            log.info("enrol_ended", session=self._enrol.session, by="timeout")
            self._enrol = self._enrol_until_unix = None

    def handle_batch(self, items: Sequence[CardRead | ReaderStatus | None]) -> list[Decision]:
        """Process inbox items in order (group commit, see the module doc): the reads between two
        reader statuses are decided one by one, each on the state left by the ones before it, and
        journaled in ONE transaction; then each decision is shown. Returns the decisions shown, in
        order. Never raises for bad input."""
        shown: list[Decision] = []
        run: list[CardRead | None] = []
        for item in items:
            if isinstance(item, ReaderStatus):
                shown += self._handle_reads(run)
                run = []
                self._journal_status(item)
            elif isinstance(item, EnrolCommand):  # between the reads before it and those after
                shown += self._handle_reads(run)
                run = []
                self._apply_enrol(item, self.clock.now())
            else:
                run.append(item)
        return shown + self._handle_reads(run)

    def process(self, p: Presentation) -> Decision:
        """Decide, journal (committed), show, then update the store. Returns the decision shown."""
        return self._decide_group([p])[0]

    def _handle_reads(self, items: Sequence[CardRead | None]) -> list[Decision]:
        if not items:
            return []
        return self._decide_group(items, feed=True)

    def _ready(self, item: CardRead | None) -> list[tuple[Presentation, Now | None]]:
        """The presentations an inbox item releases from the pairing, each with the time it is
        decided at (``_read_time``) (a tick also watches the clock and G11 coverage)."""
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
            ready = self.pairing.feed(read)
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
            self._batch, self._batch_events = batch, []
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
                self._batch = None
                return [self._show_failure(p, d) for p, d, _e, _n in done]
            finally:
                self._batch = None
            events = self._batch_events
            for p, decision, evs, _now in done:
                self._show(decision, evs[0])
                self._observe(p, decision)
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

    def _decide_one(self, p: Presentation, at: Now | None = None) -> tuple[Presentation, Decision, list[Event], Now]:
        """Decide one presentation inside the open batch and stage its events (journal batch,
        store batch), as of ``at`` (``_read_time``; None: now); returns ``(presentation,
        decision, events, now)``."""
        direction = self.directions.get(p.reader_id)
        if direction is not None and direction != p.direction:  # G6/G9: the reader's declaration
            p = dataclasses.replace(p, direction=direction)
        now: Now = self.clock.now()
        self._watch_clock(now)
        now = dataclasses.replace(at or now, boot_id=self.journal.boot_id)  # G13: whose monotonic clock
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
        events = self._stage(payloads, now, priority)
        if decision.outcome is Outcome.ADMIT and self._gaps:
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

    def _stage(self, payloads: Sequence, now: Now, priority: int) -> list[Event]:
        """Add ``payloads`` to the open journal batch and apply their effects to the store batch
        (uncommitted), so the next read of the batch is decided on them."""
        events = self._batch.add(payloads, now=now, priority=priority)
        for ev in events:
            self._apply(ev)
        self._batch_events.extend(events)
        return events

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

    # -- helpers -----------------------------------------------------------------------------------

    def _rulebook_at(self, now: Now) -> GateRulebook:
        """The rulebook version in force on the local date of ``now`` (a ``GateRulebooks`` file
        holds several, by effective date), the newest held when the clock is an estimate or the
        date is before every version (G13); a single ``GateRulebook`` is used as is."""
        if not hasattr(self.rulebook, "in_force"):
            return self.rulebook
        return self.rulebook.in_force(now.wall, estimated=now.estimated)

    def _holder(self, uid: str) -> str | None:
        """G4: the registration the read ``uid`` names in the roster copy, or None."""
        try:
            card = self.store.card(uid)
        except Exception:  # a store fault: the badge is decided, not matched (never a crash)
            log.exception("holder_lookup_failed", uid=uid)
            return None
        return card.registration if card is not None else None

    def _expects_badge(self, read: Read) -> bool:
        """G4: hold this control read for a badge (``edge.rules.pairing.badge_expected``)."""
        try:
            return badge_expected(self.store, self._rulebook_at(self.clock.now()), read)
        except Exception:  # a store fault: decide at once (the engine then sees the same store)
            log.exception("badge_expected_failed", uid=read.uid)
            return False

    def _leaving(self, p: Presentation):
        """The open shift at this gate of the card's holder, if the store can tell (G13)."""
        try:
            from portgate.uid import canonical_uid

            card = self.store.card(canonical_uid(p.uid))
            shift = self.store.open_shift(card.registration) if card is not None else None
        except Exception:
            log.exception("open_shift_lookup_failed", uid=p.uid)
            return None
        return shift if shift is not None and shift.gate_id == self.store.gate_id else None

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

    def _journal_status(self, status: ReaderStatus) -> None:
        payload = ReaderPayload(reader_id=status.reader_id, state=status.state.value,
                                detail=status.detail[:500])
        try:
            ev = self.journal.append(payload, now=self.clock.now(), priority=PRIORITY_HIGH)
        except StoreError:
            log.exception("journal_append_failed", reader_id=status.reader_id)
            return
        self._apply(ev)
        level = log.info if status.state is ReaderState.READY else log.warning
        level("reader_status", reader_id=status.reader_id, state=status.state.value, detail=status.detail)

    def _pump(self, reader: Reader) -> None:
        backoff = 0.5
        while not self._stopping.is_set():
            try:
                for read in reader.reads():
                    if self.reader_health is not None:
                        self.reader_health.note_read(reader.reader_id)
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
                crashed = ReaderStatus(reader.reader_id, ReaderState.FAULT, f"reader crashed: {exc}")
                if self.reader_health is not None:
                    self.reader_health.note_status(crashed)
                self.inbox.put(crashed)
                time.sleep(backoff)
                backoff = min(backoff * 2, 10.0)


def _meal_payload(session, tap: TapPayload) -> MealWorkedPayload | None:
    """P6 (83.611 art. 26 d): the meal record of a worker's tap decided in the inspector's meal
    mode; None when the tap names no shift (the engine gives ``meal_worked`` only with one)."""
    if tap.registration is None or tap.dispatch is None:
        return None
    return MealWorkedPayload(
        uid=tap.uid, registration=tap.registration, dispatch=tap.dispatch,
        inspector_uid=session.inspector_uid if session else "",
        inspector_registration=session.inspector_registration if session else None)


def _coverage_payload(gap: CoverageGap, state: str, *, ended_by: str | None = None,
                      watchman: str | None = None) -> CoveragePayload:
    return CoveragePayload(state=state, ship=gap.ship, date=gap.date, period=gap.period,
                           voyage=gap.voyage.value, due_at=gap.due_at, period_end=gap.end,
                           dispatched=list(gap.dispatched), ended_by=ended_by, watchman=watchman)
