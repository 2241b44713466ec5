"""One escala per served port (issue 37 item 4; Lei 12.815 arts. 32-33; RULES.md G5, G1).

A gate reads the escala entries of the other gates of its port (G5: a worker dispatched at another
gate of the port); another port's entries are of no use to it (their workers are refused at G1 by
its port's roster) and tell it another OGMO's dispatches. So the publisher of a port
(``central.broadcast.registry_source``) sends only the entries at its port's gates, a gate's port
read as the office's pages and the rotation read it (``central.ledger.gate_ports.port_of``: its
events' port, else its ``add-gate --nats-users ... --port`` registration, else the home port).

The escala's version chain stays the one of every port (the newest escala change row; another
port's change moves it with an empty delta); on an office of several ports ``ESCALA_PORT`` is
added to the low part, above that day's single-port version, so a gate that held the all-ports
escala of before takes its port's snapshot. An office of one port: every entry, the versions of before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sqlalchemy.orm import Session

from central.ledger.gate_ports import port_of
from portgate.records import EscalaEntry

ESCALA_PORT = 2**31  # added to the escala version's low part (change ids stay far below)


def at_port(session: Session, port: str, served: Sequence[str],
            registered: Mapping[str, str]) -> Callable[[EscalaEntry], bool]:
    """``entry -> bool``: the entry's gate is of ``port`` (``port_of`` over the office's ``served``
    ports, home first, and its ``registered`` gates). Reads the gates' first events once."""
    of = port_of(session.connection(), served, registered)
    return lambda entry: of(entry.gate_id) == port
