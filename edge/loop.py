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

The loop's parts: this module assembles ``GateLoop`` and runs it (``run``, ``handle_batch``);
``edge.loop_decide`` decides one group commit, ``edge.loop_inbox`` the readers' inbox,
``edge.loop_enrol`` the office's enrol mode, ``edge.loop_watch`` the clock and coverage alerts,
``edge.loop_records`` what the loop journals and shows of its own.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Mapping, Sequence

import structlog

from drivers.base import CardRead, Reader, ReaderStatus
from edge.indicator import Indicator
from edge.journal import Journal
from edge.loop_decide import GroupCommit
from edge.loop_enrol import EnrolModes
from edge.loop_inbox import INBOX_SIZE, ReaderInbox
from edge.loop_records import (  # noqa: F401 (still importable from edge.loop)
    INTERNAL_EN, INTERNAL_EXIT_EN, INTERNAL_EXIT_PT, INTERNAL_PT, NO_JOURNAL_EN, NO_JOURNAL_EXIT_EN,
    NO_JOURNAL_EXIT_PT, NO_JOURNAL_PT, internal_exit, internal_failure, tap_payload)
from edge.loop_watch import GateWatch
from edge.rules.coverage import CoverageGap
from edge.rules.model import Decision, EnrolMode, Now, Presentation
from edge.rules.pairing import Pairing, Read, badge_expected
from edge.rules.rulebook import GateRulebook, GateRulebooks
from edge.store import Store
from portgate.errors import StoreError
from wire.downlink import EnrolCommand
from wire.events import Event

log = structlog.get_logger(__name__)


class GateLoop(GroupCommit, ReaderInbox, EnrolModes, GateWatch):
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
            from edge.display.said import decide as _decide  # the rules' decision with its words

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
        self._start_pairing()
        self._init_state(coverage_every_s, directions)

    def _start_pairing(self) -> None:
        """G4 and G10 from the rulebook in force at start: the card + badge pairing and the
        inspector mode's time to live."""
        start = self._rulebook_at(self.clock.now())
        self.pairing = Pairing.from_rulebook(start, expects_badge=self._expects_badge,
                                             holder=self._holder)
        self._ttl_ns = start.g10.inspector_mode_s * 1_000_000_000

    def _init_state(self, coverage_every_s: float, directions: Mapping[str, str] | None) -> None:
        """The loop's running state: coverage (G11), clock trust (G13), the bounded inbox, threads,
        the open batch, the held read (G4) and enrol mode (issue 34)."""
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
        self._unapplied: list[Event] = []  # staged events whose store effects wait (``_settle``)
        self._replay_needed = False
        # G4: the read the pairing holds and the clock when the loop took it; a held read decided
        # alone is decided and journaled at that time, not when its window ran out.
        self._held_at: tuple[Read, Now] | None = None
        self._taking: Now | None = None  # the clock as the loop took the read being fed to the pairing
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

    # -- processing --------------------------------------------------------------------------------

    def handle(self, item: CardRead | ReaderStatus | None) -> list[Decision]:
        """Process one inbox item (a read, a reader status, or None for a timer tick); returns the
        decisions shown. Never raises for bad input."""
        return self.handle_batch([item])

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
            return badge_expected(self.store, self._rulebook_at(self._taking or self.clock.now()), read)
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
