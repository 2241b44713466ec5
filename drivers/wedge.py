"""Keyboard-wedge USB readers (python-evdev): the reader "types" the card number and Enter.

``KeyBurst`` is the pure key-event state machine (no device, no clock: times are passed in):
digits from the main row and the keypad (and hex letters A-F for readers that type hex) are
collected, modifiers (Shift, Ctrl, Alt, Meta, Caps/Num Lock) are ignored, Enter / keypad Enter ends
the number, and an incomplete burst is dropped when no key came for ``timeout_ns`` (a person typing
or a half-read card). ``WedgeReader`` opens ``/dev/input/...``, grabs it exclusively (so the numbers
do not reach a console), feeds key-down events to ``KeyBurst`` and reads each number in the
reader's declared ``uid_format`` (``portgate.uid.read_uid``). It reopens the device when it disappears (USB unplug).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import select
import threading
import time
from collections.abc import Iterator

from evdev import ecodes

from drivers.base import CardRead, FaultKind, ReaderState, StatusCallback
from drivers.debounce import Debouncer
from drivers.metrics import Backoff, StatusReporter
from portgate.errors import BadInput
from portgate.records import ReaderKind
from portgate.uid import UidFormat, read_uid

KEY_CHARS: dict[int, str] = {getattr(ecodes, f"KEY_{d}"): str(d) for d in range(10)}
KEY_CHARS.update({getattr(ecodes, f"KEY_KP{d}"): str(d) for d in range(10)})
KEY_CHARS.update({getattr(ecodes, f"KEY_{c}"): c for c in "ABCDEF"})
ENTER_KEYS = frozenset({ecodes.KEY_ENTER, ecodes.KEY_KPENTER})
MODIFIER_KEYS = frozenset(
    getattr(ecodes, f"KEY_{m}")
    for m in (
        "LEFTSHIFT RIGHTSHIFT LEFTCTRL RIGHTCTRL LEFTALT RIGHTALT LEFTMETA RIGHTMETA "
        "CAPSLOCK NUMLOCK SCROLLLOCK"
    ).split()
)
KEY_DOWN = 1  # evdev key event values: 0 up, 1 down, 2 autorepeat
MAX_CHARS = 32


@dataclasses.dataclass(frozen=True, slots=True)
class Dropped:
    """A burst that did not give a number: ``reason`` is ``timeout``, ``bad_key`` or ``too_long``."""

    reason: str
    text: str


class KeyBurst:
    """Pure state machine: ``feed(code, value, t_ns)`` -> the typed text on Enter, a ``Dropped``,
    or None (burst still going / key ignored). ``expire(t_ns)`` drops a burst idle too long."""

    def __init__(self, timeout_ns: int = 200_000_000) -> None:
        self.timeout_ns = timeout_ns
        self._chars: list[str] = []
        self._bad = False
        self._last_ns = 0

    def expire(self, t_ns: int) -> Dropped | None:
        if (self._chars or self._bad) and t_ns - self._last_ns > self.timeout_ns:
            return self._drop("timeout")
        return None

    def feed(self, code: int, value: int, t_ns: int) -> str | Dropped | None:
        if value != KEY_DOWN or code in MODIFIER_KEYS:
            return None
        stale = self.expire(t_ns)
        self._last_ns = t_ns
        if code in ENTER_KEYS:
            if self._bad or len(self._chars) > MAX_CHARS:
                return self._drop("bad_key" if self._bad else "too_long")
            text = "".join(self._chars)
            self._chars = []
            return text if text else stale
        char = KEY_CHARS.get(code)
        if char is None:
            self._bad = True
        else:
            self._chars.append(char)
        return stale

    def _drop(self, reason: str) -> Dropped:
        dropped = Dropped(reason, "".join(self._chars))
        self._chars, self._bad = [], False
        return dropped


class WedgeReader:
    """``Reader`` for a keyboard-wedge reader at ``device`` (``/dev/input/by-id/...-event-kbd``).

    ``uid_format``: the form the reader types (``portgate.uid.read_uid``). ``burst_timeout_ms``:
    gap after which an unfinished number is dropped. ``grab``: take the device exclusively.
    """

    def __init__(
        self,
        reader_id: str,
        kind: ReaderKind | str,
        device: str,
        *,
        uid_format: UidFormat | str,
        burst_timeout_ms: int = 200,
        debounce_ms: int = 500,
        grab: bool = True,
        backoff: Backoff | None = None,
        on_status: StatusCallback | None = None,
    ) -> None:
        self.reader_id, self.kind, self.device = reader_id, ReaderKind(kind), device
        self.uid_format, self.grab = UidFormat(uid_format), grab
        self._burst_timeout_ns = burst_timeout_ms * 1_000_000
        self._debouncer = Debouncer(debounce_ms * 1_000_000)
        self._backoff = backoff or Backoff(0.1, 3.0)
        self._closed = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        self.reporter = StatusReporter(reader_id, on_status, "drivers.wedge")

    def reads(self) -> Iterator[CardRead]:
        """Yield one ``CardRead`` per typed number until ``close()``; device faults are reported
        and the device reopened."""
        import evdev  # imported here: the module's pure part needs only ecodes

        while not self._closed.is_set():
            try:
                dev = evdev.InputDevice(self.device)
                if self.grab:
                    dev.grab()
            except OSError as exc:
                if self.reporter.state is not ReaderState.ABSENT:
                    self.reporter.status(
                        ReaderState.ABSENT, f"leitor teclado {self.device} indisponível: {exc}",
                        FaultKind.OPEN_FAILED,
                    )
                self._backoff.wait(self._closed)
                continue
            self._backoff.reset()
            self.reporter.status(ReaderState.READY, f"leitor teclado {self.device} aberto")
            try:
                yield from self._pump(dev)
            finally:
                try:
                    dev.close()
                except OSError:
                    pass

    def _pump(self, dev: object) -> Iterator[CardRead]:
        burst = KeyBurst(self._burst_timeout_ns)
        fd = dev.fileno()  # type: ignore[attr-defined]
        while not self._closed.is_set():
            ready, _, _ = select.select([fd, self._wake_r], [], [], 0.1)
            now = time.monotonic_ns()
            results: list[str | Dropped | None] = []
            if fd in ready:
                try:
                    events = list(dev.read())  # type: ignore[attr-defined]
                except BlockingIOError:
                    events = []
                except OSError as exc:
                    self.reporter.status(
                        ReaderState.FAULT, f"leitor teclado {self.device} desconectado: {exc}",
                        FaultKind.DEVICE_LOST,
                    )
                    return
                results = [
                    burst.feed(ev.code, ev.value, now) for ev in events if ev.type == ecodes.EV_KEY
                ]
            else:
                results = [burst.expire(now)]
            for result in results:
                if isinstance(result, Dropped):
                    self.reporter.count(FaultKind.BAD_NUMBER, f"{result.reason}: {result.text!r}")
                elif result:
                    read = self._convert(result, now)
                    if read is not None:
                        yield read

    def _convert(self, text: str, now: int) -> CardRead | None:
        try:
            uid = read_uid(text, self.uid_format).text
        except BadInput as exc:
            self.reporter.count(FaultKind.BAD_NUMBER, str(exc))
            return None
        if not self._debouncer.seen(uid, now):
            return None
        return CardRead(uid, self.reader_id, self.kind, now, dt.datetime.now(dt.UTC))

    def close(self) -> None:
        self._closed.set()
        os.write(self._wake_w, b"x")

    def __enter__(self) -> WedgeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
