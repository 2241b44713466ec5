"""What the watchman's screen shows, as plain values: one ``Shown`` per read, the last 10, the
inspector-mode countdown and the status bar. Pure: the caller passes the journaled event, the
look-up results and the times (no clock, database or socket here).

Colours follow the indicator (``edge.indicator.COLOURS``): green ADMIT, blue EXIT, red DENY, amber
INSPECTOR and ABOARD (G9, or the meal interval worked of P6: nothing refused). Texts are pt-BR
first, English on request (``lang="en"``). The reason is the pt-BR message the gate journaled
(``TapPayload.message``, the text of ``edge.rules.messages``) without its head word; in English it
is worded again from the English catalog (``Shown.reason``, ``edge.display.reason_words``) and each
failed rule named in English (``RULE_TITLES``). What to do comes from the flags and rules
(``action``).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import re
from zoneinfo import ZoneInfo

from edge.display import reason_words
from edge.display.texts import word as gettext
from portgate.i18n import LANGS
from wire.events import Event, TapPayload
from wire.flags import Flag

HISTORY = 10
_G_RULE = re.compile(r"G\d+")  # a gate rule of RULES.md section G (G1-G11)

# every decision of ``wire.events.TapPayload`` (the indicator's, not imported here: the screen's
# process does not load the rules engine; tests/edge/display/test_board.py compares them)
COLOURS = {"admit": "green", "exit": "blue", "deny": "red", "inspector": "amber", "aboard": "amber"}
# The screen's words live in the gettext catalogs (docs/i18n.md): the outcome's head
# ``screen_head.<outcome>``, what a rule is about in plain words (RULES.md section G)
# ``rule_title.<rule>``, what the watchman does ``screen_action.<key>``. The two old tables below
# are empty: an entry another branch adds (key: (pt-BR, English)) shows until ``python -m
# testkit.i18n absorb`` moves it.
RULE_TITLES: dict[str, tuple[str, str]] = {
}
ACTIONS: dict[str, tuple[str, str]] = {
}
# what the gate's indicator said for a read it could not journal (``edge.loop.NO_JOURNAL_*``)
UNJOURNALED_PT = {outcome: gettext(LANGS[0], "screen_unjournaled." + outcome) for outcome in ("deny", "exit")}
# G2: the card is blocked, the watchman keeps it for the inspector (RULES.md G2); the other flags the
# inspector deals with are his to see: the watchman calls him and keeps nothing (G4, G5, G6; G10
# is the inspector's own confiscation)
_RETAIN_FLAGS = {Flag.RETAIN_CARD}
_INSPECTOR_FLAGS = {Flag.BORROWED_CARD, Flag.ROTATION_JUMP, Flag.DOUBLE_ASSIGNMENT}
# what the watchman must do something about: the read stays on the main area until he touches
# "Ciente" or the next read comes (every other read gives way to the idle state after idle_after_s)
HOLD_ACTIONS = frozenset({"retain", "call_inspector", "confiscated", "supervisor", "unrecorded_exit"})


@dataclasses.dataclass(frozen=True, slots=True)
class Person:
    """One worker as the screen shows him: registration, name (None if not on the roster copy),
    category, and the SHA-256 of his photo file (None: placeholder)."""

    registration: str | None
    name: str | None = None
    category: str | None = None
    photo: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Shown:
    """One read on the screen."""

    seq: int
    at_local: str  # HH:MM:SS in the port's time zone
    outcome: str  # admit | exit | deny | inspector
    person: Person
    badge: Person | None  # the badge's holder when it is another worker (G4 mismatch)
    reason_pt: str  # the journaled pt-BR message without its head word
    rules: tuple[str, ...]
    flags: tuple[str, ...]
    action_key: str
    ship: str | None = None
    ship_name: str | None = None
    post: str | None = None
    period: str | None = None
    function: str | None = None
    uid: str = ""
    unjournaled: bool = False  # refused for a journal fault: known from the heartbeat, not the journal

    @property
    def colour(self) -> str:
        return COLOURS.get(self.outcome, "red")

    @property
    def mismatch(self) -> bool:
        return self.badge is not None

    def reason(self, lang: str) -> str:
        """The decision's sentence in ``lang``: the journaled pt-BR, or worded again in English
        (``edge.display.reason_words``); a read not journaled says so in the screen's words."""
        return self.reason_pt if self.unjournaled else reason_words.reason(lang, self.reason_pt)

    def named(self, lang: str, field: str) -> str | None:
        """The dispatch's ``post`` or ``function`` code (``portalo``) by its name in ``lang``
        (``post.<code>``: "portaló", "gangway"), as the decision's sentence names it; a code the
        catalogs do not name as it is; None without one."""
        code = getattr(self, field)
        if not code:
            return code
        msgid = f"{field}.{code}"
        said = gettext(lang, msgid)
        return code if said == msgid else said

    def words(self, lang: str) -> str:
        msgid = f"screen_head.{self.outcome}"
        said = gettext(lang, msgid)
        return self.outcome.upper() if said == msgid else said

    def action(self, lang: str) -> str:
        if self.action_key in ACTIONS:  # not absorbed yet
            return ACTIONS[self.action_key][1 if lang == "en" else 0]
        msgid = f"screen_action.{self.action_key}"
        return gettext(lang, msgid)

    @property
    def needs_ack(self) -> bool:
        """The read asks the watchman to act (retain the card, call the inspector or the
        supervisor): it stays on the main area until acknowledged (``HOLD_ACTIONS``)."""
        return self.action_key in HOLD_ACTIONS

    def rule_titles(self, lang: str) -> list[tuple[str, str]]:
        return [(r, _rule_title(lang, r)) for r in self.rules]

    def rule_words(self, lang: str, *, history: bool = False) -> list[tuple[str, str]]:
        """``(rule id, what the screen says)`` of each failed rule: a gate rule by its id and title
        (``G2: cartão bloqueado``; ``history``: the id alone, as the list of last reads is short), a
        rule that is no article of RULES.md section G (``ENROL``, ``INTERNAL``: a code, not a word a
        watchman reads) by its title only (``cartão em cadastro``, ``card being enrolled``)."""
        out = []
        for rule, title in self.rule_titles(lang):
            if not _G_RULE.fullmatch(rule):
                out.append((rule, title))
            else:
                out.append((rule, rule if history else f"{rule}: {title}"))
        return out


def _rule_title(lang: str, rule: str) -> str:
    if rule in RULE_TITLES:  # not absorbed yet
        return RULE_TITLES[rule][1 if lang == "en" else 0]
    msgid = f"rule_title.{rule}"
    said = gettext(lang, msgid)
    return rule if said == msgid else said


def action_key(p: TapPayload) -> str:
    """What the watchman does now (``ACTIONS`` key), from the decision, its flags and rules."""
    flags = set(p.flags)
    if p.decision == "inspector":
        return "inspector"
    if "CONFISCATE" in flags:
        return "confiscated"
    if flags & _RETAIN_FLAGS:
        return "retain"
    if flags & _INSPECTOR_FLAGS:  # also on an EXIT: a borrowed badge is the inspector's business
        return "call_inspector"
    if p.decision == "aboard":  # G9, P6: nothing refused, the shift stays open
        return "meal_worked" if "MEAL_WORKED" in flags else "aboard"
    if p.decision == "admit":
        return "pass"
    if p.decision == "exit":
        return "leave"
    if "INTERNAL" in p.rules_failed:
        return "supervisor"
    if "ENROL" in p.rules_failed:  # issue 34: the card read in the office's enrol mode
        return "enrol"
    if p.rules_failed == ["G4"] and not p.badge_registration:
        return "badge"
    return "refuse"


def reason_text(message: str) -> str:
    """The journaled message without its head word: ``NEGADO — x. [G2]`` -> ``x. [G2]``."""
    head, sep, rest = message.partition(" — ")
    return rest if sep else message


def shown(event: Event, *, person: Person, badge: Person | None, ship_name: str | None, tz: ZoneInfo) -> Shown:
    """The ``Shown`` of a tap event. ``person``: the card holder; ``badge``: the badge holder when
    it is another registration (else pass None). ``TypeError`` if the event is not a tap."""
    p = event.payload
    if not isinstance(p, TapPayload):
        raise TypeError(f"not a tap event: {type(p).__name__}")
    d = p.dispatch
    return Shown(
        seq=event.seq, at_local=event.occurred_at.astimezone(tz).strftime("%H:%M:%S"), outcome=p.decision,
        person=person, badge=badge, reason_pt=reason_text(p.message), rules=tuple(p.rules_failed),
        flags=tuple(p.flags), action_key=action_key(p), ship=d.ship if d else None,
        ship_name=ship_name, post=d.post if d else None, period=d.period if d else None,
        function=d.function if d else None, uid=p.uid,
    )


def shown_unjournaled(n: int, at: dt.datetime, uid: str, outcome: str, *, person: Person,
                      tz: ZoneInfo) -> Shown:
    """The ``Shown`` of a read the gate could not journal (``edge.heartbeat.Refused``: ``n`` its
    number, ``at`` aware, ``outcome`` "deny" or "exit"). ``seq`` is 0: it has no journal row."""
    outcome = "exit" if outcome == "exit" else "deny"
    return Shown(
        seq=0, at_local=at.astimezone(tz).strftime("%H:%M:%S"), outcome=outcome, person=person, badge=None,
        reason_pt=UNJOURNALED_PT[outcome], rules=(), flags=(),
        action_key="unrecorded_exit" if outcome == "exit" else "supervisor", uid=uid, unjournaled=True,
    )


def is_mismatch(p: TapPayload) -> bool:
    """A control card presented with another worker's badge (G4, BORROWED_CARD)."""
    return bool(p.badge_registration and p.registration and p.badge_registration != p.registration)


class Board:
    """The last ``HISTORY`` reads (newest last), the inspector session (a deadline on the
    screen's monotonic clock, in seconds) and what the main area shows now (``main``)."""

    def __init__(self, history: int = HISTORY) -> None:
        self.reads: collections.deque[Shown] = collections.deque(maxlen=history)
        self.inspector_until: float | None = None
        self.last_event_at: dt.datetime | None = None
        self.last_clock_trusted: bool | None = None
        self.current_at: float | None = None  # monotonic s when the newest read was made
        self.acknowledged = False  # the newest read was acknowledged (or needs no acknowledgement)

    @property
    def current(self) -> Shown | None:
        return self.reads[-1] if self.reads else None

    def add(self, s: Shown, *, at_mono: float | None = None, held: bool = True) -> None:
        """Put a read on top. ``at_mono``: when the gate made it on the screen's monotonic clock
        (None: long ago, so the main area stays idle); ``held``: False for reads shown again at
        start-up (a denial from before the restart is not held again)."""
        self.reads.append(s)
        self.current_at = at_mono
        self.acknowledged = not (held and s.needs_ack)

    def acknowledge(self, seq: int) -> bool:
        """The watchman touched "Ciente" on read ``seq``: True when it was the one held."""
        cur = self.current
        if cur is None or cur.seq != seq or self.acknowledged:
            return False
        self.acknowledged = True
        return True

    def main(self, mono_s: float, idle_after_s: float) -> Shown | None:
        """The read the main area shows at ``mono_s``, or None (idle: "Aproxime o cartão"). The
        newest read shows for ``idle_after_s`` after it was made; a read that needs the watchman
        (``Shown.needs_ack``) until acknowledged; an inspector read while the inspector mode
        lasts (G10)."""
        cur = self.current
        if cur is None:
            return None
        if cur.needs_ack and not self.acknowledged:
            return cur
        if cur.outcome == "inspector" and self.inspector_until is not None and mono_s < self.inspector_until:
            return cur
        if self.current_at is not None and mono_s < self.current_at + idle_after_s:
            return cur
        return None

    def note_event(self, event: Event, inspector_mode_s: float, *, mono_s: float, lag_s: float = 0.0) -> None:
        """Track the gate's time, clock trust and inspector mode from any event (tap or
        confiscation): an INSPECTOR tap opens the countdown (``inspector_mode_s`` from the read;
        ``mono_s``: the screen's monotonic clock now; ``lag_s``: how long ago the gate made the
        event), a confiscation or a meal record (P6) ends it."""
        self.last_event_at = event.occurred_at
        self.last_clock_trusted = event.clock_trusted
        p = event.payload
        kind = type(p).__struct_config__.tag
        if kind == "tap" and p.decision == "inspector":
            self.inspector_until = mono_s + inspector_mode_s - max(0.0, lag_s)
        elif kind in ("confiscation", "meal_worked"):  # G10 / P6: the session ended
            self.inspector_until = None

    def inspector_left_s(self, mono_s: float) -> int | None:
        """Whole seconds of inspector mode left at ``mono_s`` (the screen's monotonic clock), or
        None when not in it."""
        if self.inspector_until is None:
            return None
        left = self.inspector_until - mono_s
        if left <= 0:
            self.inspector_until = None
            return None
        return int(left + 0.999)

    def photos(self) -> set[str]:
        """SHA-256 names of the photos on the screen now (the only ones the page may fetch)."""
        out = set()
        for s in self.reads:
            for who in (s.person, s.badge):
                if who is not None and who.photo:
                    out.add(who.photo)
        return out


@dataclasses.dataclass(frozen=True, slots=True)
class Status:
    """The status bar. ``broker``: "online" | "offline" | "standalone" | "unknown" (from the gate's
    heartbeat file, ``edge.heartbeat``); ``gate_running``: that file is fresh (the gate process is
    alive)."""

    broker: str
    outbox_depth: int | None  # None: not known (journal unreadable), shown as "—"
    oldest_unsent_s: float | None
    stale: bool
    clock_untrusted: bool
    journal_readable: bool
    inspector_left_s: int | None = None
    gate_running: bool = True
    disk_full: bool = False  # the gate runs and refuses reads it cannot journal (heartbeat)
    readers: tuple = ()  # edge.reader_health.ReaderView of each configured reader (heartbeat)
    outbox_warn_after_s: float = 60.0  # the "Sem rede" strip past this age of the oldest unsent
    enrol_left_s: int | None = None  # the office's enrol mode at the gate (issue 34): whole seconds left

    @property
    def reader_faults(self) -> tuple:
        """The readers in fault while the gate runs (else nothing is known of them)."""
        return tuple(r for r in self.readers if r.state == "fault") if self.gate_running else ()

    @property
    def offline_strip(self) -> bool:
        """Show "Sem rede — continue; os registros serão enviados": the office link is down, or
        the oldest unsent event is older than ``outbox_warn_after_s``."""
        if self.broker == "offline":
            return True
        return (self.broker == "online" and self.oldest_unsent_s is not None
                and self.oldest_unsent_s > self.outbox_warn_after_s)


def age_text(seconds: float | None) -> str:
    """``42 s``, ``7 min``, ``3 h 05``; ``—`` for None."""
    if seconds is None:
        return "—"
    s = int(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    return f"{s // 3600} h {(s % 3600) // 60:02d}"
