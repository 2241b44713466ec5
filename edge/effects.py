"""What a journaled gate event changes in the local store (pure: event in, ``Effects`` out).

One code path for the live loop and for the boot-time replay of journal events the store has not
applied yet (``edge.store.Store.applied_seq``):

- tap ADMIT -> open a local shift with the dispatch, the admit's boot id and monotonic time (G5,
  G9, G13);
- tap EXIT -> close it and record the worker's last shift end (G7, G9): the end of a real shift,
  an admit followed by an exit, or a NO_ENTRY exit matched to a period of the escala (worked,
  entry not recorded); a NO_ENTRY exit with no period starts no rest and records nothing;
- tap flags (ROTATION_JUMP, BORROWED_CARD, ...) -> pending flags on the card (reason for G10);
  BORROWED_CARD also on every control card of both registrations it names (``registration`` and
  ``badge_registration``: "mismatch in either order flags both registrations", G4), so the
  confiscation of either one's card takes art. 20 j/l;
- tap INSPECTOR -> inspector session until ``mono_ns + inspector_ttl_ns`` (G10; only within the
  same boot: monotonic time restarts with the process);
- tap INSPECTOR flagged MEAL_MODE -> the session in meal mode (P6);
- confiscation -> block the card at once, end the inspector session (G10);
- meal worked -> end the inspector session (P6; the office sets the shift's meal_worked).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence

from edge.rules.model import InspectorSession, OpenShift
from portgate.records import Berth, EscalaEntry, Voyage
from wire.events import ConfiscationPayload, Event, MealWorkedPayload, TapPayload
from wire.flags import Flag

# Flags that are not about the card (they describe the gate's data or clock), not kept as pending.
NOT_PENDING = {Flag.STALE_DATA, Flag.CLOCK_UNTRUSTED, Flag.CONFISCATE, Flag.COVERAGE_GAP, Flag.PARTIAL_UID,
               Flag.MEAL_MODE, Flag.MEAL_WORKED}

# The reason the gate records for a card it confiscated itself: "confiscated: <reason flag>", e.g.
# "confiscated: BORROWED_CARD" (the office's blocklist reasons are plain card statuses: "confiscated",
# "lost", "replaced"). Every release so far wrote this format; the store's upgrade relies on it.
CONFISCATION_PREFIX = "confiscated: "


def confiscation_reason(reason_flag: str) -> str:
    """The block reason of a card confiscated at this gate for ``reason_flag`` (G10)."""
    return f"{CONFISCATION_PREFIX}{reason_flag}"


def is_gate_confiscation(reason: str) -> bool:
    """True if ``reason`` is one the gate wrote for its own confiscation (see ``confiscation_reason``),
    False for a reason from the office's blocklist."""
    return reason.startswith(CONFISCATION_PREFIX)


@dataclasses.dataclass(frozen=True, slots=True)
class Effects:
    open: OpenShift | None = None
    close: tuple[str, dt.datetime] | None = None  # (registration, ended_at)
    flags: tuple[tuple[str, str, dt.datetime], ...] = ()  # (uid, flag, at)
    block: tuple[str, str, dt.datetime] | None = None  # (uid, reason, at)
    inspector: InspectorSession | None = None
    end_inspector: bool = False


def effects_of(
    event: Event,
    *,
    boot_id: str,
    inspector_ttl_ns: int,
    ship: str | None = None,
    find_dispatch: Callable[[tuple], EscalaEntry | None] = lambda key: None,
    control_cards: Callable[[str], Sequence[str]] = lambda registration: (),
) -> Effects:
    """The store changes caused by ``event`` (see module doc). ``find_dispatch`` maps an escala
    identity (date, period, ship, post, registration) to the full entry in the local copy; ``ship`` is
    the gate's configured ship, used for an ADMIT without dispatch; ``control_cards`` maps a
    registration to the UIDs of its control cards in the local roster copy."""
    p = event.payload
    at = event.occurred_at
    if isinstance(p, ConfiscationPayload):
        return Effects(block=(p.uid, confiscation_reason(p.reason_flag), at), end_inspector=True)
    if isinstance(p, MealWorkedPayload):
        return Effects(end_inspector=True)
    if not isinstance(p, TapPayload):
        return Effects()
    flags = tuple((p.uid, f, at) for f in p.flags if f not in NOT_PENDING)
    if Flag.BORROWED_CARD in p.flags:
        regs = dict.fromkeys(r for r in (p.registration, p.badge_registration) if r)
        extra = [(uid, Flag.BORROWED_CARD.value, at) for reg in regs for uid in control_cards(reg)
                 if uid != p.uid]
        flags += tuple(dict.fromkeys(extra))
    if p.decision == "admit" and p.registration:
        entry = None
        if p.dispatch is not None:
            d = p.dispatch
            key = (d.date, d.period, d.ship, d.post, p.registration)
            entry = find_dispatch(key) or EscalaEntry(
                date=d.date, period=d.period, ship=d.ship, ship_name="", voyage=Voyage(d.voyage),
                berth=Berth(d.berth), gate_id=event.gate_id, post=d.post, function=d.function,
                registration=p.registration,
            )
        ship = entry.ship if entry else (ship or "")
        # G13: the boot and monotonic time of the admit measure the stay while the clock is untrusted
        return Effects(open=OpenShift(p.registration, event.gate_id, ship, at, entry,
                                      boot_id=event.boot_id, admit_mono_ns=event.mono_ns), flags=flags)
    if p.decision == "exit" and p.registration:
        if Flag.NO_ENTRY in p.flags and p.dispatch is None:  # no shift: no rest starts (G7)
            return Effects(flags=flags)
        return Effects(close=(p.registration, at), flags=flags)
    if p.decision == "inspector" and event.boot_id == boot_id:
        mode = "meal" if Flag.MEAL_MODE in p.flags else "confiscate"
        session = InspectorSession(p.uid, p.registration or "", event.mono_ns + inspector_ttl_ns, mode)
        return Effects(inspector=session, flags=flags)
    return Effects(flags=flags)
