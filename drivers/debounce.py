"""One read per card presentation (pure; rule G9 "a second read of the same card within the
debounce window is the same read").

A reader that repeats a frame while the card is held (the RDM6300 repeats every ~65 ms) must give
one read. A presentation ends when the same UID has not been seen for longer than ``gap_ns``; a
different UID starts a new presentation at once.
"""

from __future__ import annotations


class Debouncer:
    """``seen(uid, mono_ns) -> bool``: True when this sighting starts a new presentation."""

    def __init__(self, gap_ns: int) -> None:
        if gap_ns < 0:
            raise ValueError("gap_ns must be >= 0")
        self.gap_ns = gap_ns
        self._uid: str | None = None
        self._last_ns = 0

    def seen(self, uid: str, mono_ns: int) -> bool:
        same = uid == self._uid and mono_ns - self._last_ns <= self.gap_ns
        self._uid, self._last_ns = uid, mono_ns
        return not same

    def reset(self) -> None:
        """Forget the current presentation (e.g. after the device was reopened)."""
        self._uid = None


class RepeatConfirm:
    """``seen(uid, mono_ns) -> bool``: True when this sighting repeats the previous one (same UID
    within ``window_ns``), i.e. the frame is confirmed and may become a read.

    An RDM6300-class reader repeats the frame every ~65 ms while a card is held, so a real card
    gives a confirmed frame ~65 ms after the first; line noise that happens to pass the checksum is
    an isolated frame and never does (a phantom card, G1, or a punch for the wrong person).
    ``window_ns = 0`` confirms every sighting (off).
    """

    def __init__(self, window_ns: int) -> None:
        if window_ns < 0:
            raise ValueError("window_ns must be >= 0")
        self.window_ns = window_ns
        self._uid: str | None = None
        self._last_ns = 0
        self._pending = False  # the last sighting waits for its repeat
        self._lapsed: list[str] = []

    def seen(self, uid: str, mono_ns: int) -> bool:
        if not self.window_ns:
            return True
        confirmed = uid == self._uid and 0 <= mono_ns - self._last_ns <= self.window_ns
        if self._pending and not confirmed:
            self._lapsed.append(self._uid)  # type: ignore[arg-type]  # never repeated in time
        self._uid, self._last_ns, self._pending = uid, mono_ns, not confirmed
        return confirmed

    def unconfirmed(self, mono_ns: int) -> list[str]:
        """The UIDs of sightings that can no longer be confirmed (another sighting came first, or
        ``window_ns`` has passed by ``mono_ns``), each returned once: a frame dropped as isolated
        is never dropped silently (the caller counts it)."""
        if self._pending and mono_ns - self._last_ns > self.window_ns:
            self._lapsed.append(self._uid)  # type: ignore[arg-type]
            self._pending = False
        lapsed, self._lapsed = self._lapsed, []
        return lapsed

    def reset(self) -> None:
        """Forget the last sighting (after the device was reopened)."""
        self._uid = None
        self._pending = False
        self._lapsed = []
