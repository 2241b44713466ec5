"""Build signed gate events for given shifts (tests, the pay benchmark, the demo).

``ShiftEvents`` numbers events per gate (gapless seq, one boot) and signs them with a key, so the
events are exactly what a gate would send: ``admit(...)``/``exit(...)`` return ``wire.events.Event``.
"""

from __future__ import annotations

import datetime as dt
import itertools
import uuid

from wire.events import Dispatch, Event, MealWorkedPayload, TapPayload, sign

KEY = b"test-gate-key"


class ShiftEvents:
    """Event factory for one gate boot. ``mono_origin`` pairs a wall time with mono_ns 0."""

    def __init__(self, gate_id: str = "g1", port: str = "BRSSZ", boot_id: str | None = None,
                 mono_origin: dt.datetime | None = None, key: bytes = KEY) -> None:
        self.gate_id, self.port, self.key = gate_id, port, key
        self.boot_id = boot_id or str(uuid.uuid4())
        self.mono_origin = mono_origin or dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        self._seq = itertools.count(1)

    def tap(self, decision: str, registration: str, at: dt.datetime, dispatch: Dispatch, *,
            trusted: bool = True, wall: dt.datetime | None = None, flags: tuple[str, ...] = ()) -> Event:
        """One tap at true time ``at``; an untrusted clock reports ``wall`` (default 1970 + offset).
        ``flags``: the gate's flags on the decision (e.g. ``("EARLY_EXIT",)``)."""
        mono_ns = int((at - self.mono_origin).total_seconds() * 1_000_000_000)
        if not trusted and wall is None:
            wall = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + (at - self.mono_origin)
        event = Event(
            event_id=str(uuid.uuid4()), port=self.port, gate_id=self.gate_id, boot_id=self.boot_id,
            seq=next(self._seq), occurred_at=(at if trusted else wall).astimezone(dt.UTC),
            clock_trusted=trusted, mono_ns=mono_ns,
            payload=TapPayload(uid="04A1B2C3", reader_id="r1", reader_kind="control",
                               decision=decision, registration=registration, dispatch=dispatch,
                               flags=list(flags)),
        )
        return sign(event, self.key)

    def meal(self, registration: str, at: dt.datetime, dispatch: Dispatch, *,
             inspector: str = "F001") -> Event:
        """The gate's P6 record (inspector's meal mode) for ``registration``'s shift of ``dispatch``."""
        mono_ns = int((at - self.mono_origin).total_seconds() * 1_000_000_000)
        event = Event(
            event_id=str(uuid.uuid4()), port=self.port, gate_id=self.gate_id, boot_id=self.boot_id,
            seq=next(self._seq), occurred_at=at.astimezone(dt.UTC), clock_trusted=True,
            mono_ns=mono_ns,
            payload=MealWorkedPayload(uid="04A1B2C3", registration=registration, dispatch=dispatch,
                                      inspector_uid="0F1F5CA001", inspector_registration=inspector),
        )
        return sign(event, self.key)

    def admit(self, registration: str, at: dt.datetime, dispatch: Dispatch, **kw) -> Event:
        return self.tap("admit", registration, at, dispatch, **kw)

    def exit(self, registration: str, at: dt.datetime, dispatch: Dispatch, **kw) -> Event:
        return self.tap("exit", registration, at, dispatch, **kw)


def dispatch(day: dt.date, period: str, ship: str = "9300001", *, berth: str = "berthed",
             function: str = "vigia", voyage: str = "long_haul", post: str = "portalo") -> Dispatch:
    """An escala dispatch as carried in a tap payload."""
    return Dispatch(date=day, period=period, ship=ship, berth=berth, voyage=voyage, post=post,
                    function=function)
