"""The office's enrol mode in the gate loop (issue 34, ``edge.loop``): the ``EnrolCommand``
through the inbox (``enrol_command``), its start and cancel (``_apply_enrol``), its deadline
(``_expire_enrol``) and what the heartbeat shows of it (``enrol_state``).
A mixin of ``edge.loop.GateLoop``: it works on the loop's inbox and enrol state.
"""

from __future__ import annotations

import queue
import time

import structlog

from edge.rules.model import EnrolMode, Now
from wire.downlink import EnrolCommand

log = structlog.get_logger("edge.loop")


class EnrolModes:
    """Enrol mode of ``edge.loop.GateLoop`` (see there for the attributes it shares)."""

    def enrol_command(self, command: EnrolCommand) -> None:
        """Hand an office ``EnrolCommand`` to the loop (any thread: the sync's); applied in order
        with the reads. Waits at most 1 s for room in the inbox; a command that still finds it full
        is logged and dropped (the office's deadline ends its session)."""
        try:
            self.inbox.put(command, timeout=1.0)
        except queue.Full:
            log.warning("enrol_command_dropped", session=command.session, action=command.action)

    def enrol_state(self) -> dict | None:
        """The enrol mode in force, for the heartbeat: ``{"session", "registration", "until"}``
        (``until``: Unix seconds, system clock), or None."""
        mode, until = self._enrol, self._enrol_until_unix
        if mode is None or until is None:
            return None
        return {"session": mode.session, "registration": mode.registration, "until": until}

    def _apply_enrol(self, cmd: EnrolCommand, now: Now) -> None:
        """Start or cancel enrol mode (see the module doc). A start already past its ``until`` on a
        trusted clock, or with no time left, is ignored (logged)."""
        if cmd.action == "cancel":
            if self._enrol is not None and self._enrol.session == cmd.session:
                log.info("enrol_ended", session=cmd.session, by="cancel")
                self._enrol = self._enrol_until_unix = None
            return
        left_s = float(cmd.timeout_s)
        if cmd.until is not None and now.clock_trusted:
            left_s = min(left_s, (cmd.until - now.wall).total_seconds())
        if left_s <= 0:
            log.warning("enrol_ignored", session=cmd.session, reason="expired")
            return
        self._enrol = EnrolMode(session=cmd.session, registration=cmd.registration,
                                until_mono_ns=now.mono_ns + int(left_s * 1e9))
        self._enrol_until_unix = time.time() + left_s
        log.info("enrol_started", session=cmd.session, registration=cmd.registration, seconds=round(left_s, 1))

    def _expire_enrol(self, now: Now) -> None:
        if self._enrol is not None and not self._enrol.active(now.mono_ns):
            log.info("enrol_ended", session=self._enrol.session, by="timeout")
            self._enrol = self._enrol_until_unix = None
