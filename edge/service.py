"""The gate service: build everything from ``GateConfig`` and run the loop (``portgate edge run``).

Start-up order: logging; rulebook; clock (``GuardedClock``: a wall clock before the rulebook's
first version is implausible, G13); HMAC key (``read_secret``: mode 0600); the state directory's
lock (``edge.state_lock``: an exclusive flock on ``gate.lock``, held until ``close``, so a second
service on the same directory never starts), then store and journal, the three each taken through
``wait_unlocked`` (a file locked by another process is logged at once,
``state_file_locked``, and tried again every ``LOCK_RETRY_S`` until ``lock_wait_s`` from the first
try, then ``StoreLocked``: exit 1; a stop asked meanwhile ends the wait, ``StartCancelled``; no
reader is open, so no tap is decided before the three are held); store (corrupt file
quarantined; a file that cannot be written or whose tables are not a store's is refused with a
``StoreError``); journal (corrupt file quarantined, alert first; its newest trusted event is the
gate's last trusted time, and a wall clock before it is implausible, G13; a store whose
``applied_seq`` is ahead of the journal's last seq is refused); a STORE_QUARANTINED alert for a
quarantined store; seed CSV files if the store has no roster yet; the journal events after the
store's ``applied_seq`` re-applied (``GateLoop.recover``: a failure is a ``StoreError``, the gate
does not start, G5); readers (``edge.readers``); indicator; the loop; then,
only if ``[mqtt]`` is configured, ``edge.sync.Sync(config.mqtt, journal, store)`` (imported lazily;
without it the gate runs standalone and the journal keeps everything until a sync is configured).
SIGTERM/SIGINT stop the loop cleanly (readers closed, journal closed, systemd told STOPPING); during
start-up they set the ``stop`` event given to ``GateService`` (``portgate edge run`` installs the
handlers), which ends a lock wait at once and makes ``run`` return without starting the loop.
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import structlog

from edge.clock import GuardedClock, SystemClock
from edge.config import GateConfig
from edge.indicator import ConsoleIndicator, FileIndicator, GpioIndicator, Indicator, NullIndicator
from edge.journal import PRIORITY_HIGH, Journal
from edge.loop import GateLoop
from edge.state_lock import StateDirLock
from edge.store import Store
from portgate.config import read_secret
from portgate.errors import ConfigError, PortgateError, StoreError, StoreLocked
from portgate.gctune import freeze_start_up
from wire.events import AlertPayload

log = structlog.get_logger(__name__)

LOCK_RETRY_S = 2.0  # seconds between two tries to open a state file locked by another process

T = TypeVar("T")


class StartCancelled(PortgateError):
    """A stop (SIGTERM/SIGINT) was asked while the gate was still starting (waiting for a locked
    state file): nothing was decided, nothing is left open. A clean stop: exit status 0."""

    exit_code = 0


def wait_unlocked(open_file: Callable[[], T], *, deadline: float, stop: threading.Event | None = None,
                  retry_s: float = LOCK_RETRY_S, started: float | None = None) -> T:
    """Return ``open_file()``, trying again while it raises ``StoreLocked``: every try that finds
    the file locked is logged at once (``state_file_locked``: the file, the problem and what to
    do, the attempt, the seconds to the next try and to giving up), then the wait is
    ``retry_s`` or what is left before ``deadline`` (``time.monotonic()`` seconds).

    Raises ``StoreLocked`` (with ``waited_s`` counted from ``started``, default: the first try)
    once ``deadline`` has passed, and ``StartCancelled`` as soon as ``stop`` is set during a wait
    (``stop``: an event a signal handler sets). Any other error of ``open_file`` goes through."""
    first = time.monotonic() if started is None else started
    attempt = 1
    while True:
        try:
            return open_file()
        except StoreLocked as exc:
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                log.error("state_file_locked", file=str(exc.path), problem=str(exc), attempt=attempt,
                          gave_up=True)
                raise StoreLocked(exc.path, waited_s=round(now - first, 1)) from exc
            delay = min(retry_s, left)
            log.warning("state_file_locked", file=str(exc.path), problem=str(exc), attempt=attempt,
                        retry_in_s=round(delay, 1), gives_up_in_s=round(left, 1))
            if stop is None:
                time.sleep(delay)
            elif stop.wait(delay):
                log.info("gate_start_cancelled", file=str(exc.path), attempt=attempt)
                raise StartCancelled(f"stopped while waiting for {exc.path} to be unlocked") from exc
            attempt += 1


def make_clock(cfg: GateConfig):
    """System clock wrapped in ``GuardedClock``; ``clock_trust`` = ntp (adjtimex), always, never.
    ``clock = "scripted"`` (demo only) follows ``clock_file`` (``edge.scripted_clock``)."""
    if cfg.clock == "scripted":  # GateConfig makes sure clock_file is set
        from edge.scripted_clock import ScriptedClock

        return GuardedClock(ScriptedClock(cfg.clock_file))
    probe = {"ntp": None, "always": lambda: True, "never": lambda: False}[cfg.clock_trust]
    inner = SystemClock() if probe is None else SystemClock(probe=probe)
    return GuardedClock(inner)


def make_indicator(cfg: GateConfig) -> Indicator:
    if cfg.indicator == "console":
        return ConsoleIndicator()
    if cfg.indicator == "file":  # GateConfig makes sure indicator_file is set
        return FileIndicator(cfg.indicator_file)
    if cfg.indicator == "gpio":
        return GpioIndicator(cfg.gpio, console=ConsoleIndicator())
    return NullIndicator()


def load_rulebook(cfg: GateConfig):
    """The gate rulebook of ``rulebook`` (or the built-in default). A missing file: ``ConfigError``
    naming ``$.rulebook`` in ``edge check-config``'s words (``app.checkconfig._exists``)."""
    from edge.rules.rulebook import GateRulebooks, load_gate_rulebook

    if cfg.rulebook and "\x00" not in cfg.rulebook and not Path(cfg.rulebook).is_file():
        raise ConfigError(f"file not found: {cfg.rulebook}", key="$.rulebook")
    return load_gate_rulebook(cfg.rulebook) if cfg.rulebook else GateRulebooks()


class GateService:
    """Everything one gate process owns. The constructor takes the state directory's lock and opens
    the files (raises ``StoreError``, ``StoreLocked`` after ``cfg.lock_wait_s`` of a lock held by
    another process: ``gate.lock`` while another gate service runs on the same ``state_dir``, ``StartCancelled``
    when ``stop`` is set during that wait, ``ConfigError``); ``run`` blocks until stopped.

    ``stop``: an event set by the caller's SIGTERM/SIGINT handlers during start-up (None: a lock
    is waited for without a way to cancel it)."""

    def __init__(self, cfg: GateConfig, *, clock=None, indicator: Indicator | None = None,
                 stop: threading.Event | None = None) -> None:
        self.cfg = cfg
        self._stop = stop if stop is not None else threading.Event()
        self._stop_asked: tuple[float, int] | None = None  # (monotonic s, signal) of the first stop asked
        self._readers_closed_s: float | None = None  # seconds the readers' close took in the handler
        self._stoppers: list[threading.Thread] = []  # the handler's threads (_stop_signalled)
        self.boot_id = str(uuid.uuid4())
        self.rulebook = load_rulebook(cfg)
        self.clock = clock or make_clock(cfg)
        if hasattr(self.clock, "raise_floor"):  # G13: before the first version is implausible
            self.clock.raise_floor(self.rulebook.first_start)
        key = read_secret(cfg.key_file, what="gate HMAC key")
        state = Path(cfg.state_dir)
        tz = self.rulebook.version[-1].port_timezone
        first = time.monotonic()
        deadline = first + cfg.lock_wait_s  # one budget for the three (systemd: TimeoutStartSec)
        self.state_lock = wait_unlocked(lambda: StateDirLock.take(state), deadline=deadline, stop=stop,
                                        started=first)
        try:
            self._open(cfg, key=key, tz=tz, indicator=indicator, stop=stop, first=first, deadline=deadline)
        except BaseException:
            self.state_lock.release()
            raise

    def _open(self, cfg: GateConfig, *, key: bytes, tz, indicator: Indicator | None,
              stop: threading.Event | None, first: float, deadline: float) -> None:
        """Everything after the state directory lock: store, journal, checks, seed, recovery,
        readers, sync. Raises as the constructor says (which then gives the lock back)."""
        state = Path(cfg.state_dir)
        self._open_files(cfg, state, key=key, tz=tz, stop=stop, first=first, deadline=deadline)
        self._check_store_not_ahead()
        self._raise_clock_floors()
        self._alert_quarantined_store()
        if cfg.seed is not None and self.store.versions()["roster"][0] == 0:
            self.store.load_csv_files(cfg.seed.workers, cfg.seed.cards, cfg.seed.escala,
                                      at=self.clock.now().wall)
        self._recover_loop(cfg, state, indicator)
        self._open_readers(cfg)
        self.sync = self._make_sync(cfg, state) if cfg.mqtt is not None else None

    def _open_files(self, cfg: GateConfig, state: Path, *, key: bytes, tz, stop: threading.Event | None,
                    first: float, deadline: float) -> None:
        """The store, then the journal (signed with the gate's key, ``edge.signing``), each through
        ``wait_unlocked`` on the lock budget; the store is closed again if the journal fails."""
        self.store = wait_unlocked(
            lambda: Store(state / "store.db", gate_id=cfg.gate_id, ship=cfg.ship, boot_id=self.boot_id, tz=tz),
            deadline=deadline, stop=stop, started=first)
        from edge.signing import load_or_create

        try:
            signer = load_or_create(state)
            self.journal = wait_unlocked(
                lambda: Journal(state / "journal.db", port=cfg.port, gate_id=cfg.gate_id, key=key,
                                boot_id=self.boot_id, clock=self.clock, signer=signer),
                deadline=deadline, stop=stop, started=first)
        except BaseException:
            self.store.close()
            raise

    def _check_store_not_ahead(self) -> None:
        """A store whose ``applied_seq`` is ahead of the journal's last seq is refused: both files
        closed, ``StoreError`` naming the file to move aside."""
        if self.store.applied_seq > self.journal.last_seq():  # a store ahead of its journal
            problem = (f"store {self.store.path}: applied_seq {self.store.applied_seq} is ahead of the "
                       f"journal's last seq {self.journal.last_seq()}; move the file aside")
            self.journal.close()
            self.store.close()
            raise StoreError(problem)

    def _raise_clock_floors(self) -> None:
        """G13: the journal's newest trusted event is a floor for the wall clock, the office's stamp
        on the copies a floor for its estimate (clocks without them are left alone)."""
        last_trusted = self.journal.last_trusted_at()
        if last_trusted is not None and hasattr(self.clock, "raise_floor"):
            self.clock.raise_floor(last_trusted)  # G13: a wall clock before it is implausible
        stamp = self.store.data_updated_at()
        if stamp is not None and hasattr(self.clock, "hint"):
            self.clock.hint(stamp)  # G13: an estimate never goes below the office's stamp

    def _alert_quarantined_store(self) -> None:
        """A STORE_QUARANTINED alert (high priority) when the store was quarantined at open."""
        if self.store.quarantined_to is not None:
            self.journal.append(AlertPayload(
                code="STORE_QUARANTINED",
                detail=f"store quarantined to {self.store.quarantined_to.name}; "
                       f"reason={self.store.quarantine_reason!r}; copies empty until the office resends",
            ), now=self.clock.now(), priority=PRIORITY_HIGH)

    def _recover_loop(self, cfg: GateConfig, state: Path, indicator: Indicator | None) -> None:
        """The gate loop (no readers yet), the rulebook in force journaled, then the journal
        re-applied to the store (``GateLoop.recover``); a ``StoreError`` there closes both files."""
        self.loop = GateLoop(readers=[], store=self.store, journal=self.journal, clock=self.clock,
                             indicator=indicator or make_indicator(cfg), rulebook=self.rulebook,
                             lang=cfg.lang, directions=cfg.directions())
        from edge.rulebook_record import journal_rulebook

        # the rulebook in force, journaled when it changed; the recovery below applies it to the
        # store like any other journaled event
        journal_rulebook(self.journal, state, cfg.rulebook, self.rulebook.name, self.clock.now())
        try:
            self.loop.recover()  # before any read; a store that cannot take the journal stops here
        except StoreError:
            self.journal.close()
            self.store.close()
            raise

    def _open_readers(self, cfg: GateConfig) -> None:
        """The readers' health (their "since" by the gate's clock) and the readers themselves."""
        from edge.reader_health import ReaderHealth
        from edge.readers import open_readers

        self.loop.reader_health = ReaderHealth(  # the readers' "since" by the gate's clock (the demo's: scripted)
            ((r.id, r.kind) for r in cfg.readers), clock=lambda: self.clock.now().wall.timestamp())
        self.loop.readers = open_readers(cfg.readers, on_status=self.loop.on_status)

    def _make_sync(self, cfg: GateConfig, state: Path):
        """The MQTT link (``edge.sync.Sync``, not started) with the photos' store for the screen,
        the office's keys and the office's enrol mode wired to the loop."""
        from edge.sync import Sync  # the MQTT teammate's module; only imported when configured

        from edge.sync.photos import PhotoStore

        photos = PhotoStore(state, max_bytes=cfg.display.photo_max_bytes)  # for the screen only
        from edge.config import office_key, office_next_key

        sync = Sync(cfg.mqtt, self.journal, self.store, port=cfg.port, gate_id=cfg.gate_id,
                    boot_id=self.boot_id, settings=cfg.sync, now=self.clock.now, photos=photos,
                    office_key=office_key(cfg), office_next_key=office_next_key(cfg),
                    readers=self.loop.reader_health)
        sync.on_enrol = self.loop.enrol_command  # issue 34: the office's enrol mode
        return sync

    def run(self) -> None:
        from portgate.notify import Notifier

        notifier = Notifier()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda signum, _frame: self._stop_signalled(signum))
        if self._stop.is_set():  # asked during start-up: no loop, no reader read
            log.info("gate_stopped_before_start", gate_id=self.cfg.gate_id)
            self.loop.stop()  # closes the readers
            self.close()
            return
        structlog.contextvars.bind_contextvars(gate_id=self.cfg.gate_id, port=self.cfg.port)
        from edge import metrics
        from portgate.metrics import serve

        serve(self.cfg.metrics_port, self.cfg.metrics_addr)
        metrics.watch_gate(self.cfg.gate_id, self.journal, self.clock, self.sync)
        if self.sync is not None:
            self.sync.start()
        from edge.heartbeat import Heartbeat

        journal = self.journal
        self.heartbeat = Heartbeat(self.cfg.state_dir, self.sync.connected.is_set if self.sync else None,
                                   disk_full=lambda: any(journal.refused_pending().values()),
                                   readers=self.loop.reader_health.snapshot, enrol=self.loop.enrol_state)
        self.loop.on_unjournaled = self.heartbeat.note_refused
        self.heartbeat.start()
        frozen = freeze_start_up()  # a full gc then walks only what the loop makes (gctune)
        log.info("gate_started", gate_id=self.cfg.gate_id, boot_id=self.boot_id,
                 last_seq=self.journal.last_seq(), readers=[r.reader_id for r in self.loop.readers],
                 mqtt=self.sync is not None, gc_frozen=frozen)
        notifier.ready(f"gate {self.cfg.gate_id} seq {self.journal.last_seq()}")
        try:
            self.loop.run(watchdog=notifier.watchdog)
        finally:
            notifier.stopping()
            for stopper in self._stoppers:  # the readers' close done (it does not block): its seconds
                stopper.join(5)
            asked = self._stop_asked
            log.info("gate_stopping", signal=signal.Signals(asked[1]).name if asked else None,
                     readers_closed_s=self._readers_closed_s,
                     loop_ended_s=round(time.monotonic() - asked[0], 3) if asked else None)
            self.close()

    def _stop_signalled(self, signum: int) -> None:
        """The SIGTERM/SIGINT handler: ``_stop_now`` on a thread of its own. The handler runs in the
        main thread between two bytecodes of the loop, which may hold the inbox queue's lock (a
        ``Queue.get`` between its wake-up and its return): putting the stop on the inbox from the
        handler itself waited for that lock forever (a SIGTERM'd gate that never ended, no log line,
        in a fresh-clone run); from another thread it waits for the loop to let it go."""
        stopper = threading.Thread(target=self._stop_now, args=(signum,), name="gate-stop", daemon=True)
        self._stoppers.append(stopper)
        stopper.start()

    def _stop_now(self, signum: int | None = None) -> None:
        """Note when (for the stop's log), stop the loop and the readers (``_stop_signalled``)."""
        first = self._stop_asked is None
        if first:
            self._stop_asked = (time.monotonic(), signum or signal.SIGTERM)
        self._stop.set()
        self.loop.stop()
        if first:  # the readers' close() is in the loop's stop: its seconds go in gate_stopping
            self._readers_closed_s = round(time.monotonic() - self._stop_asked[0], 3)

    def close(self) -> None:
        """Stop the heartbeat, the MQTT link (``Sync.stop``), close the journal, the store and the
        state directory's lock, in that order. Each step is logged as it ends (``gate_stop_step``:
        ``step``, ``seconds``; the link's with ``pump_ended`` and ``offline_acked``), then
        ``gate_stopped`` with the seconds of the whole close and since the signal: a slow stop says
        where it waited (docs/operations.md, "Stopping a gate")."""
        t0 = time.monotonic()
        heartbeat = getattr(self, "heartbeat", None)
        steps = [("heartbeat", heartbeat.stop if heartbeat is not None else None),
                 ("sync", self.sync.stop if self.sync is not None else None), ("journal", self.journal.close),
                 ("store", self.store.close), ("state_lock", self.state_lock.release)]
        for name, step in steps:
            if step is None:
                continue
            t = time.monotonic()
            said = step()
            log.info("gate_stop_step", step=name, seconds=round(time.monotonic() - t, 3),
                     **(said if isinstance(said, dict) else {}))
        asked = self._stop_asked
        log.info("gate_stopped", close_s=round(time.monotonic() - t0, 3),
                 since_signal_s=round(time.monotonic() - asked[0], 3) if asked else None)
