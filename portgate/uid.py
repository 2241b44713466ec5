"""Card UIDs: canonical form and the per-site conversions of DESIGN.md.

Canonical form: upper-case hex, most significant byte first, as read from the card (``1A2B3C4D``),
an even number of digits, 3 to 10 bytes (Wiegand-26 gives 3). Numbers printed on cards or typed by keyboard-wedge readers
are converted by one per-site setting (``uid_format``), never by guessing among formats.
"""

from __future__ import annotations

import enum
import re

from portgate.errors import BadInput

_HEX = re.compile(r"^[0-9A-F]+$")


class UidFormat(enum.StrEnum):
    """How a site's readers or printed cards express a UID (configuration ``uid_format``)."""

    HEX = "hex"  # already canonical hex, MSB first
    HEX_REVERSED = "hex_reversed"  # hex, least significant byte first (byte order reversed)
    DECIMAL10 = "decimal10"  # 10-digit decimal of the 32-bit number (common on printed cards)
    WIEGAND26 = "wiegand26"  # 8 digits: 3-digit facility (0-255) + 5-digit number (0-65535)


def canonical_uid(raw: str) -> str:
    """Return ``raw`` as a canonical UID, or raise ``BadInput``.

    Accepts hex with optional ``:``/``-``/space separators and any case. Raises ``BadInput`` for
    anything else (odd length, non-hex, fewer than 4 or more than 10 bytes). Leading zeros are kept.
    """
    if not isinstance(raw, str):
        raise BadInput(f"UID must be text, got {type(raw).__name__}")
    text = re.sub(r"[\s:\-]", "", raw).upper()
    if not text or not _HEX.match(text):
        raise BadInput(f"UID {raw!r} is not hexadecimal")
    if len(text) % 2:
        raise BadInput(f"UID {raw!r} has an odd number of hex digits")
    if not 3 <= len(text) // 2 <= 10:
        raise BadInput(f"UID {raw!r} must be 3 to 10 bytes long")
    return text


def convert_uid(raw: str, fmt: UidFormat | str, *, nbytes: int = 4) -> str:
    """Convert what a reader typed or a card shows into a canonical UID under the site's ``fmt``.

    ``nbytes`` is the UID length for the numeric formats (4 for 32-bit cards; Wiegand-26 gives 3).
    Raises ``BadInput`` naming the value when it does not fit the format.
    """
    fmt = UidFormat(fmt)
    text = raw.strip()
    if fmt is UidFormat.HEX:
        return canonical_uid(text)
    if fmt is UidFormat.HEX_REVERSED:
        uid = canonical_uid(text)
        return "".join(reversed([uid[i : i + 2] for i in range(0, len(uid), 2)]))
    if not text.isdigit():
        raise BadInput(f"UID {raw!r} must be digits for format {fmt.value}")
    if fmt is UidFormat.DECIMAL10:
        if len(text) != 10:
            raise BadInput(f"UID {raw!r} must have exactly 10 digits for format decimal10")
        value = int(text)
        if value >= 1 << (8 * nbytes):
            raise BadInput(f"UID {raw!r} does not fit in {nbytes} bytes")
        return f"{value:0{2 * nbytes}X}"
    # WIEGAND26: facility (8 bits) + card number (16 bits) -> 3 bytes
    if len(text) != 8:
        raise BadInput(f"UID {raw!r} must have exactly 8 digits for format wiegand26")
    facility, number = int(text[:3]), int(text[3:])
    if facility > 0xFF or number > 0xFFFF:
        raise BadInput(f"UID {raw!r}: facility must be 0-255 and number 0-65535")
    return f"{facility:02X}{number:04X}"
