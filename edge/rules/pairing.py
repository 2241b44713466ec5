"""Debounce and card+badge pairing (G9, G4) in front of ``decide``: feed reads, get presentations.

Pure and synchronous (no clock read: the caller passes each read's monotonic time), so the gate loop
and ``portgate replay`` share it.

- Debounce (G9): a read of a UID already accepted less than ``debounce_ns`` earlier (on any reader
  of this gate) is the same read: it comes out as ``Dropped`` and is not decided. Measured from the
  last *accepted* read, so a card held on the reader yields at most one decision per window.
- Pairing (G4): a badge read is held. A control-reader read arriving at most ``pairing_window_ns``
  after it comes out as one ``Presentation`` with ``badge_uid``/``badge_mono_ns`` set. A held badge
  that no control read claims in time comes out on its own (``reader_kind="badge"``) — when the next
  read arrives after the window, or when the caller calls ``expire(mono_ns)`` (the gate loop does
  so on a timer; replay at the end of the stream, ``flush``). A second badge replaces the held one,
  which comes out on its own first. The order the watchman follows is: badge, then control card.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict

from edge.rules.model import Presentation


@dataclasses.dataclass(frozen=True, slots=True)
class Read:
    """One raw read as the pairing sees it (``drivers.base.CardRead`` without the wall clock)."""

    uid: str
    reader_id: str
    reader_kind: str  # "control" | "badge"
    mono_ns: int


@dataclasses.dataclass(frozen=True, slots=True)
class Dropped:
    """A read dropped by the debounce window (the same read as an earlier one)."""

    read: Read
    reason: str = "debounce"


class Pairing:
    """Debounce + badge pairing for one gate. Memory: one entry per UID seen within the window."""

    def __init__(self, *, debounce_ns: int, pairing_window_ns: int) -> None:
        if debounce_ns < 0 or pairing_window_ns < 0:
            raise ValueError("windows must be >= 0 ns")
        self.debounce_ns = debounce_ns
        self.pairing_window_ns = pairing_window_ns
        self._last: OrderedDict[str, int] = OrderedDict()
        self._held: Read | None = None

    @classmethod
    def from_rulebook(cls, rulebook) -> Pairing:
        """Windows from ``GateRulebook.g9.debounce_s`` and ``g4.pairing_window_s``."""
        return cls(debounce_ns=rulebook.g9.debounce_s * 1_000_000_000,
                   pairing_window_ns=rulebook.g4.pairing_window_s * 1_000_000_000)

    def feed(self, read: Read) -> list[Presentation | Dropped]:
        """Take one read; return what is ready, in order (0, 1 or 2 items)."""
        out: list[Presentation | Dropped] = list(self.expire(read.mono_ns))
        if self._is_bounce(read):
            out.append(Dropped(read))
            return out
        if read.reader_kind == "badge":
            if self._held is not None:
                out.append(_alone(self._held))
            self._held = read
            return out
        held, self._held = self._held, None
        if held is not None:
            out.append(Presentation(uid=read.uid, reader_id=read.reader_id,
                                    reader_kind=read.reader_kind, mono_ns=read.mono_ns,
                                    badge_uid=held.uid, badge_mono_ns=held.mono_ns))
        else:
            out.append(_alone(read))
        return out

    def expire(self, mono_ns: int) -> list[Presentation]:
        """Release a held badge whose pairing window has passed at ``mono_ns`` (or went backwards)."""
        held = self._held
        if held is None:
            return []
        age = mono_ns - held.mono_ns
        if 0 <= age <= self.pairing_window_ns:
            return []
        self._held = None
        return [_alone(held)]

    def flush(self) -> list[Presentation]:
        """Release whatever is held (end of a replay, or the gate stopping)."""
        held, self._held = self._held, None
        return [_alone(held)] if held is not None else []

    def _is_bounce(self, read: Read) -> bool:
        while self._last:  # prune UIDs whose window has passed (kept in acceptance order)
            uid, at = next(iter(self._last.items()))
            if 0 <= read.mono_ns - at <= self.debounce_ns:
                break
            del self._last[uid]
        last = self._last.get(read.uid)
        if last is not None and 0 <= read.mono_ns - last <= self.debounce_ns and self.debounce_ns:
            return True
        self._last.pop(read.uid, None)
        self._last[read.uid] = read.mono_ns
        return False


def _alone(read: Read) -> Presentation:
    return Presentation(uid=read.uid, reader_id=read.reader_id, reader_kind=read.reader_kind,
                        mono_ns=read.mono_ns)
