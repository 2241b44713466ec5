"""The registry pages of an office of several ports (issue 37 item 4; ``central.web.ports``): a
worker, his cards and his cases are of his port (``workers.port``), a case of its event's port
(``cases.port``; ``central.registry.worker_ports``). A page of one worker is served to a user whose
view holds the worker's port; for any other worker it answers exactly as for a registration that
does not exist (404, "no worker with registration ..."), so a port's clerk learns nothing of another
port's registry. ``of_worker`` wraps such an endpoint (inside ``guarded``: it reads
``request.state.ports``); ``import_scope`` and ``new_worker_port`` are what an import and the
add-worker form of a user may do with ports.
"""

from __future__ import annotations

import functools

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from central.ledger.gate_ports import port_of as gate_port_of
from central.registry.store import PortScope
from central.registry.worker_ports import port_of, stored_ports, worker_in, worker_port
from central.web.render import bad_input


def no_worker(registration: str) -> str:
    """The refusal of an unknown registration, as ``central.registry.store.get_worker`` words it."""
    return f"registration: no worker with registration {registration!r}"


def of_worker(fn):
    """Mark ``fn`` (an endpoint under ``/workers/{registration}``) per port and answer 404
    ``no_worker`` when the registration is not a worker of the view's ports (``worker_in``: a worker
    of another port and no worker alike); a single-port office (``request.state.ports`` None)
    checks nothing here."""

    @functools.wraps(fn)
    async def endpoint(request: Request):
        ports = request.state.ports
        if ports is not None:
            web = request.app.state.web
            reg = request.path_params["registration"]
            if not await run_in_threadpool(web.read, worker_in, reg, ports, web.ports):
                return bad_input(request, no_worker(reg), status_code=404)
        return await fn(request)

    endpoint.per_port = True  # type: ignore[attr-defined]
    return endpoint


def gate_offered(conn, registration: str, ports, served, registered=None):
    """The test "may enrol mode for ``registration`` run at this gate" (the worker page's gate list
    and its ``POST .../enrol``) of a view of ``ports`` (``request.state.ports``) on an office serving
    ``served`` (home first), ``registered`` the gates' ports from ``add-gate --port``: ``None`` (every
    gate) on a single-port office (``ports`` None); else ``gate_id -> bool``, True when the gate's
    port (``central.ledger.gate_ports.port_of``) is the worker's (``workers.port``, none stored: the
    home port; ``of_worker`` already made it one of the view's). A gate whose port the office does
    not know is offered only to a view of every served port (as the live page shows it), so a port's
    clerk is never offered, nor may start, another port's gate."""
    if ports is None:
        return None
    mine = port_of(worker_port(conn, registration)[1], served)
    gate, every = gate_port_of(conn, served, registered), set(ports) >= set(served)
    return lambda gate_id: (p := gate(gate_id)) == mine or (p is None and every)


def offered_gates(request: Request, session, registration: str):
    """``gate_offered`` of this request's view for ``registration`` (inside a session's thread)."""
    web = request.app.state.web
    return gate_offered(session.connection(), registration, request.state.ports, web.ports, web.gate_registry)


def default_port(request: Request) -> str | None:
    """The port a new worker of this user's is of when he names none: the port his view shows, else
    his only port; None (the home port) on a single-port office or a view of several ports."""
    view, scope = request.state.ports or (), request.state.port_scope or ()
    if len(view) == 1:
        return view[0]
    return scope[0] if len(scope) == 1 else None


def import_scope(request: Request) -> PortScope:
    """What a web user's import may do with ports (``central.registry.store.import_files``): name
    his ports in a ``port`` cell and restate or give cards to his ports' workers only."""
    served = request.app.state.web.ports
    scope = tuple(request.state.port_scope or ())
    if not served:
        return PortScope()
    return PortScope(allowed=scope, scope=scope, served=tuple(served))


def new_worker_port(request: Request, typed: str) -> tuple[str | None, str | None]:
    """``(port, refusal)`` of the add-worker form's ``port`` field: the port typed if it is one of
    the user's (``default_port`` when empty), else a refusal naming his ports; ``(None, None)`` on a
    single-port office (the home port)."""
    scope = tuple(request.state.port_scope or ())
    if not scope:
        return None, None
    typed = (typed or "").strip()
    if not typed:
        return default_port(request), None
    if typed not in scope:
        return None, f"port {typed[:64]!r} is not one of {', '.join(scope)}"
    return typed, None


def regs_in_view(conn, registrations, ports, served) -> set[str]:
    """The registrations among ``registrations`` whose worker is of ``ports`` (a registration the
    registry does not hold counts as the home port's, ``served[0]``): what a pay page of a view of
    some ports shows (a statement follows its worker's port)."""
    regs = list(dict.fromkeys(registrations))
    stored, wanted = stored_ports(conn, regs), set(ports)
    return {r for r in regs if port_of(stored.get(r), served) in wanted}


def partial_view(request: Request) -> tuple[str, ...] | None:
    """The view's ports when they are not every served port (a filter applies), else None."""
    ports, served = request.state.ports, request.app.state.web.ports
    return None if ports is None or set(ports) >= set(served) else tuple(ports)
