"""EM4100 / RDM6300 serial frame parser: bytes in, frames out, no I/O (sans-I/O, STYLE.md 1).

Frame: STX ``0x02``, 10 hex ASCII characters (5 data bytes: version/customer byte + 32-bit id),
2 hex ASCII characters of checksum (XOR of the 5 data bytes), optionally up to two CR/LF bytes,
ETX ``0x03``. The canonical UID is the 5 data bytes as 10 upper-case hex digits.

The parser resynchronises on the next STX after garbage, a partial frame or a port opened
mid-frame; bytes outside a frame are dropped (counted in ``discarded``; in ``stray`` too unless they
are the rest of a frame already rejected: a frame whose STX was lost is stray bytes). It yields ``Frame`` only
for a well-formed frame with a good checksum and a non-zero id, and ``Rejected`` for a frame that
started (STX seen) but was malformed, had a bad checksum or an all-zero id.
"""

from __future__ import annotations

import dataclasses

STX, ETX = 0x02, 0x03
_HEX = frozenset(b"0123456789ABCDEFabcdef")
_EOL = frozenset(b"\r\n")
MAX_EOL = 2
DATA_CHARS, CHECK_CHARS = 10, 2


@dataclasses.dataclass(frozen=True, slots=True)
class Frame:
    uid: str  # 10 upper-case hex digits


@dataclasses.dataclass(frozen=True, slots=True)
class Rejected:
    reason: str  # "malformed" | "bad_checksum" | "zero_id"
    raw: bytes


def encode_frame(uid: str, *, eol: bytes = b"", checksum: int | None = None) -> bytes:
    """Build the frame an RDM6300 sends for ``uid`` (10 hex digits); ``checksum`` overrides the
    correct one (for tests of bad frames)."""
    data = bytes.fromhex(uid)
    if len(data) != 5:
        raise ValueError("EM4100 UID is 5 bytes (10 hex digits)")
    check = checksum if checksum is not None else data[0] ^ data[1] ^ data[2] ^ data[3] ^ data[4]
    return b"\x02" + uid.upper().encode() + f"{check:02X}".encode() + eol + b"\x03"


def _check(body: bytes) -> Frame | Rejected:
    data = bytes.fromhex(body[:DATA_CHARS].decode())
    check = int(body[DATA_CHARS:].decode(), 16)
    if data[0] ^ data[1] ^ data[2] ^ data[3] ^ data[4] != check:
        return Rejected("bad_checksum", b"\x02" + body)
    if not any(data):
        return Rejected("zero_id", b"\x02" + body)
    return Frame(data.hex().upper())


class FrameParser:
    """Incremental parser. ``feed(chunk)`` returns the frames and rejections completed by it."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.discarded = 0
        self.stray = 0  # of ``discarded``: bytes that were not the tail of a frame already rejected
        self.stray_runs = 0  # runs of stray bytes (each ended by an STX): a lost frame is one run
        self._after_reject = False
        self._in_stray = False

    @property
    def pending(self) -> bytes:
        """The bytes of a frame started (STX seen) and not complete yet (empty when none)."""
        return bytes(self._buf)

    def feed(self, chunk: bytes) -> list[Frame | Rejected]:
        buf = self._buf
        buf += chunk
        out: list[Frame | Rejected] = []
        while True:
            start = buf.find(STX)
            if start < 0:
                self._discard(len(buf))
                buf.clear()
                return out
            if start:
                self._discard(start)
                del buf[:start]
            self._after_reject = self._in_stray = False
            done, end = self._scan(buf)
            if not done:
                return out  # incomplete: wait for more bytes
            if end < 0:  # complete frame up to and including ETX at -end - 1
                end = -end
                out.append(_check(bytes(buf[1 : 1 + DATA_CHARS + CHECK_CHARS])))
            else:  # malformed: drop up to the offending byte (a new STX is kept); the rest is its tail
                out.append(Rejected("malformed", bytes(buf[:end])))
                self._after_reject = True
            del buf[:end]

    def _discard(self, n: int) -> None:
        if not n:
            return
        self.discarded += n
        if not self._after_reject:
            self.stray += n
            self.stray_runs += not self._in_stray
            self._in_stray = True

    @staticmethod
    def _scan(buf: bytearray) -> tuple[bool, int]:
        """(False, 0) incomplete; (True, -end) frame ending before ``end``; (True, i) malformed at i."""
        n = len(buf)
        body = DATA_CHARS + CHECK_CHARS
        for i in range(1, min(n, 1 + body)):
            if buf[i] not in _HEX:
                return True, i
        if n <= body:
            return False, 0
        eol = 0
        for j in range(1 + body, n):
            byte = buf[j]
            if byte == ETX:
                return True, -(j + 1)
            if byte in _EOL and eol < MAX_EOL:
                eol += 1
                continue
            return True, j
        return False, 0
