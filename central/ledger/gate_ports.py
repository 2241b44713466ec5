"""A gate's port on an office of several ports (issue 37 item 4, many ports on one ledger).

A gate's port is its events' port (``events.port`` of its first event, ``gate_ports``), else the port
its stored status came under (``gate_status.port``, 0035: a gate that connected and sent no event
yet); a gate the ledger knows neither way takes it from what the office knows before (``port_of``): its registration
(``portgate central add-gate --port``, ``central.ingest.nats_users.registered_ports``), else, on an
office of one port, that port; on an office of several ports it has none. Here (not in ``central.web``) so that the office pages
(``central.web.ports``) and the rotation (``central.rotation.ports``: a requisition is of its gate's
port) read it the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sqlalchemy import select
from sqlalchemy.engine import Connection

from central.ledger.schema import events, gate_progress, gate_status


def gate_ports(conn: Connection) -> dict[str, str]:
    """gate id -> port, from each known gate's first event (``gate_progress`` and the
    ``(gate_id, seq)`` index: one look-up per gate, not a scan of the events); a gate with no event
    from its stored status's port (``gate_status.port``; the first received when it has several,
    none when ``''``: a row made before 0035 whose port the ledger did not know)."""
    first = (select(events.c.port).where(events.c.gate_id == gate_progress.c.gate_id)
             .order_by(events.c.seq).limit(1).scalar_subquery())
    found = {g: p for g, p in conn.execute(select(gate_progress.c.gate_id, first)) if p is not None}
    for g, p in conn.execute(select(gate_status.c.gate_id, gate_status.c.port).where(gate_status.c.port != "")
                             .order_by(gate_status.c.received_at, gate_status.c.port)):
        found.setdefault(g, p)
    return found


def port_of(conn: Connection, served: Sequence[str],
            registered: Mapping[str, str] | None = None) -> Callable[[str | None], str | None]:
    """``gate id -> port``, for any gate, also one that never sent an event, in this order: the port
    of its first event (``gate_ports``); else its registration (``registered``: gate id -> port,
    ``central.ingest.nats_users.registered_ports``, from ``add-gate --port``); else the office's
    port on an office of one port. On an office of several ports such a gate has no port: ``None``
    ("sem porto registrado": shown to users of every port only, no requisition at it, no escala
    sent for it). No gate (``None``: a ship call or an alarm naming none) is the home port's
    ``served[0]``; everything is ``None`` when ``served`` is empty."""
    seen = gate_ports(conn)
    known = dict(registered or {})
    home = served[0] if served else None
    unknown = home if len(served) == 1 else None
    return lambda gate_id: (home if gate_id is None
                            else seen.get(gate_id) or known.get(gate_id) or unknown)  # type: ignore[arg-type]
