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

import contextlib
import dataclasses
import datetime as dt
import glob
import os
import select
import threading
import time
from collections.abc import Iterator, Mapping, Sequence

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
MAIN_DIGITS = frozenset(getattr(ecodes, f"KEY_{d}") for d in range(10))
KEYPAD_DIGITS = frozenset(getattr(ecodes, f"KEY_KP{d}") for d in range(10))
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


def types_numbers(capabilities: Mapping[int, Sequence[object]]) -> bool:
    """True when an input node's capabilities (``InputDevice.capabilities()``: ``{EV_*: [codes]}``)
    hold the ten digits (main row or keypad) and an Enter key: what a card reader types with. A
    mouse, a power button or the "consumer control" node a keyboard reader also has do not."""
    keys = set(capabilities.get(ecodes.EV_KEY, ()))
    return (MAIN_DIGITS <= keys or KEYPAD_DIGITS <= keys) and bool(keys & ENTER_KEYS)


def number_typing_nodes(input_dir: str = "/dev/input") -> list[str]:
    """The input nodes under ``input_dir`` that can type a card number, as ``path (name)``, with
    their ``/dev/input/by-id`` link when there is one; nodes that cannot be opened are skipped."""
    import evdev

    by_id = {os.path.realpath(p): p for p in sorted(glob.glob(os.path.join(input_dir, "by-id", "*")))}
    found = []
    for path in sorted(evdev.list_devices(input_dir)):
        try:
            dev = evdev.InputDevice(path)
        except OSError:
            continue
        try:
            if types_numbers(dev.capabilities()):
                link = by_id.get(os.path.realpath(path))
                found.append(f"{link or path} ({dev.name})")
        finally:
            dev.close()
    return found


def wrong_node_text(device: str, nodes: Sequence[str]) -> str:
    """English one-line refusal for a node without digit keys, naming the nodes to use instead."""
    use = ("; use " + " or ".join(nodes)) if nodes else "; no input node here types digits"
    return f"input node {device} has no digit keys (not a card reader's keyboard node){use}"


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
        self._wrong_reported = False  # a node without digit keys is reported once, until READY

    def reads(self) -> Iterator[CardRead]:
        """Yield one ``CardRead`` per typed number until ``close()``; device faults are reported
        and the device reopened."""
        import evdev  # imported here: the module's pure part needs only ecodes

        while not self._closed.is_set():
            dev = None
            try:
                dev = evdev.InputDevice(self.device)
                if not types_numbers(dev.capabilities()):
                    dev.close()
                    self._wrong_node()
                    continue
                if self.grab:
                    dev.grab()
            except OSError as exc:
                if dev is not None:
                    with contextlib.suppress(OSError):
                        dev.close()
                if self.reporter.state is not ReaderState.ABSENT:
                    self.reporter.status(
                        ReaderState.ABSENT, f"leitor teclado {self.device} indisponível: {exc}",
                        FaultKind.OPEN_FAILED,
                    )
                self._backoff.wait(self._closed)
                continue
            self._backoff.reset()
            self._wrong_reported = False
            self.reporter.status(ReaderState.READY, f"leitor teclado {self.device} aberto")
            try:
                yield from self._pump(dev)
            finally:
                try:
                    dev.close()
                except OSError:
                    pass

    def check_device(self) -> str | None:
        """Why ``device`` cannot be this reader (an input node without digit keys, naming the nodes
        to use), or None: it types numbers, or it is absent now (``reads()`` waits for it)."""
        import evdev

        try:
            dev = evdev.InputDevice(self.device)
        except OSError:
            return None
        try:
            if types_numbers(dev.capabilities()):
                return None
        finally:
            dev.close()
        return wrong_node_text(self.device, number_typing_nodes())

    def _wrong_node(self) -> None:
        """The node types no digits: never READY; report once (naming the nodes to use), retry."""
        if not self._wrong_reported:
            self._wrong_reported = True
            nodes = number_typing_nodes()
            use = ("; use " + " ou ".join(nodes)) if nodes else ""
            self.reporter.status(
                ReaderState.FAULT,
                f"leitor teclado {self.device} não tem teclas de dígitos (não é o nó do leitor){use}",
                FaultKind.NO_DIGIT_KEYS,
            )
        self._backoff.wait(self._closed)

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
        if not uid.rpartition(":")[2].strip("0"):  # an all-zero number is a misread, never a card
            self.reporter.count(FaultKind.BAD_NUMBER, f"all-zero number {text!r}")
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
