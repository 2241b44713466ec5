"""The rotation by port (issue 37 item 4; R1, R2; Lei 12.815 arts. 32-33: each port's OGMO keeps its
own registry and its own rotation).

On an office of several ports (central.toml ``ports``) one ledger holds every port's workers
(``workers.port``; NULL the office's home port) and escala. A requisition, and each escala row made
from it, is of its gate's port (``central.ledger.gate_ports.port_of``: the gate's events, else its
registration; on an office of several ports a gate with neither has no port and a requisition at
it is refused, ``portless_requisitions``), as a ship call is. A dispatch fills a requisition only from its
port's workers, in that port's rotation order (``central.rotation.service.dispatch_day`` runs the
pure ``engine.dispatch`` once per port); a refusal or substitution takes the next worker of the
entry's port. ``RotationPorts.view`` is what a caller may see and change (a web user's
``request.state.ports``): a requisition at another port's gate is refused, another port's escala
row answers as a missing one. ``RotationPorts()`` (no ports given) is the office of one port: no
split, no filter.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping, Sequence

from sqlalchemy import DateTime, column, select, table, true
from sqlalchemy.orm import Session

from central.ledger.gate_ports import gate_ports, port_of
from central.ledger.home import ledger_ports, need_config, need_home, need_served  # noqa: F401 (importable here)
from central.registry.schema import workers
from central.registry.worker_ports import in_ports
from central.rotation.engine import Requisition
from portgate.errors import BadInput
from portgate.records import Worker


@dataclasses.dataclass(frozen=True)
class RotationPorts:
    """The office's ports as the rotation reads them. ``served``: its ports, home first
    (``CentralConfig.served_ports``; one or none: a single-port office, nothing split);
    ``registered``: gate id -> port of the gates registered with ``add-gate --nats-users --port``;
    ``view``: the ports the caller may see and change (None: every port)."""

    served: tuple[str, ...] = ()
    registered: Mapping[str, str] = dataclasses.field(default_factory=dict)
    view: tuple[str, ...] | None = None

    @property
    def split(self) -> bool:
        """True on an office of several ports: the rotation runs per port."""
        return len(self.served) > 1

    @property
    def narrowed(self) -> tuple[str, ...] | None:
        """The view's ports when they are not every served port (a filter applies), else None."""
        if not self.split or self.view is None or set(self.view) >= set(self.served):
            return None
        return tuple(self.view)

    def home(self, stored: str | None) -> str | None:
        """A worker's port: his stored ``workers.port``, else the home port."""
        return stored or (self.served[0] if self.served else None)


def gate_port(session: Session, ports: RotationPorts) -> Callable[[str | None], str | None]:
    """``gate id -> port`` (``central.ledger.gate_ports.port_of``) of the office ``ports``."""
    return port_of(session.connection(), ports.served, ports.registered)


def shown(session: Session, ports: RotationPorts | None) -> Callable[[str | None], bool] | None:
    """The test "is a row of this gate in the caller's view" (``RotationPorts.view``), or None when
    nothing is filtered (no ports, one port, or a view of every port)."""
    wanted = ports.narrowed if ports is not None else None
    if wanted is None:
        return None
    port = gate_port(session, ports)
    return lambda gate_id: port(gate_id) in wanted


def workers_in(ports: RotationPorts | None):
    """The SQL condition on ``workers`` "registered at a port of the view" (``in_ports``), ``true()``
    when nothing is filtered (``RotationPorts.narrowed``)."""
    wanted = ports.narrowed if ports is not None else None
    return true() if wanted is None else in_ports(workers.c.port, wanted, ports.served)


def count_shown(session: Session, ports: RotationPorts | None, rows) -> int:
    """The sum of ``n`` over ``(gate id, n)`` ``rows`` whose gate is in the view (``shown``)."""
    keep = shown(session, ports)
    return sum(n for gate, n in rows if keep is None or keep(gate))


def worker_port_map(session: Session, ports: RotationPorts) -> dict[str, str | None]:
    """registration -> port (``RotationPorts.home`` of ``workers.port``) of every registered worker."""
    return {reg: ports.home(stored) for reg, stored in session.execute(select(workers.c.registration, workers.c.port))}


def foreign_requisitions(refs_gates: Sequence[tuple[str, str]], port: Callable[[str | None], str | None],
                         view: Sequence[str]) -> list[str]:
    """``REF: gate_id 'G' is not a gate of port(s) P`` for each ``(ref, gate id)`` whose gate's port
    is not in ``view``: an unknown gate (of no port) and another port's gate alike."""
    return [f"{ref}: gate_id {gate[:64]!r} is not a gate of port(s) {', '.join(view)}"
            for ref, gate in refs_gates if port(gate) not in view]


#: the columns of ``central.calls.schema.ship_calls`` a requisition's ship is checked against
_CALLS = table("ship_calls", column("ship"), column("gate_id"), column("arrival", DateTime(timezone=True)),
               column("departure", DateTime(timezone=True)))


def unknown_requisitions(refs_gates: Sequence[tuple[str, str]], known: set[str]) -> list[str]:
    """``REF: gate_id 'G' is not a known gate`` for each ``(ref, gate id)`` whose gate has sent no
    event and is not registered (``known``): refused to a user who does not see every port, since
    an unknown gate has no port."""
    return [f"{ref}: gate_id {gate[:64]!r} is not a known gate" for ref, gate in refs_gates if gate not in known]


def portless_requisitions(refs_gates: Sequence[tuple[str, str]], port: Callable[[str | None], str | None]
                          ) -> list[str]:
    """``REF: gate_id 'G' has no registered port: ...`` for each ``(ref, gate id)`` whose gate has
    neither events nor a registration on an office of several ports (``port_of`` is None): whose
    port's workers would fill it is not known."""
    return [f"{ref}: gate_id {gate[:64]!r} has no registered port: register it with portgate central add-gate "
            "--port PORT" for ref, gate in refs_gates if port(gate) is None]


def ship_call_problems(session: Session, reqs: Sequence[Requisition],
                       port: Callable[[str | None], str | None]) -> list[str]:
    """``REF: ship N is in port at another port's gate`` for each requisition whose ship (IMO) has a
    call in port on the requisition's day (``calls_in_port``, the UTC day +-1 day) at a gate of
    another port than the requisition's gate (a ship is at one port at a time): the other port's
    gate is not named; ``REF: ship N is in port at gate 'G', which has no registered port: ...`` when
    the call's gate is of no port (``port_of`` None). Empty when no call names the ship or its call
    has no gate. Reads ``ship_calls``
    through ``_CALLS`` (``central.calls`` reads the escala: importing it here would be a package cycle)."""
    problems = []
    for day in sorted({r.date for r in reqs}):
        start = dt.datetime.combine(day, dt.time(), dt.UTC) - dt.timedelta(days=1)
        end = start + dt.timedelta(days=3)
        calls = session.execute(select(_CALLS.c.ship, _CALLS.c.gate_id).where(
            _CALLS.c.arrival < end, _CALLS.c.departure.is_(None) | (_CALLS.c.departure > start),
            _CALLS.c.gate_id.is_not(None)))
        at = {ship: (gate, port(gate)) for ship, gate in calls}
        for r in (r for r in reqs if r.date == day and r.ship in at):
            gate, its = at[r.ship]
            if its is None and port(r.gate_id) is not None:  # a gate of no port: named (no port's secret)
                problems.append(f"{r.ref}: ship {r.ship} is in port at gate {gate[:64]!r}, which has no "
                                "registered port: register it with portgate central add-gate --port PORT")
            elif its != port(r.gate_id):
                problems.append(f"{r.ref}: ship {r.ship} is in port at another port's gate")
    return problems


def by_port(session: Session, reqs: list[Requisition], workers: list[Worker], ports: RotationPorts | None
            ) -> list[tuple[list[Requisition], list[Worker]]]:
    """The requisitions grouped by their gate's port, each with its port's workers (R1 per port:
    Lei 12.815 arts. 32-33); one group of every requisition and worker on an office of one port.
    ``BadInput`` (one ``REF: ...`` per requisition) for a requisition at a gate outside
    ``ports.view`` (``foreign_requisitions``) or, for a view of some ports, unknown
    (``unknown_requisitions``), for a gate without a port (``portless_requisitions``), and for a
    ship in port at another port's gate
    (``ship_call_problems``): nothing is dispatched then."""
    if ports is None or not ports.split:
        return [(reqs, workers)]
    port = gate_port(session, ports)
    refs_gates = [(r.ref, r.gate_id) for r in reqs]
    if ports.narrowed is not None:
        known = set(gate_ports(session.connection())) | set(ports.registered)
        problems = unknown_requisitions(refs_gates, known) + foreign_requisitions(
            [(ref, gate) for ref, gate in refs_gates if gate in known], port, ports.narrowed)
    else:
        problems = portless_requisitions(refs_gates, port)
    problems += ship_call_problems(session, reqs, port)
    if problems:
        raise BadInput("; ".join(problems))
    of_worker = worker_port_map(session, ports)
    groups: dict[str | None, list[Requisition]] = {}
    for r in reqs:
        groups.setdefault(port(r.gate_id), []).append(r)
    return [(group, [w for w in workers if of_worker.get(w.registration) == p]) for p, group in groups.items()]
