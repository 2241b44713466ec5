"""Generated worker photos for the demo and the tests: small valid PNG images, distinct per seed.

``png(seed, size)`` builds the file by hand (zlib + the PNG chunk layout) so the demo needs no
imaging library; the office's real photos come from uploads (re-encoded there).
"""

from __future__ import annotations

import random
import struct
import zlib


def png(seed: int, size: int = 24, *, pad: int = 0) -> bytes:
    """A ``size`` x ``size`` RGB PNG whose colours depend on ``seed`` (distinct bytes per seed);
    ``pad`` random bytes in a private ancillary chunk make it larger (a size-cap test)."""
    r, g, b = (seed * 97) % 256, (seed * 57 + 80) % 256, (seed * 31 + 160) % 256
    rows = b"".join(b"\x00" + bytes((r, g, b)) * size for _ in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
            + (chunk(b"prVt", random.Random(seed).randbytes(pad)) if pad else b"")
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
