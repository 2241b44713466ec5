"""The gate's clock: wall time (aware UTC), monotonic ns, and whether the wall clock is trusted.

``SystemClock.trusted()`` asks the kernel, via ``adjtimex(2)`` (read-only, ``modes = 0``) through
ctypes, whether the clock is synchronised: the same test systemd's ``timedatectl show -p
NTPSynchronized`` makes (return value not ``TIME_ERROR`` and ``STA_UNSYNC`` clear in ``status``). It
is cached for 10 s. A Pi without RTC boots with a 1970 or stale clock and ``STA_UNSYNC`` set until
NTP (chrony, systemd-timesyncd) has synchronised it, so early events are flagged CLOCK_UNTRUSTED (G8);
``GuardedClock`` replaces an implausible wall reading by the gate's estimate (G13).
On a platform without ``adjtimex`` the clock is reported untrusted.

``FakeClock`` is the test double: set or advance wall and monotonic time by hand.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import datetime as dt
import threading
import time
from typing import Protocol

from edge.rules.model import Now

TIME_ERROR = 5
STA_UNSYNC = 0x0040


class Clock(Protocol):
    def wall(self) -> dt.datetime: ...

    def mono_ns(self) -> int: ...

    def trusted(self) -> bool: ...

    def now(self) -> Now: ...


class _Timex(ctypes.Structure):
    # struct timex from <sys/timex.h> (Linux, 64-bit and 32-bit: longs are native size); the tail
    # is padding reserved by the kernel, so the buffer is generously sized.
    _fields_ = [
        ("modes", ctypes.c_uint),
        ("offset", ctypes.c_long),
        ("freq", ctypes.c_long),
        ("maxerror", ctypes.c_long),
        ("esterror", ctypes.c_long),
        ("status", ctypes.c_int),
        ("constant", ctypes.c_long),
        ("precision", ctypes.c_long),
        ("tolerance", ctypes.c_long),
        ("time_sec", ctypes.c_long),
        ("time_usec", ctypes.c_long),
        ("tick", ctypes.c_long),
        ("ppsfreq", ctypes.c_long),
        ("jitter", ctypes.c_long),
        ("shift", ctypes.c_int),
        ("stabil", ctypes.c_long),
        ("jitcnt", ctypes.c_long),
        ("calcnt", ctypes.c_long),
        ("errcnt", ctypes.c_long),
        ("stbcnt", ctypes.c_long),
        ("tai", ctypes.c_int),
        ("_pad", ctypes.c_int * 16),
    ]


def ntp_synchronised() -> bool:
    """True if the kernel says the clock is synchronised (see module doc). Never raises."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        tx = _Timex()
        state = libc.adjtimex(ctypes.byref(tx))
    except (OSError, AttributeError):
        return False
    return state not in (-1, TIME_ERROR) and not (tx.status & STA_UNSYNC)


class SystemClock:
    """The real clock. ``trusted()`` is cached for ``cache_s`` seconds (adjtimex is cheap but the
    hot path calls it on every read)."""

    def __init__(self, *, cache_s: float = 10.0, probe=ntp_synchronised) -> None:
        self._cache_ns = int(cache_s * 1e9)
        self._probe = probe
        self._checked = -1 << 62
        self._trusted = False
        self._lock = threading.Lock()

    def wall(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC)

    def mono_ns(self) -> int:
        return time.monotonic_ns()

    def trusted(self) -> bool:
        now = time.monotonic_ns()
        with self._lock:
            if now - self._checked > self._cache_ns:
                self._trusted = self._probe()
                self._checked = now
            return self._trusted

    def now(self) -> Now:
        return Now(wall=self.wall(), mono_ns=self.mono_ns(), clock_trusted=self.trusted())


class FakeClock:
    """A clock for tests and replays: starts at ``wall`` (aware) and ``mono_ns``; ``advance`` moves
    both; ``set_wall`` moves only the wall clock (e.g. backwards, to test a clock jump)."""

    def __init__(self, wall: dt.datetime, *, mono_ns: int = 1_000_000_000, trusted: bool = True) -> None:
        if wall.tzinfo is None:
            raise ValueError("FakeClock needs an aware datetime")
        self._wall = wall.astimezone(dt.UTC)
        self._mono = mono_ns
        self.is_trusted = trusted
        self._lock = threading.Lock()

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._wall += dt.timedelta(seconds=seconds)
            self._mono += int(seconds * 1e9)

    def set_wall(self, wall: dt.datetime) -> None:
        with self._lock:
            self._wall = wall.astimezone(dt.UTC)

    def wall(self) -> dt.datetime:
        return self._wall

    def mono_ns(self) -> int:
        return self._mono

    def trusted(self) -> bool:
        return self.is_trusted

    def now(self) -> Now:
        with self._lock:
            return Now(wall=self._wall, mono_ns=self._mono, clock_trusted=self.is_trusted)


class GuardedClock:
    """Wraps a clock and never lets an implausible wall clock decide (G8, G13).

    A wall reading is implausible when it is before ``MIN_PLAUSIBLE`` (2000: a Pi without RTC boots
    in 1970), before the gate's last trusted time (``last_trusted``: the newest trusted event in its
    journal, given at start-up or later by ``raise_floor``), before ``not_before`` (the start of
    the rulebook's first version), or more than ``tolerance_s`` before the highest wall reading of
    this process (the clock fell back while running). Then ``now()`` returns
    ``Now(estimated=True, clock_trusted=False)`` whose ``wall`` is the gate's estimate: the last
    plausible reading (or the floor, before any) plus the monotonic time elapsed since it, and
    never before the floor or a ``hint`` (the office's stamp on the local copies, plus the
    monotonic time since the gate learned it). The
    decision and the journal use the estimate; the office places the event by its boot id, seq and
    monotonic time and never pays from it (``central.ledger.shifts.place_times``). ``last_raw``
    keeps the wall clock as read, for the CLOCK_UNTRUSTED alert.

    A plausible reading is trusted when the inner clock trusts itself (NTP synchronised); trust
    returns as soon as the wall clock is plausible again. Thread-safe.
    """

    MIN_PLAUSIBLE = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)

    def __init__(self, inner: Clock, *, tolerance_s: float = 1.0, last_trusted: dt.datetime | None = None,
                 not_before: dt.datetime | None = None) -> None:
        self.inner = inner
        self._tolerance = dt.timedelta(seconds=tolerance_s)
        self._floor = self.MIN_PLAUSIBLE
        self._high: dt.datetime | None = None
        self._anchor: tuple[dt.datetime, int] | None = None  # last plausible (wall, mono)
        self._start_mono = inner.mono_ns()
        self._lock = threading.Lock()
        self._hint: tuple[dt.datetime, int] | None = None  # (stamp, mono when learned)
        self.last_raw: dt.datetime | None = None
        for floor in (last_trusted, not_before):
            if floor is not None:
                self.raise_floor(floor)

    @property
    def floor(self) -> dt.datetime:
        """The earliest wall time this clock accepts as plausible (aware UTC)."""
        return self._floor

    def raise_floor(self, at: dt.datetime) -> None:
        """Never accept a wall time before ``at`` (aware) again: the gate's last trusted time, or
        the start of its rulebook's first version."""
        at = at.astimezone(dt.UTC)
        with self._lock:
            if at > self._floor:
                self._floor = at

    def hint(self, at: dt.datetime) -> None:
        """A time known to have passed (aware), e.g. the office's stamp on the local copies: the
        estimate never goes below it. Unlike ``raise_floor`` it never makes a reading untrusted
        (another clock's stamp may be a few seconds ahead of this one)."""
        at = at.astimezone(dt.UTC)
        mono = self.inner.mono_ns()
        with self._lock:
            if self._hint is None or at > self._hint[0] + dt.timedelta(
                    microseconds=max(0, mono - self._hint[1]) // 1000):
                self._hint = (at, mono)  # at least the monotonic time since then has passed too

    def now(self) -> Now:
        now = self.inner.now()
        with self._lock:
            self.last_raw = now.wall
            low = self._floor if self._high is None else max(self._floor, self._high)
            if now.wall >= low - self._tolerance:
                self._anchor = (now.wall, now.mono_ns)
                if self._high is None or now.wall > self._high:
                    self._high = now.wall
                return now
            base, base_mono = self._anchor or (self._floor, self._start_mono)
            elapsed = dt.timedelta(microseconds=max(0, now.mono_ns - base_mono) // 1000)
            wall = max(base + elapsed, self._floor)
            if self._hint is not None:
                wall = max(wall, self._hint[0] + dt.timedelta(
                    microseconds=max(0, now.mono_ns - self._hint[1]) // 1000))
        return Now(wall=wall, mono_ns=now.mono_ns, clock_trusted=False, estimated=True)
