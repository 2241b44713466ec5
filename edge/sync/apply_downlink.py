"""Apply downlink snapshots and deltas to the gate's local store, knowing each copy's version.

``Downlink.apply(kind, form, message, received_at)`` hands the message to the store (each store call
is one transaction, so a copy is replaced or patched atomically) and returns a ``SnapshotRequest``
to publish when a delta does not follow the version the gate holds (the gate keeps its copy and
asks the office for a fresh snapshot; the delta is ignored). A snapshot or delta older than the copy
is ignored. A roster's union inspectors (names for the watchman's screen) go to
``edge.sync.inspectors.InspectorFile`` when one is given. ``copies()`` reports, per kind, the version held, when the office published it and when
the gate applied it (the age feeds the G8 stale-data rule).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Protocol

import structlog

from edge.rules.model import OpenShift
from wire.downlink import (
    CardsDelta,
    CardsSnapshot,
    EscalaDelta,
    EscalaSnapshot,
    PresenceDelta,
    PresenceSnapshot,
    RosterDelta,
    RosterSnapshot,
    SnapshotRequest,
)

log = structlog.get_logger(__name__)


class Store(Protocol):
    """What the downlink needs from ``edge.store`` (see the gate branch for the real one)."""

    def replace_roster(self, version, workers, cards, at) -> None: ...
    def apply_roster_delta(self, from_version, to_version, workers_upsert, cards_upsert, at) -> bool: ...
    def replace_escala(self, version, entries, at) -> None: ...
    def apply_escala_delta(self, from_version, to_version, upsert, remove, at) -> bool: ...
    def replace_office_blocks(self, blocked) -> None: ...
    def add_office_blocks(self, blocked, unblocked=()) -> None: ...
    def set_presence(self, registration, shift, version) -> None: ...
    def versions(self) -> dict: ...


@dataclasses.dataclass
class Copy:
    """One kind of reference data held by the gate: its version and age."""

    version: int | None = None
    published_at: dt.datetime | None = None
    applied_at: dt.datetime | None = None


class Downlink:
    """Applies downlinks for one gate. Not thread-safe: call from one thread (the sync pump)."""

    def __init__(self, store: Store, gate_id: str, inspectors=None) -> None:
        self.store = store
        self.gate_id = gate_id
        # edge.sync.inspectors.InspectorFile: the inspectors' names for the screen (None: not kept)
        self.inspectors = inspectors
        self._copies = {k: Copy() for k in ("roster", "cards", "escala", "presence")}
        known = store.versions() or {}
        for kind in ("roster", "escala"):  # the store's "cards" is the roster's; ours is the blocklist
            version, updated = known.get(kind, (0, None))
            if version:
                self._copies[kind].version = int(version)
                self._copies[kind].published_at = updated
        self._presence: dict[str, int] = {}  # registration -> version of its newest presence change
        self.ignored = 0
        self.requested = 0

    def copies(self) -> dict[str, Copy]:
        """Per kind: version held, when published by the office, when applied here."""
        return {k: dataclasses.replace(v) for k, v in self._copies.items()}

    def apply(self, kind: str, form: str, msg, received_at: dt.datetime) -> SnapshotRequest | None:
        """Apply one decoded downlink message. Returns a snapshot request to publish, or None."""
        copy = self._copies[kind]
        if form == "snapshot":
            if copy.version is not None and msg.version <= copy.version and kind != "presence":
                self.ignored += 1  # retained snapshot we already hold, or an older one
                return None
            self._apply_snapshot(kind, msg)
            self._set(copy, msg.version, msg.at, received_at)
            return None
        if kind == "presence":
            return self._apply_presence_delta(msg, received_at)
        if copy.version is not None and msg.to_version <= copy.version:
            self.ignored += 1  # old delta (already contained in our copy)
            return None
        if copy.version != msg.from_version or not self._apply_delta(kind, msg):
            self.requested += 1
            return SnapshotRequest(
                gate_id=self.gate_id, kind=kind, have_version=copy.version, at=received_at
            )
        self._set(copy, msg.to_version, msg.at, received_at)
        return None

    @staticmethod
    def _set(copy: Copy, version: int, published: dt.datetime, received: dt.datetime) -> None:
        copy.version = version
        copy.published_at = published
        copy.applied_at = received

    def _apply_snapshot(self, kind: str, msg) -> None:
        if isinstance(msg, RosterSnapshot):
            self.store.replace_roster(msg.version, msg.workers, msg.cards, msg.at)
            self._inspectors("replace", msg.inspectors)
        elif isinstance(msg, EscalaSnapshot):
            self.store.replace_escala(msg.version, msg.entries, msg.at)
        elif isinstance(msg, CardsSnapshot):
            self.store.replace_office_blocks(msg.blocked)  # a card no longer listed is admitted again
        elif isinstance(msg, PresenceSnapshot):
            listed = {row.registration for row in msg.open}
            for registration in list(self._presence):
                if registration not in listed and self._presence[registration] <= msg.version:
                    self.store.set_presence(registration, None, msg.version)
                    del self._presence[registration]
            for row in msg.open:
                if row.gate_id == self.gate_id:
                    continue  # our own admissions are known locally
                if self._presence.get(row.registration, -1) <= msg.version:
                    self.store.set_presence(row.registration, _shift(row), msg.version)
                    self._presence[row.registration] = msg.version

    def _apply_delta(self, kind: str, msg) -> bool:
        if isinstance(msg, RosterDelta):
            applied = bool(
                self.store.apply_roster_delta(
                    msg.from_version, msg.to_version, msg.workers_upsert, msg.cards_upsert, msg.at
                )
            )
            if applied:
                self._inspectors("upsert", msg.inspectors_upsert)
            return applied
        if isinstance(msg, EscalaDelta):
            return bool(
                self.store.apply_escala_delta(msg.from_version, msg.to_version, msg.upsert, msg.remove, msg.at)
            )
        if isinstance(msg, CardsDelta):
            self.store.add_office_blocks(msg.blocked, unblocked=msg.unblocked)
            return True
        raise TypeError(f"not a delta: {type(msg).__name__}")

    def _inspectors(self, how: str, rows) -> None:
        """The inspectors' names for the screen (issue 33); a write that fails is logged: the
        screen then names them as before, the gate decides the same."""
        if self.inspectors is None:
            return
        try:
            getattr(self.inspectors, how)(rows)
        except OSError as exc:
            log.warning("inspectors_not_written", error=str(exc))

    def _apply_presence_delta(self, msg: PresenceDelta, received_at: dt.datetime) -> None:
        if msg.open is not None and msg.open.gate_id == self.gate_id:
            return None  # our own admission, relayed back
        if self._presence.get(msg.registration, -1) >= msg.version:
            self.ignored += 1
            return None
        self.store.set_presence(msg.registration, _shift(msg.open) if msg.open else None, msg.version)
        self._presence[msg.registration] = msg.version
        copy = self._copies["presence"]
        self._set(copy, max(copy.version or 0, msg.version), msg.at, received_at)
        return None


def _shift(row) -> OpenShift:
    return OpenShift(
        registration=row.registration, gate_id=row.gate_id, ship=row.ship, admitted_at=row.admitted_at
    )
