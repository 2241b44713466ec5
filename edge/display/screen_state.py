"""What the watchman's screen shows (``edge.display.server.Display``): the journal's reads and the
gate's heartbeat put on the board.

A mixin of ``Display`` (see there for the attributes it shares). It follows the journal read-only
(``JournalFollower``: the last reads again at start-up, then what the gate committed), turns each tap
into a ``Shown`` with the card holder from the gate's copies and photo index (``Lookup``), adds the
reads the gate refused without journaling them (the heartbeat's ``refused``), and computes the status
bar (``refresh_status``: the office link, the outbox, the copies' age, the clock, the readers, the
enrol mode, the gate process running). Each change that the idle area must show moves
``screen_version``; the web side (``edge.display.server``) pushes the fragments.
"""

from __future__ import annotations

import datetime as dt
import time

from edge.display.board import Person, Status, is_mismatch, shown, shown_unjournaled
from edge.heartbeat import Alive, read_heartbeat
from wire.events import Event, TapPayload


class ScreenState:
    """The board's and the status bar's state of ``edge.display.server.Display``."""

    def gate_now(self) -> dt.datetime:
        if self._scripted is not None:
            return self._scripted.wall()
        return dt.datetime.now(dt.UTC)

    def load_tail(self) -> None:
        """Show the last reads again (start-up)."""
        for ev in self.follower.tail(self.board.reads.maxlen or 10):
            self.take(ev, live=False)

    def take(self, ev: Event, *, live: bool = True) -> bool:
        """Put one journal event on the board; True when the screen changed. ``live``: False for
        the reads shown again at start-up (history only: the main area stays idle)."""
        lag = (self.gate_now() - ev.occurred_at).total_seconds()
        mono = time.monotonic()
        self.board.note_event(ev, self.inspector_mode_s, mono_s=mono, lag_s=lag)
        p = ev.payload
        if not isinstance(p, TapPayload):
            return type(p).__struct_config__.tag == "confiscation"
        badge = None
        if is_mismatch(p):
            badge = self._person(p.badge_registration)
        ship_name = self.lookup.ship_name(p.dispatch.ship) if p.dispatch else None
        person = self._person(p.registration, inspector=p.decision == "inspector" or p.card_kind == "inspector")
        self.board.add(shown(ev, person=person, badge=badge, ship_name=ship_name, tz=self.tz),
                       at_mono=mono - max(0.0, lag) if live else None, held=live)
        on_screen = self.board.photos()
        self._media = {k: v for k, v in self._media.items() if k in on_screen}
        return True

    def _person(self, registration: str | None, *, inspector: bool = False) -> Person:
        """The card holder as the screen shows him: a worker from the roster copy, or (an
        inspector card, ``inspector``) a union inspector's name from the roster downlink (issue
        33); his photo from the photo index either way."""
        who = self.lookup.worker(registration) if not inspector else None
        if inspector:
            name = self.lookup.inspector(registration)
            who = (name, None) if name else None
        photo = self.lookup.photo(registration)
        if photo is not None:
            self._media[photo[0]] = photo[2]
        return Person(registration=registration, name=who[0] if who else None,
                      category=who[1] if who else None, photo=photo[0] if photo else None)

    def poll_once(self) -> bool:
        """Read what the gate committed since the last call; True when the screen changed."""
        changed = False
        for ev in self.follower.poll():
            changed = self.take(ev) or changed
        return changed

    def refresh_status(self) -> Status:
        depth, oldest = self.follower.outbox()
        now = self.gate_now()
        copies = self.lookup.copies()
        stamps = [copies.get("roster"), copies.get("escala")]
        stale = None in stamps or any(now - s > self.max_age for s in stamps if s is not None)
        alive = read_heartbeat(self._alive_path)
        if self.take_refused(alive):
            self.screen_version += 1
        self.status = Status(
            broker=alive.uplink, outbox_depth=depth, gate_running=alive.gate_running,
            disk_full=alive.gate_running and alive.disk_full,
            oldest_unsent_s=max(0.0, (now - oldest).total_seconds()) if oldest else None,
            stale=stale, clock_untrusted=self.board.last_clock_trusted is False,
            journal_readable=self.follower.online, inspector_left_s=self.board.inspector_left_s(time.monotonic()),
            readers=alive.readers, outbox_warn_after_s=self.cfg.display.outbox_warn_after_s,
            enrol_left_s=_left_s(alive.enrol_until) if alive.gate_running else None,
        )
        stopped = not self.status.gate_running
        if stopped != self._stopped_shown:  # the idle area turns to (or from) "PORTALÓ PARADO"
            self._stopped_shown = stopped
            self.screen_version += 1
        enrol = self.status.enrol_left_s is not None
        if enrol != self._enrol_shown:  # the idle area turns to (or from) "CARTÃO EM CADASTRO"
            self._enrol_shown = enrol
            self.screen_version += 1
        faults = tuple((r.reader_id, r.since) for r in self.status.reader_faults)
        if faults != self._faults:  # the idle area turns to (or from) "LEITOR SEM SINAL"
            self._faults = faults
            self.screen_version += 1
        return self.status

    def main_read(self):
        """The read on the main area now (``Board.main``), or None (idle)."""
        return self.board.main(time.monotonic(), self.idle_after_s)

    def main_changed(self) -> bool:
        """True (once) when the main area's read differs from the one last pushed: it went idle."""
        cur = self.main_read()
        key = id(cur) if cur is not None else None
        if key == self._main_key:
            return False
        self._main_key = key
        return True

    def local_hms(self, unix_s: float | None) -> str:
        """``HH:MM:SS`` in the port's time zone of Unix seconds (system clock); ``—`` for None."""
        if unix_s is None:
            return "—"
        return dt.datetime.fromtimestamp(unix_s, dt.UTC).astimezone(self.tz).strftime("%H:%M:%S")

    def take_refused(self, alive: Alive) -> bool:
        """Put on the board the reads the heartbeat says the gate refused (or let out) without
        journaling them, those not shown yet; True when the screen changed."""
        pid, seen = self._refused_seen
        if alive.pid != pid:
            seen = 0  # another gate process: its numbering starts again
        new = [r for r in alive.refused if r.n > seen]
        for r in new:
            at = dt.datetime.fromtimestamp(r.at, dt.UTC)
            self.board.add(shown_unjournaled(r.n, at, r.uid, r.outcome, person=self._person(r.registration),
                                             tz=self.tz), at_mono=time.monotonic())
        if alive.gate_running:
            self._refused_seen = (alive.pid, max([seen, *(r.n for r in new)]))
        return bool(new)


def _left_s(until: float | None) -> int | None:
    """Whole seconds (rounded up) from now to ``until`` (Unix seconds), or None if past or None."""
    if until is None:
        return None
    left = until - time.time()
    return int(left + 0.999) if left > 0 else None
