"""A virtual contactless card for vpcd (the virtual reader driver of vsmartcard).

Protocol (DESIGN.md): the card is a TCP *client* of vpcd (port 35963 by default; each vpcd slot
listens on its own port, base + slot). Every message is a 2-byte big-endian length plus payload. A
1-byte payload is a control code: 0 power off, 1 power on, 2 reset, 4 send ATR (answered with the
ATR bytes). A longer payload is a command APDU, answered with a response APDU. Opening the
connection inserts the card; closing it removes it.

The card answers GET DATA ``FF CA 00 00 00`` with its UID + ``90 00`` like a PC/SC part 3 reader
does for a contactless card, and can be configured to misbehave (``6Cxx``, other status words,
vanishing mid-command) so the driver's fault paths run against the real stack.
"""

from __future__ import annotations

import dataclasses
import socket
import struct
import threading
import time

DEFAULT_PORT = 35963
# ATR of a MIFARE Classic 1K seen through a PC/SC part 3 contactless reader (protocol T=1).
DEFAULT_ATR = bytes.fromhex("3B8F8001804F0CA000000306030001000000006A")

SW_OK = b"\x90\x00"
SW_FILE_NOT_FOUND = b"\x6a\x82"
SW_INS_NOT_SUPPORTED = b"\x6d\x00"
SW_WRONG_P1P2 = b"\x6b\x00"


@dataclasses.dataclass
class CardBehaviour:
    """How the card answers. Mutable on purpose: tests change it between insertions.

    ``want_le``: answer a GET DATA with ``Le=00`` by ``6C <len(uid)>`` (the card asks for the exact
    length; the reader must retry). ``get_data_sw``: answer GET DATA with only this status word (an
    unsupported card). ``vanish_on_get_data``: drop the connection instead of answering GET DATA
    (the card leaves the field mid-transaction). ``files``: file id (2 bytes) -> contents, for
    ``SELECT 00 A4 00 0C 02 <fid>`` + ``READ BINARY 00 B0 00 00 <Le>``.
    """

    want_le: bool = False
    get_data_sw: bytes | None = None
    vanish_on_get_data: bool = False
    files: dict[bytes, bytes] = dataclasses.field(default_factory=dict)


class VirtualCard:
    """One virtual card slot: ``insert(uid)`` connects to vpcd, ``remove()`` disconnects.

    ``uid``: hex string (e.g. ``"04A1B2C3"``). If vpcd (pcscd) is not listening yet or goes away,
    the card keeps reconnecting while inserted, like a card held in the field of a reader that is
    being restarted. ``apdus`` counts command APDUs served (for tests and benchmarks).
    """

    def __init__(
        self,
        port: int = DEFAULT_PORT,
        host: str = "127.0.0.1",
        *,
        atr: bytes = DEFAULT_ATR,
        behaviour: CardBehaviour | None = None,
    ) -> None:
        self.host, self.port, self.atr = host, port, atr
        self.behaviour = behaviour or CardBehaviour()
        self.uid: bytes = b""
        self.apdus = 0
        self.connected = threading.Event()
        self._inserted = threading.Event()
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._selected: bytes | None = None
        self._lock = threading.Lock()

    # -- control ---------------------------------------------------------------------------------
    def insert(self, uid: str, *, wait: float | None = 10.0) -> None:
        """Put the card with ``uid`` on the reader; with ``wait``, block until vpcd has sent the card
        its first message (pcscd polls vpcd every 400 ms, so this takes up to ~0.4 s)."""
        self.remove()
        self.uid = bytes.fromhex(uid)
        self._inserted.set()
        self._thread = threading.Thread(target=self._run, name=f"vicc-{self.port}", daemon=True)
        self._thread.start()
        if wait is not None and not self.connected.wait(wait):
            raise TimeoutError(f"vpcd on port {self.port} did not accept the virtual card")

    def remove(self) -> None:
        """Take the card off the reader (closes the connection); returns when it is gone. pcscd
        notices at its next poll of vpcd (up to ~0.4 s later)."""
        self._inserted.clear()
        self._drop()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        self.connected.clear()

    close = remove

    def __enter__(self) -> VirtualCard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    # -- protocol --------------------------------------------------------------------------------
    def _drop(self) -> None:
        with self._lock:
            sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _run(self) -> None:
        while self._inserted.is_set():
            try:
                sock = socket.create_connection((self.host, self.port), timeout=1.0)
            except OSError:
                time.sleep(0.05)
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(None)
            with self._lock:
                if not self._inserted.is_set():
                    sock.close()
                    return
                self._sock = sock
            self._selected = None
            try:
                self._serve(sock)
            except OSError:
                pass
            self.connected.clear()
            self._drop()
            if self._inserted.is_set():
                time.sleep(0.05)

    def _serve(self, sock: socket.socket) -> None:
        while True:
            head = _recv_exact(sock, 2)
            if head is None:
                return
            (size,) = struct.unpack(">H", head)
            msg = _recv_exact(sock, size) if size else b""
            if msg is None:
                return
            self.connected.set()  # vpcd accepted us and talks to the card (not just the backlog)
            if size == 1:
                if msg[0] == 4:
                    _send(sock, self.atr)
                elif msg[0] == 0:
                    self._selected = None
                continue
            if size == 0:
                continue
            answer = self._execute(msg)
            if answer is None:  # vanish mid-transaction
                self._inserted.clear()
                return
            self.apdus += 1
            _send(sock, answer)

    def _execute(self, apdu: bytes) -> bytes | None:
        b = self.behaviour
        cla, ins, p1, p2 = apdu[0], apdu[1], apdu[2], apdu[3]
        if (cla, ins) == (0xFF, 0xCA):
            if b.vanish_on_get_data:
                return None
            if b.get_data_sw is not None:
                return b.get_data_sw
            if p1 != 0 or p2 != 0:
                return SW_WRONG_P1P2
            le = apdu[4] if len(apdu) == 5 else 0
            if b.want_le and le != len(self.uid):
                return bytes([0x6C, len(self.uid)])
            return self.uid + SW_OK
        if (cla, ins) == (0x00, 0xA4) and len(apdu) >= 7:
            fid = apdu[5 : 5 + apdu[4]]
            if fid in b.files:
                self._selected = fid
                return SW_OK
            return SW_FILE_NOT_FOUND
        if (cla, ins) == (0x00, 0xB0):
            if self._selected is None:
                return b"\x69\x86"
            data = b.files[self._selected]
            offset = (p1 << 8) | p2
            le = apdu[4] if len(apdu) == 5 else 0
            chunk = data[offset : offset + (le or 256)]
            return chunk + SW_OK
        return SW_INS_NOT_SUPPORTED


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        part = sock.recv(n - len(buf))
        _quickack(sock)
        if not part:
            return None
        buf += part
    return bytes(buf)


def _quickack(sock: socket.socket) -> None:
    # vpcd writes the length and the payload separately; without an immediate ACK its Nagle wait
    # meets our delayed ACK and every APDU costs ~40 ms. TCP_QUICKACK is not sticky: set it per recv.
    quickack = getattr(socket, "TCP_QUICKACK", None)
    if quickack is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, quickack, 1)
        except OSError:
            pass


def _send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(struct.pack(">H", len(payload)) + payload)
