"""The reader interface (STYLE.md 5): one method that yields ``CardRead``, ``close()``, context manager.

A ``CardRead`` is what a reader saw: the canonical UID, the reader's id and kind (``control`` for the
control-card reader, ``badge`` for the badge reader), the monotonic clock in nanoseconds
(``time.monotonic_ns()``) and the wall clock as an aware UTC datetime, both taken when the read
completed. Readers also report faults and recoveries through an optional ``on_status`` callback.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Callable, Iterator
from typing import Protocol, runtime_checkable

from portgate.records import ReaderKind


@dataclasses.dataclass(frozen=True, slots=True)
class CardRead:
    """One card presentation seen by one reader.

    ``uid``: canonical upper-case hex (``portgate.uid.canonical_uid``). ``mono_ns``: monotonic clock
    reading in ns. ``wall``: aware UTC datetime.
    """

    uid: str
    reader_id: str
    kind: ReaderKind
    mono_ns: int
    wall: dt.datetime
    data: bytes | None = None  # contents of the card's data file, when the reader is set to read one

    def __post_init__(self) -> None:
        if self.wall.tzinfo is None:
            raise ValueError("CardRead.wall must be an aware datetime")


class ReaderState(enum.StrEnum):
    """Reader lifecycle reported through ``on_status`` (faults become events and metrics)."""

    ABSENT = "absent"  # device or daemon not there; retrying with back-off
    READY = "ready"  # reader present, waiting for a card
    FAULT = "fault"  # an error happened; detail in the status message


class FaultKind(enum.StrEnum):
    """What went wrong (label ``kind`` of ``portgate_reader_faults_total``)."""

    OPEN_FAILED = "open_failed"  # device path missing / cannot be opened
    DEVICE_LOST = "device_lost"  # serial/input device vanished while in use (USB unplug)
    SILENT = "silent"  # no byte for longer than the watchdog: port reopened
    DAEMON_LOST = "daemon_lost"  # pcscd stopped or unreachable: new context with back-off
    READER_LOST = "reader_lost"  # a PC/SC reader was unplugged
    CARD_REMOVED = "card_removed"  # card left the field mid-transaction: no read
    UNSUPPORTED_CARD = "unsupported_card"  # GET DATA answered with a status word we do not accept
    PCSC_ERROR = "pcsc_error"  # any other PC/SC error code
    NO_DIGIT_KEYS = "no_digit_keys"  # the wedge's input node types no digits (wrong /dev/input node)
    BAD_FRAME = "bad_frame"  # serial frame with bad checksum, zero id or malformed (metric only)
    BAD_NUMBER = "bad_number"  # typed/printed number that does not fit uid_format (metric only)
    SHARED_PORT = "shared_port"  # another program reads the same serial port: bytes taken from us


@dataclasses.dataclass(frozen=True, slots=True)
class ReaderStatus:
    """A state change or a fault of one reader. ``fault`` is set when this status reports a fault
    (the state may still be READY, e.g. an unsupported card on a working reader). ``detail`` is a
    pt-BR message for the watchman's screen and the event stream."""

    reader_id: str
    state: ReaderState
    detail: str = ""
    fault: FaultKind | None = None


StatusCallback = Callable[[ReaderStatus], None]


@runtime_checkable
class Reader(Protocol):
    """A card reader. ``reads()`` blocks and yields reads until ``close()`` is called.

    ``reads()`` never raises a vendor exception: faults are reported via the status callback given to
    the constructor and the reader recovers by itself. ``close()`` may be called from another thread
    and makes ``reads()`` return.
    """

    reader_id: str
    kind: ReaderKind

    def reads(self) -> Iterator[CardRead]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Reader: ...

    def __exit__(self, *exc: object) -> None: ...
