"""``portgate replay``: run the gate rules over CSV files with no hardware, one result per read.

Inputs (DESIGN.md data files): workers.csv, cards.csv, escala.csv (loaded whole: they are the gate's
local copies) and taps.csv (optional column ``direction``: the reader's declared ``in|out|both``,
G6/G9) (streamed twice: once to validate every row, once to decide, so memory
does not grow with the number of taps and nothing is printed for a file with a bad row).

Each tap's ``at`` is the wall clock, the monotonic clock is derived from it (ns since the epoch),
the clock is trusted and the local copies are fresh (G8 never fires in a replay). Debounce and
badge pairing are done by ``edge.rules.pairing`` exactly as the gate loop does. Gates named in the
taps share presence (a connected port) unless ``isolated`` (each gate partitioned, as offline).

Each result is a dict ``{at, gate_id, uid, registration, decision, rules_failed, flags, message}``;
``decision`` is ``admit|exit|deny|inspector|aboard``, or ``debounced`` (dropped as the same read) or
``paired`` (a badge paired with the control card read before or after it, G4; or the holder's own
badge read just after a card already decided).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from edge.memview import MemoryGateView, Presence, Roster
from edge.display.said import decide
from edge.rules.model import Flag, Now, OpenShift, Presentation
from edge.rules.pairing import Dropped, Pairing, Read, badge_expected
from edge.rules.rulebook import GateRulebooks
from portgate.errors import BadInput
from portgate.records import COLUMNS, Card, EscalaEntry, Tap, Worker, load_unique_csv
from portgate.tables import iter_rows as iter_table
from portgate.tables import one_line
from portgate.timeutil import iso
from portgate.uid import UidFormat, read_uid

_TAP_REQUIRED = tuple(c for c in COLUMNS[Tap] if c not in ("uid_form", "direction"))  # optional columns
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_NS_PER_US = 1000
# A tap's time must be plausible (G13: a clock before 2000 is implausible); bounds keep every
# derived time (local dates, periods, rests) inside ``datetime``'s range.
TAP_EARLIEST = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
TAP_LATEST = dt.datetime(2100, 1, 1, tzinfo=dt.UTC)

Result = dict[str, object]


def mono_of(at: dt.datetime) -> int:
    """Monotonic ns derived from a wall time (replay only)."""
    return ((at - EPOCH) // dt.timedelta(microseconds=1)) * _NS_PER_US


def wall_of(mono_ns: int) -> dt.datetime:
    return EPOCH + dt.timedelta(microseconds=mono_ns // _NS_PER_US)


def iter_taps(path: str | Path) -> Iterator[Tap]:
    """Stream taps.csv. Raises ``BadInput`` at the first bad row (call ``check_taps`` first)."""
    for tap, error in _taps(Path(path)):
        if error is not None:
            raise BadInput(error)
        yield tap


def check_taps(path: str | Path) -> int:
    """Validate every row of taps.csv without keeping them; return the row count.

    Raises ``BadInput`` naming every bad row (``taps.csv:7: reader 'x' is not one of ...``).
    """
    errors: list[str] = []
    count = 0
    for _tap, error in _taps(Path(path)):
        count += 1
        if error is not None:
            errors.append(error)
    if errors:
        shown = errors[:50] + ([f"... and {len(errors) - 50} more"] if len(errors) > 50 else [])
        raise BadInput("\n".join(shown))
    return count


def _taps(path: Path) -> Iterator[tuple[Tap | None, str | None]]:
    for where, row in iter_table(path, _TAP_REQUIRED, known=COLUMNS[Tap]):
        if None in row:
            yield None, f"{where}: {len(row[None])} cell(s) more than the header has"
            continue
        short = [c for c in _TAP_REQUIRED if row.get(c) is None]
        if short:
            yield None, f"{where}: missing column(s) {', '.join(short)}"
            continue
        try:
            tap = Tap.from_row(row)
        except BadInput as exc:
            yield None, f"{where}: {one_line(exc.reason)}"
            continue
        if not TAP_EARLIEST <= tap.at < TAP_LATEST:
            yield None, (f"{where}: at {tap.at.isoformat()} is out of range "
                         f"({TAP_EARLIEST.date()} to {TAP_LATEST.date()} excluded; G13)")
            continue
        yield tap, None


class Replay:
    """The gates of one replay: a view and a pairing per gate, presence shared unless isolated."""

    def __init__(self, roster: Roster, rulebooks: GateRulebooks, *, isolated: bool = False,
                 lang: str = "pt") -> None:
        self.roster = roster
        self.rulebooks = rulebooks
        self.isolated = isolated
        self.lang = lang
        self.shared = Presence()
        self.views: dict[str, MemoryGateView] = {}
        self.pairings: dict[str, Pairing] = {}
        self.directions: dict[str, str] = {}  # reader id -> declared direction (G6, G9)
        # The port's time zone picks the rulebook version (a port does not change zone).
        self.tz = rulebooks.version[0].tz

    def _gate(self, gate_id: str, rulebook) -> tuple[MemoryGateView, Pairing]:
        if gate_id not in self.views:
            presence = Presence() if self.isolated else self.shared
            self.views[gate_id] = MemoryGateView(gate_id, self.roster, presence,
                                                 tz=rulebook.port_timezone)
            view = self.views[gate_id]
            self.pairings[gate_id] = Pairing.from_rulebook(
                rulebook, expects_badge=lambda read: badge_expected(
                    view, self.rulebooks.for_date(wall_of(read.mono_ns).astimezone(self.tz).date()), read),
                holder=lambda uid: getattr(view.card(uid), "registration", None))
        return self.views[gate_id], self.pairings[gate_id]

    def feed(self, tap: Tap) -> list[Result]:
        """Replay one tap; return the results it made ready (in order)."""
        out: list[Result] = []
        mono = mono_of(tap.at)
        for gate_id, pairing in self.pairings.items():  # badges left waiting at other gates
            if gate_id != tap.gate_id:
                for presentation in pairing.expire(mono):
                    out.extend(self._decide(gate_id, presentation))
        rulebook = self.rulebooks.for_date(tap.at.astimezone(self.tz).date())
        view, pairing = self._gate(tap.gate_id, rulebook)
        pairing.debounce_ns = rulebook.g9.debounce_s * 1_000_000_000
        pairing.pairing_window_ns = rulebook.g4.pairing_window_s * 1_000_000_000
        reader_id = f"{tap.gate_id}/{tap.reader.value}"
        if tap.direction.value != "both":  # a gate's entry and exit readers are two readers
            reader_id += f"/{tap.direction.value}"
            self.directions[reader_id] = tap.direction.value
        read = Read(uid=_uid(tap.uid, tap.uid_form), reader_id=reader_id,
                    reader_kind=tap.reader.value, mono_ns=mono)
        for item in pairing.feed(read):
            if isinstance(item, Dropped) and item.reason == "paired":  # G4: the holder's own badge
                card = view.card(item.read.uid)
                out.append(self._line(tap.gate_id, item.read.mono_ns, item.read.uid,
                                      card.registration if card else None, "paired",
                                      "chapa do mesmo trabalhador, lida após o cartão",
                                      "the same worker's badge, read after the card"))
            elif isinstance(item, Dropped):
                card = view.card(item.read.uid)
                out.append(self._line(tap.gate_id, item.read.mono_ns, item.read.uid,
                                      card.registration if card else None,
                                      "debounced", "leitura repetida ignorada",
                                      "repeated read ignored"))
            else:
                out.extend(self._decide(tap.gate_id, item))
        return out

    def decide_recorded(self, gate_id: str, presentation: Presentation) -> Result:
        """Decide a presentation recorded by a gate (debounce and pairing were done there): the
        decision line. A badge paired at the gate that this replay's rulebook would not wait for
        (``badge_expected`` false, G4) is left out, so the card is decided alone as such a gate
        would (``badge_unpaired: true`` in the line)."""
        wall = wall_of(max(presentation.mono_ns, presentation.badge_mono_ns or presentation.mono_ns))
        rulebook = self.rulebooks.for_date(wall.astimezone(self.tz).date())
        view, _pairing = self._gate(gate_id, rulebook)
        if presentation.direction != "both":
            self.directions[presentation.reader_id] = presentation.direction
        unpaired = False
        if presentation.badge_uid is not None:
            read = Read(uid=presentation.uid, reader_id=presentation.reader_id,
                        reader_kind=presentation.reader_kind, mono_ns=presentation.mono_ns)
            view.ship = view.ship_at(wall)
            if not badge_expected(view, rulebook, read):
                presentation = dataclasses.replace(presentation, badge_uid=None, badge_mono_ns=None)
                unpaired = True
        line = self._decide(gate_id, presentation)[-1]
        if unpaired:
            line["badge_unpaired"] = True
        return line

    def apply_recorded(self, gate_id: str, at: dt.datetime, *, registration: str | None = None,
                       decision: str = "", flags: Sequence[str] = (), dispatch=None,
                       confiscated_uid: str | None = None) -> None:
        """What gate ``gate_id`` recorded at ``at`` (aware UTC), applied as the other gates of a
        connected port learn it from the office (presence relay, blocklist), without deciding it
        again: an ``admit`` opens ``registration``'s shift there (G5), an ``exit`` closes it and
        ends the shift (G7; not an exit flagged NO_ENTRY without a dispatch), ``confiscated_uid``
        blocks that card (G2). ``dispatch``: the recorded escala entry (``wire.events.Dispatch``
        or None), matched to the copies' entry of that worker. Nothing else crosses gates (pending
        flags and inspector sessions are each gate's own). Used to replay one gate against what
        the others really did (``portgate replay --from-ledger --gate``)."""
        rulebook = self.rulebooks.for_date(at.astimezone(self.tz).date())
        view, _pairing = self._gate(gate_id, rulebook)
        presence = view.presence
        if confiscated_uid is not None:
            presence.blocked.add(confiscated_uid)
            presence.pending.pop(confiscated_uid, None)
        if registration is None:
            return
        entry = None
        if dispatch is not None:
            entry = next((e for e in self.roster.by_registration.get(registration, ())
                          if (e.date, e.period, e.ship, e.post) ==
                          (dispatch.date, dispatch.period, dispatch.ship, dispatch.post)), None)
        if decision == "admit":
            ship = dispatch.ship if dispatch is not None else (view.ship_at(at) or "")
            presence.open_shifts[registration] = OpenShift(
                registration=registration, gate_id=gate_id, ship=ship, admitted_at=at, dispatch=entry)
        elif decision == "exit":
            presence.open_shifts.pop(registration, None)
            if Flag.NO_ENTRY.value not in flags or dispatch is not None:
                presence.last_end[registration] = at

    def flush(self) -> list[Result]:
        """Decide the badges still waiting for a control card (end of the taps)."""
        out: list[Result] = []
        for gate_id, pairing in self.pairings.items():
            for presentation in pairing.flush():
                out.extend(self._decide(gate_id, presentation))
        return out

    def _decide(self, gate_id: str, presentation: Presentation) -> list[Result]:
        view = self.views[gate_id]
        # Decided when the second read of a pair arrives (either order, G4), as at the gate.
        decided_ns = max(presentation.mono_ns, presentation.badge_mono_ns or presentation.mono_ns)
        wall = wall_of(decided_ns)
        rulebook = self.rulebooks.for_date(wall.astimezone(view.tz).date())
        now = Now(wall=wall, mono_ns=decided_ns, clock_trusted=True)
        view.ship = view.ship_at(wall)
        view.updated_at = wall
        out: list[Result] = []
        if presentation.badge_uid is not None:
            badge = view.card(presentation.badge_uid)
            out.append(self._line(gate_id, presentation.badge_mono_ns or presentation.mono_ns,
                                  presentation.badge_uid, badge.registration if badge else None,
                                  "paired", f"chapa lida com o cartão {presentation.uid}",
                                  f"badge read with card {presentation.uid}"))
        direction = self.directions.get(presentation.reader_id)
        if direction is not None:
            presentation = dataclasses.replace(presentation, direction=direction)
        decision = decide(view, presentation, now, rulebook)
        view.apply(decision, presentation, now, inspector_mode_s=rulebook.g10.inspector_mode_s)
        line = self._line(gate_id, decided_ns, presentation.uid, decision.registration,
                          decision.outcome.value, decision.message_pt, decision.message_en)
        line["rules_failed"] = list(decision.rules_failed)
        line["flags"] = [f.value for f in decision.flags]
        out.append(line)
        return out

    def _line(self, gate_id: str, mono_ns: int, uid: str, registration: str | None,
              decision: str, message_pt: str, message_en: str) -> Result:
        return {
            "at": iso(wall_of(mono_ns)), "gate_id": gate_id, "uid": uid,
            "registration": registration, "decision": decision, "rules_failed": [], "flags": [],
            "message": message_pt if self.lang == "pt" else message_en,
        }


def run_replay(workers: str | Path, cards: str | Path, escala: str | Path, taps: str | Path,
               rulebooks: GateRulebooks, *, isolated: bool, lang: str,
               emit: Callable[[Result], None]) -> int:
    """Load the copies, validate the taps, replay them and ``emit`` each result; return the count
    of results. Raises ``BadInput`` (naming every bad row) before emitting anything."""
    errors: list[str] = []
    loaded = []
    for path, record in ((workers, Worker), (cards, Card), (escala, EscalaEntry)):
        try:
            loaded.append(load_unique_csv(path, record))
        except BadInput as exc:
            errors.append(str(exc))
    try:
        check_taps(taps)
    except BadInput as exc:
        errors.append(str(exc))
    if errors:
        raise BadInput("\n".join(errors))
    replay = Replay(Roster(*loaded), rulebooks, isolated=isolated, lang=lang)
    count = 0
    for tap in iter_taps(taps):
        for result in replay.feed(tap):
            emit(result)
            count += 1
    for result in replay.flush():
        emit(result)
        count += 1
    return count


def _uid(raw: str, form: UidFormat) -> str:
    """The text a reader of ``form`` gives for ``raw`` (``portgate.uid.read_uid``)."""
    try:
        return read_uid(raw, form).text
    except BadInput:
        return raw  # decided as G1 (malformed), never a crash
