"""Serial RFID readers (pyserial): EM4100/RDM6300 framed readers and line-oriented readers.

Both open ``device`` (a path such as ``/dev/serial/by-id/...`` or a udev symlink), turn bytes into
UIDs, publish a UID only once an identical repeat confirms it within ``confirm_ms`` (default 150 ms
for EM4100 readers, which repeat every ~65 ms while a card is held; off for line readers; 0 = off),
give one read per card presentation (``debounce_ms``, default 500 ms) and recover by
themselves: when the device disappears (USB unplug: pyserial raises ``SerialException``/``OSError``)
or stays silent longer than ``watchdog_s`` (off by default: most readers are silent when idle), the
port is closed and reopened with back-off. Faults go to ``on_status`` and the metrics
(``drivers.metrics``). ``close()`` from another thread makes ``reads()`` return within ~50 ms.

The port is opened for this reader alone (pyserial's ``exclusive``: an ``flock`` on the device): a
second gate process, or any program that locks serial ports the same way, cannot open it while the
reader has it; that side is told ``absent`` + ``open_failed`` ("em uso por outro processo") and
retries with back-off. A program that reads the port without locking it takes bytes from under the
reader: pyserial then sees "readiness to read but returned no data" on a device still there. That
is not an unplug: the port stays open (a reopen would flush what is waiting) and each time is a
``shared_port`` fault reported through ``on_status`` (state stays ``ready``). No frame is lost
silently: bytes outside a frame (a frame whose STX was taken) and a partial frame dropped at a
reopen are counted as ``bad_frame``, as malformed frames are.
"""

from __future__ import annotations

import abc
import datetime as dt
import errno
import select
import threading
import time
from collections.abc import Iterator

import serial

from drivers.base import CardRead, FaultKind, ReaderState, StatusCallback
from drivers.debounce import Debouncer, RepeatConfirm
from drivers.em4100 import Frame, FrameParser
from drivers.metrics import Backoff, StatusReporter
from portgate.errors import BadInput
from portgate.records import ReaderKind
from portgate.uid import UidFormat, read_uid

_READ_TIMEOUT_S = 0.05
MAX_LINE = 64
#: "no data" faults in a row on a device that is still there before it is treated as lost anyway
MAX_SHARED_IN_A_ROW = 50
#: a ``shared_port`` fault reaches ``on_status`` (an event) at most once in this many seconds
SHARED_REPORT_S = 10.0


class _SerialReader(abc.ABC):
    """Open/reopen/watchdog loop shared by the serial reader families; subclasses decode bytes."""

    _logger = "drivers.serial"
    DEFAULT_CONFIRM_MS = 0

    def __init__(
        self,
        reader_id: str,
        kind: ReaderKind | str,
        device: str,
        *,
        baudrate: int = 9600,
        debounce_ms: int = 500,
        confirm_ms: int | None = None,
        watchdog_s: float | None = None,
        backoff: Backoff | None = None,
        on_status: StatusCallback | None = None,
    ) -> None:
        self.reader_id, self.kind, self.device = reader_id, ReaderKind(kind), device
        self.baudrate = baudrate
        self.confirm_ms = self.DEFAULT_CONFIRM_MS if confirm_ms is None else confirm_ms
        if not isinstance(self.confirm_ms, int) or isinstance(self.confirm_ms, bool) or self.confirm_ms < 0:
            raise ValueError(f"confirm_ms must be a whole number of ms >= 0, got {confirm_ms!r}")
        self._confirm = RepeatConfirm(self.confirm_ms * 1_000_000)
        self.watchdog_ns = int(watchdog_s * 1e9) if watchdog_s else None
        self._debouncer = Debouncer(debounce_ms * 1_000_000)
        self._backoff = backoff or Backoff(0.05, 2.0)
        self._closed = threading.Event()
        self._port: serial.Serial | None = None
        self._lock = threading.Lock()
        self._shared_reported: float | None = None  # monotonic s of the last shared_port status
        self.reporter = StatusReporter(reader_id, on_status, self._logger)

    # -- to be provided by subclasses ------------------------------------------------------------
    @abc.abstractmethod
    def _reset_decoder(self) -> None:
        """Forget any partial frame or line (after the port was reopened)."""

    @abc.abstractmethod
    def _decode(self, data: bytes) -> list[str]:
        """Canonical UIDs completed by ``data``."""

    def _partial(self) -> bytes:
        """The bytes of a frame or line begun and not complete (dropped when the port is reopened)."""
        return b""

    # -- Reader interface ------------------------------------------------------------------------
    def reads(self) -> Iterator[CardRead]:
        """Yield one ``CardRead`` per card presentation until ``close()``; never raises for device
        faults (they are reported and the port is reopened)."""
        while not self._closed.is_set():
            port = self._open()
            if port is None:
                return
            try:
                yield from self._pump(port)
            finally:
                with self._lock:
                    self._port = None
                self._count_dropped(port)
                port.close()

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            port = self._port
        if port is not None:
            try:
                port.cancel_read()
            except (OSError, AttributeError, serial.SerialException):
                pass

    def __enter__(self) -> _SerialReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------------------
    def _open(self) -> serial.Serial | None:
        while not self._closed.is_set():
            try:
                port = serial.Serial(self.device, self.baudrate, timeout=_READ_TIMEOUT_S, exclusive=True)
            except (serial.SerialException, OSError) as exc:
                if getattr(exc, "errno", None) in (errno.EAGAIN, errno.EWOULDBLOCK):  # the flock is held
                    detail = f"leitor serial {self.device} em uso por outro processo (outro portão ou programa)"
                else:
                    detail = f"leitor serial {self.device} indisponível: {exc}"
                if self.reporter.state is not ReaderState.ABSENT or self.reporter.detail != detail:
                    self.reporter.status(ReaderState.ABSENT, detail, FaultKind.OPEN_FAILED)
                if self._backoff.wait(self._closed):
                    return None
                continue
            with self._lock:
                self._port = port
            if self._closed.is_set():
                port.close()
                return None
            self._backoff.reset()
            self._reset_decoder()
            self._confirm.reset()
            self._debouncer.reset()
            self.reporter.status(ReaderState.READY, f"leitor serial {self.device} aberto")
            return port
        return None

    def _pump(self, port: serial.Serial) -> Iterator[CardRead]:
        last_rx = time.monotonic_ns()
        shared = 0  # "no data" faults in a row on a device still there
        while not self._closed.is_set():
            try:
                data = port.read(max(1, port.in_waiting))
            except (serial.SerialException, OSError, TypeError) as exc:
                # TypeError: pyserial on a port closed by cancel/close from another thread
                if self._closed.is_set():
                    return
                if isinstance(exc, serial.SerialException) and shared < MAX_SHARED_IN_A_ROW and still_there(port):
                    shared += 1
                    self._shared_port(exc)
                    continue
                self.reporter.status(
                    ReaderState.FAULT, f"leitor serial {self.device} desconectado: {exc}",
                    FaultKind.DEVICE_LOST,
                )
                return
            now = time.monotonic_ns()
            if data:
                shared = 0
            self._count_unconfirmed(now)
            if not data:
                if self.watchdog_ns is not None and now - last_rx > self.watchdog_ns:
                    self.reporter.status(
                        ReaderState.FAULT,
                        f"leitor serial {self.device} em silêncio há mais de "
                        f"{self.watchdog_ns / 1e9:g} s; reabrindo",
                        FaultKind.SILENT,
                    )
                    return
                continue
            last_rx = now
            for uid in self._decode(data):
                if not self._confirm.seen(uid, now):
                    continue  # not (yet) repeated: an isolated frame is noise (counted once it lapses)
                if self._debouncer.seen(uid, now):
                    yield CardRead(uid, self.reader_id, self.kind, now, dt.datetime.now(dt.UTC))

    def _count_unconfirmed(self, now: int) -> None:
        """Count a good frame dropped because no repeat came within ``confirm_ms`` (``bad_frame``,
        metric and log): noise, or a card shown too briefly or repeated too slowly, never silent.
        Called on every turn of the read loop (at least every 50 ms)."""
        for uid in self._confirm.unconfirmed(now):
            self.reporter.count(FaultKind.BAD_FRAME, f"cartão {uid} lido uma vez, sem repetição em {self.confirm_ms} ms: "
                                "descartado (ruído, ou cartão mostrado rápido demais)")

    def _shared_port(self, exc: Exception) -> None:
        """Another program took bytes from the port: counted and logged each time, reported through
        ``on_status`` (an event of the gate) at most once per ``SHARED_REPORT_S``."""
        now = time.monotonic()
        detail = f"leitor serial {self.device}: outro programa lê a mesma porta e tira bytes deste leitor ({exc})"
        if self._shared_reported is None or now - self._shared_reported >= SHARED_REPORT_S:
            self._shared_reported = now
            self.reporter.status(ReaderState.READY, detail, FaultKind.SHARED_PORT)
        else:
            self.reporter.count(FaultKind.SHARED_PORT, detail)

    def _count_dropped(self, port: serial.Serial) -> None:
        """Count what a close drops (a reopen, a fault, ``close()``): the frame or line begun and the
        bytes still waiting in the port, as ``bad_frame`` (metric and log): never lost silently."""
        partial = self._partial()
        try:
            waiting = port.in_waiting if port.is_open else 0
        except (serial.SerialException, OSError, TypeError):
            waiting = 0  # the device is gone: nothing can be read from it any more
        if partial or waiting:
            self.reporter.count(FaultKind.BAD_FRAME, f"porta fechada com {len(partial)} bytes de um quadro "
                                f"incompleto ({partial!r}) e {waiting} bytes não lidos: descartados")
        self._reset_decoder()


def still_there(port: serial.Serial) -> bool:
    """True when ``port``'s device is still open and not hung up (an unplugged USB adapter and a
    pseudo-terminal whose other side closed report POLLHUP); False on any doubt."""
    try:
        poller = select.poll()
        poller.register(port.fd, select.POLLIN)
        events = poller.poll(0)
    except (OSError, TypeError, ValueError):
        return False
    return not any(ev & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _fd, ev in events)


class Em4100SerialReader(_SerialReader):
    """RDM6300-style 125 kHz reader: EM4100 frames (``drivers.em4100``) at 9600 baud.

    Bad frames (checksum, zero id, malformed) are dropped and counted as ``bad_frame`` faults in
    the metric and the log; they never become a read. A byte that is not a hex digit inside the
    frame (a non-ASCII byte included) makes it malformed: its checksum cannot be checked, so it is
    line noise, never a card (the reader repeats a held card's frame every ~65 ms). A good frame becomes a read only when the
    same frame comes again within ``confirm_ms`` (default 150): the reader repeats while the card is
    held, an isolated frame is noise.
    """

    _logger = "drivers.serial_rfid.em4100"
    DEFAULT_CONFIRM_MS = 150

    def _reset_decoder(self) -> None:
        self._parser = FrameParser()

    def _partial(self) -> bytes:
        return self._parser.pending

    def _decode(self, data: bytes) -> list[str]:
        uids = []
        runs = self._parser.stray_runs
        items = self._parser.feed(data)
        if self._parser.stray_runs > runs:  # a frame whose STX never came (or line noise): one per run
            self.reporter.count(FaultKind.BAD_FRAME, "bytes fora de um quadro descartados (STX perdido ou ruído)")
        for item in items:
            if isinstance(item, Frame):
                uids.append(item.uid)
            else:
                self.reporter.count(FaultKind.BAD_FRAME, f"{item.reason}: {item.raw!r}")
        return uids


class LineSerialReader(_SerialReader):
    """A reader that prints the card number and a newline (CR, LF or CRLF).

    The number is read in the reader's declared ``uid_format`` (``portgate.uid.read_uid``: a whole
    UID, or ``<form>:<hex>`` for the forms that carry only its low bits). A line that does not fit
    is dropped and counted as ``bad_number``, a line holding a byte that is not ASCII too (noise on
    the line; the log's detail shows that byte as ``?``); a line longer than 64 bytes is treated as noise. An
    all-zero number (``0000000000``: a reader's "no card" or a line glitch) is dropped and counted
    as ``bad_number``, as the EM4100 frame parser drops an all-zero id.
    """

    _logger = "drivers.serial_rfid.line"

    def __init__(
        self, reader_id: str, kind: ReaderKind | str, device: str, *,
        uid_format: UidFormat | str, **kwargs: object,
    ) -> None:
        super().__init__(reader_id, kind, device, **kwargs)  # type: ignore[arg-type]
        self.uid_format = UidFormat(uid_format)

    def _reset_decoder(self) -> None:
        self._line = bytearray()

    def _partial(self) -> bytes:
        return bytes(self._line)

    def _decode(self, data: bytes) -> list[str]:
        uids = []
        for byte in data:
            if byte not in (0x0A, 0x0D):
                if len(self._line) < MAX_LINE:
                    self._line.append(byte)
                else:
                    self._line.clear()
                    self.reporter.count(FaultKind.BAD_NUMBER, "linha longa demais")
                continue
            # a byte that is not ASCII reads as '?', as the watchman's screen shows it; no form has '?'
            text = self._line.decode("ascii", "replace").replace("\ufffd", "?").strip()
            self._line = bytearray()
            if not text:
                continue
            try:
                uid = read_uid(text, self.uid_format).text
            except BadInput as exc:
                self.reporter.count(FaultKind.BAD_NUMBER, str(exc))
                continue
            if all_zero(uid):
                self.reporter.count(FaultKind.BAD_NUMBER, f"número zerado: {text!r}")
                continue
            uids.append(uid)
        return uids


def all_zero(uid: str) -> bool:
    """True for a read whose number is all zeros (``00000000``, ``decimal10:00000000``): no card."""
    return set(uid.rsplit(":", 1)[-1]) <= {"0"}
