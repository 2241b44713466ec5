"""Card UIDs: canonical form, the forms readers produce, and what a read says about a card.

Canonical form: upper-case hex, most significant byte first, as read from the card (``1A2B3C4D``),
an even number of digits, 3 to 10 bytes. A card is enrolled by its canonical UID (an EM4100 card by
its 5-byte ID, ``62E3086CD5``).

Readers do not all give the whole UID. Each reader declares the form it produces (gate.toml
``uid_format``), never guessed:

| form | what the reader gives | bits of the card |
|---|---|---|
| ``hex`` | the UID in hex, MSB first | whole UID |
| ``hex_reversed`` | the UID in hex, byte order reversed | whole UID |
| ``decimal10_le`` | 10 digits: a 4-byte UID as a 32-bit number, first byte least significant (13.56 MHz wedges) | whole 4-byte UID |
| ``decimal10`` | DEZ10: 10 digits, the low 32 bits as a number | low 32 |
| ``dez8`` | DEZ8: 8 digits, the low 24 bits as a number | low 24 |
| ``wiegand26`` | W26: 8 digits, 3-digit facility (bits 23-16) + 5-digit number (bits 15-0) | low 24 |

A read of a whole UID is its canonical text. A read of the low bits only (a *partial* read) is the
text ``<form>:<hex of those bits>`` (``decimal10:E3086CD5``, ``wiegand26:3C4D5E``): it travels
through the gate as text like any UID, and the gate's card lookup matches it against the low bits of
every enrolled UID (``ReadUid.bits``). A 24-bit match is collision-prone (16.7 million values for
the port's cards): rule G1 flags it, and refuses a read whose bits two cards share.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import re

from portgate.errors import BadInput

_HEX = re.compile(r"^[0-9A-F]+$")
_SEPARATORS = re.compile(r"[\s:\-]")
_DECIMAL10 = re.compile(r"^[0-9]{10}$")


class UidFormat(enum.StrEnum):
    """The form a reader produces or a number on a card is written in (``uid_format``)."""

    HEX = "hex"
    HEX_REVERSED = "hex_reversed"
    DECIMAL10_LE = "decimal10_le"
    DECIMAL10 = "decimal10"  # DEZ10
    DEZ8 = "dez8"
    WIEGAND26 = "wiegand26"  # W26


PARTIAL_BITS: dict[UidFormat, int] = {UidFormat.DECIMAL10: 32, UidFormat.DEZ8: 24, UidFormat.WIEGAND26: 24}
COLLISION_PRONE_BITS = 24  # a match on this many bits or fewer is flagged (G1)
_DIGITS = {UidFormat.DECIMAL10_LE: 10, UidFormat.DECIMAL10: 10, UidFormat.DEZ8: 8, UidFormat.WIEGAND26: 8}


def canonical_uid(raw: str) -> str:
    """Return ``raw`` as a canonical UID, or raise ``BadInput``.

    Accepts hex with optional ``:``/``-``/space separators and any case. Raises ``BadInput`` for
    anything else (odd length, non-hex, fewer than 3 or more than 10 bytes). Leading zeros are kept.
    """
    if not isinstance(raw, str):
        raise BadInput(f"UID must be text, got {type(raw).__name__}")
    return _canonical_text(raw)


@functools.lru_cache(maxsize=1024)  # pure; a gate reads the same few hundred cards all day
def _canonical_text(raw: str) -> str:
    text = _SEPARATORS.sub("", raw).upper()
    if not text or not _HEX.match(text):
        raise BadInput(f"UID {raw!r} is not hexadecimal")
    if len(text) % 2:
        raise BadInput(f"UID {raw!r} has an odd number of hex digits")
    if not 3 <= len(text) // 2 <= 10:
        raise BadInput(f"UID {raw!r} must be 3 to 10 bytes long")
    return text


@dataclasses.dataclass(frozen=True, slots=True)
class ReadUid:
    """What one read says about a card: ``hex`` (canonical hex of the bits carried) in ``form``.

    ``bits`` is None for a whole UID, else how many low bits of the card's UID ``hex`` holds.
    """

    hex: str
    form: UidFormat

    @property
    def bits(self) -> int | None:
        return PARTIAL_BITS.get(self.form)

    @property
    def collision_prone(self) -> bool:
        return self.bits is not None and self.bits <= COLLISION_PRONE_BITS

    @property
    def text(self) -> str:
        """The read as text: the canonical UID, or ``<form>:<hex>`` for a partial read."""
        return self.hex if self.bits is None else f"{self.form.value}:{self.hex}"

    def matches(self, uid: str) -> bool:
        """True when the canonical ``uid`` carries these bits (equal, or equal low bits)."""
        if self.bits is None:
            return uid == self.hex
        return low_bits(uid, self.bits) == self.hex


def low_bits(uid: str, bits: int) -> str | None:
    """The low ``bits`` (32 or 24) of canonical ``uid`` as hex, or None when the UID is shorter."""
    digits = bits // 4
    return uid[-digits:] if len(uid) >= digits else None


def read_uid(raw: str, fmt: UidFormat | str) -> ReadUid:
    """What a reader typed (or a card shows printed) in form ``fmt`` -> a ``ReadUid``.

    Raises ``BadInput`` naming the value when it does not fit the form (wrong digit count, a number
    too large, a W26 facility over 255 or number over 65535).
    """
    fmt = UidFormat(fmt)
    text = raw.strip() if isinstance(raw, str) else raw
    if fmt is UidFormat.HEX:
        return ReadUid(canonical_uid(text), fmt)
    if fmt is UidFormat.HEX_REVERSED:
        uid = canonical_uid(text)
        return ReadUid("".join(reversed([uid[i : i + 2] for i in range(0, len(uid), 2)])), fmt)
    digits = _DIGITS[fmt]
    if not isinstance(text, str) or not text.isascii() or not text.isdigit() or len(text) != digits:
        raise BadInput(f"UID {raw!r} must be exactly {digits} digits for format {fmt.value}")
    value = int(text)
    if fmt is UidFormat.WIEGAND26:
        facility, number = int(text[:3]), int(text[3:])
        if facility > 0xFF or number > 0xFFFF:
            raise BadInput(f"UID {raw!r}: facility must be 0-255 and number 0-65535 for format wiegand26")
        return ReadUid(f"{facility:02X}{number:04X}", fmt)
    bits = 24 if fmt is UidFormat.DEZ8 else 32
    if value >= 1 << bits:
        raise BadInput(f"UID {raw!r} does not fit in {bits} bits for format {fmt.value}")
    if fmt is UidFormat.DECIMAL10_LE:
        return ReadUid(value.to_bytes(4, "little").hex().upper(), fmt)
    return ReadUid(f"{value:0{bits // 4}X}", fmt)


def parse_read(text: str) -> ReadUid:
    """The text of a read (``ReadUid.text``: a canonical UID, or ``<form>:<hex>``) back to a
    ``ReadUid``. Raises ``BadInput`` for anything else."""
    if not isinstance(text, str):
        raise BadInput(f"UID must be text, got {type(text).__name__}")
    return _parse_text(text)


_PARTIAL_FORMS = frozenset(f.value for f in PARTIAL_BITS)


@functools.lru_cache(maxsize=1024)  # pure (a ReadUid is immutable); errors are not cached
def _parse_text(text: str) -> ReadUid:
    head, sep, tail = text.partition(":")
    if sep and head.strip().lower() in _PARTIAL_FORMS:
        form = UidFormat(head.strip().lower())
        digits = PARTIAL_BITS[form] // 4
        value = tail.strip().upper()
        if len(value) != digits or not _HEX.match(value):
            raise BadInput(f"read {text!r}: {form.value} carries {digits} hex digits")
        return ReadUid(value, form)
    return ReadUid(canonical_uid(text), UidFormat.HEX)


def normal_read(raw: object) -> str | None:
    """``parse_read(raw).text``, or None when ``raw`` is not the text of a read (G1 malformed)."""
    if isinstance(raw, str):
        return _normal_text(raw)
    try:
        return parse_read(raw).text  # type: ignore[arg-type]
    except BadInput:
        return None


@functools.lru_cache(maxsize=1024)  # pure; the pairing and the rules ask for the same read in turn
def _normal_text(raw: str) -> str | None:
    try:
        return _parse_text(raw).text
    except BadInput:
        return None


def collision_prone(text: object) -> bool:
    """True when ``text`` is a partial read of 24 bits or fewer (a match is flagged, G1)."""
    try:
        return parse_read(text).collision_prone  # type: ignore[arg-type]
    except BadInput:
        return False


def enrol_uid(raw: str, form: UidFormat | str | None) -> str:
    """The canonical UID to enrol from a data file's ``uid`` cell and its optional ``uid_form``.

    Without a form the cell is hex, except that 10 decimal digits are refused as ambiguous (an
    EM4100 ID in hex, or a DEZ10/little-endian number?). Forms that carry only part of a card
    (``decimal10`` is accepted as a 4-byte UID written as a number, MSB first; ``dez8`` and
    ``wiegand26`` are refused: 24 bits do not name a card). Raises ``BadInput``.
    """
    text = (raw or "").strip()
    if not form:
        if _DECIMAL10.match(text):
            raise BadInput(
                f"uid {text} is 10 decimal digits: EM4100 hex or a DEZ10 number? say which in column "
                "uid_form (hex, decimal10, decimal10_le)"
            )
        return canonical_uid(text)
    try:
        fmt = UidFormat(form.strip())
    except ValueError as exc:
        raise BadInput(f"uid_form {form!r} is not one of {'|'.join(f.value for f in UidFormat)}") from exc
    if fmt is UidFormat.DECIMAL10:
        return read_uid(text, fmt).hex  # a 4-byte UID, MSB first
    if fmt in PARTIAL_BITS:
        raise BadInput(f"uid_form {fmt.value} carries only 24 bits of the card: enrol it by its whole UID")
    return read_uid(text, fmt).hex
