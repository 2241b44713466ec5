"""Office users' port scope (issue 37 item 4, many ports on one ledger).

An office serving several ports (central.toml ``ports``) shows each user the ports his
``office_users.ports`` names (0028): ``None`` (a user made before, or without ``--port``) the
office's home port, ``*`` every port the office serves (an auditor or a federation's user), else port
ids separated by commas. A user with more than one port picks the port a page shows, or all of his
ports (consolidated), with the selector of every page (``POST /port``, kept in the session).

What a request may show is ``request.state.ports``, set by ``central.web.security.guarded``:
``None`` on a single-port office (no filter anywhere: the office of before), else the tuple of ports
the page shows. A page whose figures are filtered by port is marked ``per_port``; every other page is
served only to a user whose view covers all the served ports (403 ``port_scope_page`` otherwise), so
a port's clerk never sees another port's data, even on a page not yet split by port.

The port of a row: an event's own ``events.port``; a gate's is its events' port (``gate_ports``);
a shift's, an alarm's, a coverage alarm's, a ship call's is its gate's. A gate that has sent no event
yet takes its port from what the office knows before (``port_of``): its registration by ``portgate
central add-gate --port`` (``central.ingest.nats_users.registered_ports``), else none: such a
gate is shown to the users of every port only, marked "sem porto registrado" on the live page (a
ship call naming no gate is the home port's). A view of every served port filters nothing
(``keeper``): an all-ports user sees every gate, port known or not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sqlalchemy.engine import Connection

from central.ledger.gate_ports import gate_ports, port_of  # noqa: F401 (importable from here, as before)
from portgate.errors import BadInput
from wire.topics import check_id

ALL = "*"  # office_users.ports: every port the office serves
SESSION_KEY = "port"  # the session's chosen port, or ALL: every port of the user's scope


def per_port(fn):
    """Mark an endpoint whose data is filtered by ``request.state.ports`` (or shows no port's data):
    ``guarded`` serves it to a user of some ports (module doc)."""
    fn.per_port = True
    return fn


def stored_ports(ports: Sequence[str] = (), *, all_ports: bool = False) -> str | None:
    """The ``office_users.ports`` value of ``--port`` (repeatable) / ``--all-ports``: ``None`` for
    neither (the home port), ``*``, or the ports joined by commas. ``BadInput`` for both options,
    or a port that is not a topic id (``wire.topics.check_id``)."""
    if all_ports and ports:
        raise BadInput("give --port or --all-ports, not both", where="--all-ports")
    if all_ports:
        return ALL
    if not ports:
        return None
    for p in ports:
        check_id(p, "--port")
    return ",".join(dict.fromkeys(ports))


def user_ports(stored: str | None, served: Sequence[str]) -> tuple[str, ...]:
    """The served ports a user may see, in the office's order (home port first). ``stored``: his
    ``office_users.ports``; ``served``: ``CentralConfig.served_ports``. A port no longer served is
    left out; an empty result means the user sees nothing."""
    if stored is None:
        return tuple(served[:1])
    if stored == ALL:
        return tuple(served)
    mine = {p.strip() for p in stored.split(",")}
    return tuple(p for p in served if p in mine)


def view_ports(scope: tuple[str, ...], chosen: object) -> tuple[str, ...]:
    """The ports a page shows: the chosen one if it is in ``scope``, else the whole scope."""
    return (chosen,) if isinstance(chosen, str) and chosen in scope else scope


def keeper(conn: Connection, ports: Sequence[str] | None, served: Sequence[str],
           registered: Mapping[str, str] | None = None) -> Callable[[str | None], bool] | None:
    """The test "is this gate's row shown" of a view of ``ports`` (``request.state.ports``) on an office
    serving ``served`` (home first): ``None`` (keep everything) when ``ports`` is None or covers every
    served port, so an all-ports user and the consolidated view see every gate, port known or not;
    else ``(gate_id, port=None) -> bool``: by the row's own ``port`` when it has one (a gate's status
    row, ``gate_status.port``: a gate id at two ports is shown to each port's users with its own
    row), else by ``port_of``."""
    if ports is None or set(ports) >= set(served):
        return None
    wanted, port = set(ports), port_of(conn, served, registered)
    return lambda gate_id, own=None: (own or port(gate_id)) in wanted


def of_gates(conn: Connection, ports: Sequence[str] | None, rows: list[dict], served: Sequence[str],
             registered: Mapping[str, str] | None = None) -> list[dict]:
    """``rows`` (dicts with a ``gate_id``) of the gates of ``ports`` (``keeper``); all of them when
    ``ports`` is None or covers every port of ``served``."""
    keep = keeper(conn, ports, served, registered)
    return rows if keep is None else [r for r in rows if keep(r.get("gate_id"))]
