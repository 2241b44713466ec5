"""Debounce and card+badge pairing (G9, G4) in front of ``decide``: feed reads, get presentations.

Pure and synchronous (no clock read: the caller passes each read's monotonic time), so the gate loop
and ``portgate replay`` share it.

- Debounce (G9): a read of a UID read less than ``debounce_ns`` earlier (on any reader of this
  gate) is the same read: it comes out as ``Dropped`` and is not decided. Measured from the last
  *read*, dropped ones included, so a card left on the reader (read every second or two) is one
  read however long it stays there; it is read again only after a gap longer than the window.
- Pairing (G4, 83.611 art. 20 j, l): the control card and the badge are read in either order.
  The first read of a pair is held: a badge always; a control card when ``expects_badge(read)``
  says its holder must show a badge now (see ``badge_expected``). The other read of the pair,
  arriving at most ``pairing_window_ns`` after the held one, makes one ``Presentation`` with the
  control card's ``uid``/``mono_ns`` and ``badge_uid``/``badge_mono_ns`` set, whichever came
  first. A held read no second read claims in time comes out on its own (a badge with
  ``reader_kind="badge"``: G4 badge alone; a control card without ``badge_uid``: G4 BADGE_MISSING)
  when the next read arrives after the window, or when the caller calls ``expire(mono_ns)`` (the
  gate loop on its tick; replay at the end of the stream, ``flush``). A second read of the same
  kind as the held one releases the held one first.
- Badge after a decided control read (G4 "either order", also where badges are optional): a badge
  read at most ``pairing_window_ns`` after a control read that was decided alone (not held: the
  badge was optional for it, or it was an exit). If ``holder(uid)`` (the registration a UID names)
  gives the same registration for both, the badge confirms the card: ``Dropped`` with reason
  ``paired``, at once. Otherwise the badge is held as any badge (the next worker may show badge
  then card, either order); if no control read claims it within the window it comes out with
  ``follows_uid``/``follows_mono_ns`` naming that earlier control read, and the engine raises
  BORROWED_CARD on it. No admit waits for an optional badge; only the flag comes at the window's end.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Callable

from edge.rules.model import GateView, Presentation
from portgate.records import CardKind, CardStatus
from portgate.uid import normal_read


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


def badge_expected(view: GateView, rulebook, read: Read) -> bool:
    """G4 (83.611 art. 20 j, l): must this control read wait for a badge read?

    True only where card + badge is required (``rulebook.g4``: at this gate, or for the worker's
    category, DL 2.032 arts. 17, 29) and the read is an entry attempt by an active control card: not
    an exit (open shift at this gate, G9), not a card shown to an inspector in inspector mode (G10),
    not an unknown or blocked card (decided at once, G1/G2). The read may be a canonical UID or a
    partial read ``<form>:<hex>`` (``portgate.uid``). Pure: reads ``view`` only.
    """
    g4 = rulebook.g4
    if read.reader_kind == "badge" or not g4.enabled:
        return False
    if not g4.card_and_badge_required and not g4.card_and_badge_categories:
        return False
    uid = normal_read(read.uid)
    card = view.card(uid) if uid is not None else None
    if card is None or card.kind is not CardKind.CONTROL or card.status is not CardStatus.ACTIVE:
        return False
    if not g4.card_and_badge_required:
        worker = view.worker(card.registration)
        if worker is None or worker.category not in g4.card_and_badge_categories:
            return False
    shift = view.open_shift(card.registration)
    if shift is not None and shift.gate_id == view.gate_id:
        return False
    session = view.inspector_session()
    return not (rulebook.g10.enabled and session is not None and session.until_mono_ns > read.mono_ns)


class Pairing:
    """Debounce + badge pairing for one gate. Memory: one entry per UID seen within the window.

    ``expects_badge(read) -> bool``: whether a control read is held for a badge (default: never,
    so a control read is decided at once unless a badge is already held).
    """

    def __init__(self, *, debounce_ns: int, pairing_window_ns: int,
                 expects_badge: Callable[[Read], bool] | None = None,
                 holder: Callable[[str], str | None] | None = None) -> None:
        if debounce_ns < 0 or pairing_window_ns < 0:
            raise ValueError("windows must be >= 0 ns")
        self.debounce_ns = debounce_ns
        self.pairing_window_ns = pairing_window_ns
        self.expects_badge = expects_badge or (lambda read: False)
        self._last: OrderedDict[str, int] = OrderedDict()
        self._held: Read | None = None
        self.holder = holder or (lambda uid: None)
        self._decided: Read | None = None  # the last control read decided alone (G4, either order)
        self._follows: Read | None = None  # the decided control read the held badge came after

    @classmethod
    def from_rulebook(cls, rulebook, *, expects_badge: Callable[[Read], bool] | None = None,
                      holder: Callable[[str], str | None] | None = None) -> Pairing:
        """Windows from ``GateRulebook.g9.debounce_s`` and ``g4.pairing_window_s``."""
        return cls(debounce_ns=rulebook.g9.debounce_s * 1_000_000_000,
                   pairing_window_ns=rulebook.g4.pairing_window_s * 1_000_000_000,
                   expects_badge=expects_badge, holder=holder)

    @property
    def holding(self) -> Read | None:
        """The read waiting for the other half of its pair, if any."""
        return self._held

    def feed(self, read: Read) -> list[Presentation | Dropped]:
        """Take one read; return what is ready, in order (0, 1 or 2 items)."""
        out: list[Presentation | Dropped] = list(self.expire(read.mono_ns))
        if self._is_bounce(read):
            out.append(Dropped(read))
            return out
        held = self._held
        badge = read.reader_kind == "badge"
        if held is not None and (held.reader_kind == "badge") != badge:  # the other half: a pair
            self._held = self._follows = None
            control, other = (held, read) if badge else (read, held)
            out.append(Presentation(uid=control.uid, reader_id=control.reader_id,
                                    reader_kind=control.reader_kind, mono_ns=control.mono_ns,
                                    badge_uid=other.uid, badge_mono_ns=other.mono_ns))
            return out
        if held is not None:  # same kind again: the held one goes alone
            out.append(self._release())
            if not badge:
                self._decided = held
        decided = self._decided_before(read) if badge else None
        if decided is not None:
            self._decided = None
            same = self.holder(decided.uid)
            if same is not None and same == self.holder(read.uid):
                out.append(Dropped(read, reason="paired"))  # the holder's own badge: confirms
                return out
        if badge or self.expects_badge(read):
            self._held, self._follows = read, decided
        else:
            out.append(_alone(read))
            self._decided = read
        return out

    def _release(self) -> Presentation:
        """The held read, alone (a badge that came after another's decided card names it)."""
        held, follows = self._held, self._follows
        self._held = self._follows = None
        out = _alone(held)
        if follows is not None:
            out = dataclasses.replace(out, follows_uid=follows.uid, follows_mono_ns=follows.mono_ns)
        return out

    def _decided_before(self, badge: Read) -> Read | None:
        """The control read decided alone at most the pairing window before ``badge``, if any."""
        decided = self._decided
        if decided is None or not 0 <= badge.mono_ns - decided.mono_ns <= self.pairing_window_ns:
            return None
        return decided

    def expire(self, mono_ns: int) -> list[Presentation]:
        """Release a held read whose pairing window has passed at ``mono_ns`` (or went backwards)."""
        held = self._held
        if held is None:
            return []
        age = mono_ns - held.mono_ns
        if 0 <= age <= self.pairing_window_ns:
            return []
        return [self._release()]

    def flush(self) -> list[Presentation]:
        """Release whatever is held (end of a replay, or the gate stopping)."""
        return [self._release()] if self._held is not None else []

    @property
    def tracked(self) -> int:
        """How many UIDs the debounce window currently remembers (memory check)."""
        return len(self._last)

    def _is_bounce(self, read: Read) -> bool:
        while self._last:  # prune UIDs whose window has passed (kept in order of last read)
            uid, at = next(iter(self._last.items()))
            if 0 <= read.mono_ns - at <= self.debounce_ns:
                break
            del self._last[uid]
        last = self._last.pop(read.uid, None)
        self._last[read.uid] = read.mono_ns  # every read, dropped or not, restarts the window
        return last is not None and 0 <= read.mono_ns - last <= self.debounce_ns and self.debounce_ns > 0


def _alone(read: Read) -> Presentation:
    return Presentation(uid=read.uid, reader_id=read.reader_id, reader_kind=read.reader_kind,
                        mono_ns=read.mono_ns)
