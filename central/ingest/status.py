"""Keep each gate's newest retained status in ``gate_status`` (the live view reads it), under the
status's own port (``GateStatus.port``, checked against its topic by ``central.ingest.check``): the
key is port + gate id (0035), so a gate id at two ports is two rows.

``store`` runs inside the ingest batch's transaction. A status replaces the stored one when it is
not older (``at``), or when it is a Last Will (the broker sends it when the gate is gone, but its
``at`` is the time the gate connected). ``since`` is when the gate entered its current state: kept
while the state and boot id stay, else the status's time (the reception time for a Last Will).
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import and_, delete, select, update
from sqlalchemy.engine import Connection

from central.ledger.schema import gate_status
from portgate.timeutil import as_utc
from wire.downlink import GateStatus


def _readers(s: GateStatus) -> list[dict] | None:
    """The status's readers as the JSON column keeps them (times ISO 8601 UTC), None if not said."""
    if s.readers is None:
        return None
    return [{"reader_id": r.reader_id, "kind": r.kind, "state": r.state,
             "since": r.since.isoformat() if r.since else None,
             "last_read_at": r.last_read_at.isoformat() if r.last_read_at else None,
             "detail": r.detail} for r in s.readers]


def _key(s: GateStatus):
    """The stored row of the status's port and gate (``gate_status``'s key)."""
    return and_(gate_status.c.port == s.port, gate_status.c.gate_id == s.gate_id)


def store(conn: Connection, statuses: list[GateStatus], now: dt.datetime) -> int:
    """Upsert the gates' statuses (in arrival order) under their port; return how many rows changed.
    A row of the gate under the port ``''`` (made before 0035 for a gate that had sent no event) is
    replaced by the first status's port."""
    changed = 0
    for s in statuses:
        row = conn.execute(select(gate_status).where(_key(s))).first()
        at = s.at.astimezone(dt.UTC)
        if row is not None and s.reason != "will" and at < as_utc(row.at):
            continue  # an older status delivered late
        same = row is not None and row.state == s.state and row.boot_id == s.boot_id
        since = as_utc(row.since) if same else (now if s.reason == "will" else at)
        values = dict(
            state=s.state, reason=s.reason, boot_id=s.boot_id, since=since, at=at, sent_seq=s.sent_seq,
            outbox_depth=s.outbox_depth, oldest_unsent_at=s.oldest_unsent_at, clock_trusted=s.clock_trusted,
            copies_updated_at=s.copies_updated_at, received_at=now, readers=_readers(s),
        )
        if s.reason == "will" and row is not None:  # the Will carries what the gate knew at connect: keep newer figures
            values = {k: v for k, v in values.items()
                      if k in ("state", "reason", "since", "received_at", "boot_id")}
        if row is None:
            conn.execute(delete(gate_status).where(gate_status.c.port == "", gate_status.c.gate_id == s.gate_id))
            conn.execute(gate_status.insert().values(port=s.port, gate_id=s.gate_id, **values))
        else:
            conn.execute(update(gate_status).where(_key(s)).values(**values))
        changed += 1
    return changed
