"""PC/SC smart-card readers (pyscard's low-level ``smartcard.scard`` API).

Why not pyscard's ``CardMonitor``: its thread dies for good when pcscd restarts. This driver keeps
its own PC/SC context and loop:

- ``SCardGetStatusChange`` on the matching readers plus the ``\\\\?PnP?\\Notification`` pseudo-reader
  (reader plugged/unplugged), with a finite timeout; the reader list is refreshed on a PnP change,
  an unknown reader and every timeout.
- A card newly present (including one already on the reader at start-up) is read once: connect
  (shared), GET DATA ``FF CA 00 00 00``; ``6Cxx`` -> retry with ``Le=xx``; ``90 00`` -> the UID;
  any other status word -> no read, an "unsupported card" status. Optionally a data file
  (``DataFile``: a SELECT APDU and a READ BINARY APDU) whose contents go into ``CardRead.data``.
- Faults: card removed mid-transaction (no read, ``card_removed``), reader unplugged
  (``reader_lost``), pcscd stopped (``daemon_lost``: the context is released and a new one is
  established with back-off, the reader becomes READY again by itself).
- ``close()`` from another thread cancels the blocking call (``SCardCancel``).

One ``PcscReader`` watches the readers whose PC/SC name matches ``name_pattern`` (fnmatch glob,
e.g. ``"ACS ACR122U*"``); a gate with a control-card reader and a badge reader runs two instances
with different patterns, reader ids and kinds (``drivers.config``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import fnmatch
import threading
import time
from collections.abc import Iterator

from smartcard import scard

from drivers.base import CardRead, FaultKind, ReaderState, StatusCallback
from drivers.metrics import Backoff, StatusReporter
from portgate.errors import BadInput
from portgate.records import ReaderKind
from portgate.uid import canonical_uid

PNP_READER = "\\\\?PnP?\\Notification"
GET_UID = bytes.fromhex("FFCA000000")

# Errors after which the context is unusable: release it and establish a new one.
_CONTEXT_LOST = {
    scard.SCARD_E_NO_SERVICE,
    scard.SCARD_E_SERVICE_STOPPED,
    scard.SCARD_E_INVALID_HANDLE,
    scard.SCARD_F_COMM_ERROR,
    scard.SCARD_F_INTERNAL_ERROR,
    scard.SCARD_E_NO_MEMORY,
}
_CARD_GONE = {
    scard.SCARD_W_REMOVED_CARD,
    scard.SCARD_E_NO_SMARTCARD,
    scard.SCARD_W_RESET_CARD,
    scard.SCARD_W_UNPOWERED_CARD,
    scard.SCARD_W_UNRESPONSIVE_CARD,
    scard.SCARD_E_NOT_TRANSACTED,
}
_READER_GONE = {scard.SCARD_E_UNKNOWN_READER, scard.SCARD_E_READER_UNAVAILABLE}


@dataclasses.dataclass(frozen=True, slots=True)
class DataFile:
    """APDUs that read a data file after the UID: ``select`` (answer ``90 00`` or ``61xx``), then
    ``read`` (answer data + ``90 00``). Example: SELECT EF ``00 A4 00 0C 02 E1 04`` and READ BINARY
    ``00 B0 00 00 00``."""

    select: bytes
    read: bytes


@dataclasses.dataclass(frozen=True, slots=True)
class GetDataAnswer:
    """Interpretation of a GET DATA response (pure): ``uid`` set on success, ``retry_le`` set on
    ``6Cxx``, otherwise ``sw`` is the unsupported status word."""

    uid: str | None = None
    retry_le: int | None = None
    sw: int | None = None


def interpret_get_data(response: bytes) -> GetDataAnswer:
    """Decide what a GET DATA response means. ``response``: data + SW1 SW2 (bytes)."""
    if len(response) < 2:
        return GetDataAnswer(sw=-1)
    sw = (response[-2] << 8) | response[-1]
    if response[-2] == 0x6C:
        return GetDataAnswer(retry_le=response[-1], sw=sw)
    if sw != 0x9000:
        return GetDataAnswer(sw=sw)
    try:
        return GetDataAnswer(uid=canonical_uid(response[:-2].hex()), sw=sw)
    except BadInput:
        return GetDataAnswer(sw=sw)  # 90 00 with an empty or implausible UID


class _ContextLost(Exception):
    def __init__(self, hresult: int) -> None:
        super().__init__(scard.SCardGetErrorMessage(hresult))
        self.hresult = hresult


class _Outcome:
    """Result of one card transaction: ``uid`` (+ ``data``) or a ``fault`` with detail."""

    __slots__ = ("uid", "data", "fault", "detail")

    def __init__(self, uid=None, data=None, fault=None, detail=""):  # type: ignore[no-untyped-def]
        self.uid, self.data, self.fault, self.detail = uid, data, fault, detail


def _classify(hresult: int, where: str) -> _Outcome:
    if hresult in _CONTEXT_LOST:
        raise _ContextLost(hresult)
    message = scard.SCardGetErrorMessage(hresult)
    if hresult in _CARD_GONE:
        return _Outcome(fault=FaultKind.CARD_REMOVED, detail=f"cartão retirado durante {where}: {message}")
    if hresult in _READER_GONE:
        return _Outcome(fault=FaultKind.READER_LOST, detail=f"leitor removido durante {where}: {message}")
    return _Outcome(fault=FaultKind.PCSC_ERROR, detail=f"erro PC/SC em {where}: {message}")


def _transmit(hcard: int, protocol: int, apdu: bytes) -> tuple[int, bytes]:
    hresult, response = scard.SCardTransmit(hcard, protocol, list(apdu))
    return hresult, bytes(response) if hresult == scard.SCARD_S_SUCCESS else b""


def read_card(context: int, reader: str, data_file: DataFile | None = None) -> _Outcome:
    """One card transaction on ``reader``: connect, GET DATA (with the ``6Cxx`` retry), optional
    data file, disconnect. Raises ``_ContextLost`` when the context must be rebuilt."""
    hresult, hcard, protocol = scard.SCardConnect(
        context, reader, scard.SCARD_SHARE_SHARED, scard.SCARD_PROTOCOL_T0 | scard.SCARD_PROTOCOL_T1
    )
    if hresult != scard.SCARD_S_SUCCESS:
        return _classify(hresult, "a conexão")
    try:
        apdu = GET_UID
        for _attempt in range(2):
            hresult, response = _transmit(hcard, protocol, apdu)
            if hresult != scard.SCARD_S_SUCCESS:
                return _classify(hresult, "a leitura do UID")
            answer = interpret_get_data(response)
            if answer.retry_le is None:
                break
            apdu = GET_UID[:4] + bytes([answer.retry_le])
        if answer.uid is None:
            return _Outcome(
                fault=FaultKind.UNSUPPORTED_CARD,
                detail=f"cartão não suportado (GET DATA respondeu SW {answer.sw & 0xFFFF:04X})",
            )
        data = _read_data_file(hcard, protocol, data_file) if data_file else None
        return _Outcome(uid=answer.uid, data=data)
    finally:
        scard.SCardDisconnect(hcard, scard.SCARD_LEAVE_CARD)


def _read_data_file(hcard: int, protocol: int, data_file: DataFile) -> bytes | None:
    hresult, response = _transmit(hcard, protocol, data_file.select)
    if hresult != scard.SCARD_S_SUCCESS or len(response) < 2:
        return None
    if response[-2:] != b"\x90\x00" and response[-2] != 0x61:
        return None
    hresult, response = _transmit(hcard, protocol, data_file.read)
    if hresult != scard.SCARD_S_SUCCESS or response[-2:] != b"\x90\x00":
        return None
    return response[:-2]


class PcscReader:
    """``Reader`` over the PC/SC readers whose name matches ``name_pattern``.

    ``poll_ms``: timeout of each status-change wait (the reader list is also refreshed then).
    ``backoff``: delays between attempts to reach pcscd again.
    """

    def __init__(
        self,
        reader_id: str,
        kind: ReaderKind | str,
        name_pattern: str = "*",
        *,
        data_file: DataFile | None = None,
        poll_ms: int = 1000,
        backoff: Backoff | None = None,
        on_status: StatusCallback | None = None,
    ) -> None:
        self.reader_id, self.kind, self.name_pattern = reader_id, ReaderKind(kind), name_pattern
        self.data_file, self.poll_ms = data_file, poll_ms
        self._backoff = backoff or Backoff(0.1, 3.0)
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._context: int | None = None
        self.reporter = StatusReporter(reader_id, on_status, "drivers.pcsc")
        self.readers: dict[str, int] = {}  # matching PC/SC reader name -> last known event state

    # -- Reader interface ------------------------------------------------------------------------
    def reads(self) -> Iterator[CardRead]:
        """Yield one ``CardRead`` per card presentation until ``close()``. Never raises for PC/SC
        faults: they are reported through ``on_status``/metrics and the loop recovers."""
        while not self._closed.is_set():
            context = self._establish()
            if context is None:
                return
            try:
                yield from self._watch(context)
            except _ContextLost as exc:
                if not self._closed.is_set():
                    self.reporter.status(
                        ReaderState.ABSENT, f"serviço PC/SC (pcscd) indisponível: {exc}",
                        FaultKind.DAEMON_LOST,
                    )
                    self._backoff.wait(self._closed)
            finally:
                with self._lock:
                    self._context = None
                scard.SCardReleaseContext(context)
                self.readers = {}

    def close(self) -> None:
        """Make ``reads()`` return promptly; safe from any thread."""
        self._closed.set()
        with self._lock:
            context = self._context
            if context is not None:
                scard.SCardCancel(context)

    def __enter__(self) -> PcscReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------------------
    def _establish(self) -> int | None:
        while not self._closed.is_set():
            hresult, context = scard.SCardEstablishContext(scard.SCARD_SCOPE_USER)
            if hresult == scard.SCARD_S_SUCCESS:
                with self._lock:
                    if self._closed.is_set():
                        scard.SCardReleaseContext(context)
                        return None
                    self._context = context
                self._backoff.reset()
                return context
            if self.reporter.state is not ReaderState.ABSENT:
                self.reporter.status(
                    ReaderState.ABSENT,
                    f"serviço PC/SC (pcscd) indisponível: {scard.SCardGetErrorMessage(hresult)}",
                    FaultKind.DAEMON_LOST,
                )
            if self._backoff.wait(self._closed):
                return None
        return None

    def _relist(self, context: int, handled: set[str]) -> None:
        hresult, names = scard.SCardListReaders(context, [])
        if hresult == scard.SCARD_E_NO_READERS_AVAILABLE:
            names = []
        elif hresult != scard.SCARD_S_SUCCESS:
            raise _ContextLost(hresult)
        matching = [n for n in names if fnmatch.fnmatchcase(n, self.name_pattern)]
        for gone in [n for n in self.readers if n not in matching]:
            del self.readers[gone]
            handled.discard(gone)
            self.reporter.status(
                ReaderState.READY if self.readers else ReaderState.ABSENT,
                f"leitor removido: {gone}", FaultKind.READER_LOST,
            )
        for name in matching:
            self.readers.setdefault(name, scard.SCARD_STATE_UNAWARE)
        if self.readers:
            self.reporter.status(ReaderState.READY, "leitores: " + ", ".join(sorted(self.readers)))
        else:
            self.reporter.status(
                ReaderState.ABSENT, f"nenhum leitor PC/SC corresponde a {self.name_pattern!r}"
            )

    def _watch(self, context: int) -> Iterator[CardRead]:
        handled: set[str] = set()  # readers whose current card was already read (or refused)
        pnp_state = scard.SCARD_STATE_UNAWARE
        self._relist(context, handled)
        while not self._closed.is_set():
            states = [(PNP_READER, pnp_state)] + list(self.readers.items())
            hresult, events = scard.SCardGetStatusChange(context, self.poll_ms, states)
            if hresult in (scard.SCARD_E_TIMEOUT, scard.SCARD_E_CANCELLED):
                if hresult == scard.SCARD_E_TIMEOUT:
                    self._relist(context, handled)
                continue
            if hresult in _READER_GONE:
                self._relist(context, handled)
                continue
            if hresult != scard.SCARD_S_SUCCESS:
                raise _ContextLost(hresult)
            relist = False
            for name, event, _atr in events:
                if name == PNP_READER:
                    relist = relist or bool(event & scard.SCARD_STATE_CHANGED)
                    pnp_state = event & ~scard.SCARD_STATE_CHANGED
                    continue
                if event & (scard.SCARD_STATE_UNKNOWN | scard.SCARD_STATE_IGNORE):
                    relist = True
                    continue
                if name not in self.readers:
                    continue
                self.readers[name] = event & ~scard.SCARD_STATE_CHANGED
                present = event & scard.SCARD_STATE_PRESENT and not event & scard.SCARD_STATE_MUTE
                if not present:
                    handled.discard(name)
                    continue
                if name in handled:
                    continue
                handled.add(name)
                read = self._read(context, name)
                if read is not None:
                    yield read
            if relist:
                self._relist(context, handled)

    def _read(self, context: int, name: str) -> CardRead | None:
        outcome = read_card(context, name, self.data_file)
        mono_ns, wall = time.monotonic_ns(), dt.datetime.now(dt.UTC)
        if outcome.uid is None:
            state = ReaderState.READY if self.readers else ReaderState.ABSENT
            self.reporter.status(state, f"{name}: {outcome.detail}", outcome.fault)
            return None
        return CardRead(outcome.uid, self.reader_id, self.kind, mono_ns, wall, outcome.data)
