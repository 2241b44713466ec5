"""Prometheus plumbing shared by the gate and the office (prometheus-client, default registry).

Each service calls ``serve(port, addr)`` once at start (``metrics_port`` in its config; 0 = off),
then attaches its own *callback gauges* (``edge.metrics.watch_gate``, ``central.metrics.watch_ingest``):
their value is computed at scrape time from the live objects, so they are never stale and cost
nothing between scrapes. ``flag(fn)`` turns a predicate into such a callback.

The families are split by service: the gate's live in ``edge.metrics`` (and ``drivers.metrics``,
``edge.sync``), the office's in ``central.metrics`` (and ``central.ingest.worker``); neither
process imports the other's, so neither exposes the other's families. A label naming a gate is
always ``gate_id``. Labelled counters are created at 0 for every label value known at start, so
``increase()`` sees their first event.
"""

from __future__ import annotations

import errno
from collections.abc import Callable

import structlog
from prometheus_client import REGISTRY, start_http_server

from portgate.errors import ConfigError

log = structlog.get_logger(__name__)

def serve(port: int, addr: str = "127.0.0.1", *, setting: str = "$.metrics_port"):
    """Start the HTTP endpoint (``GET /metrics``) on ``addr:port`` in a daemon thread.

    ``port`` 0 means metrics are off: returns None. Returns the server object otherwise. Raises
    ``ConfigError`` naming ``setting`` (``$.metrics_port``, ``--metrics-port``) when the port
    cannot be listened on (``cannot_listen``: taken, an address not of this machine): the service
    then stops, a misconfigured port is a config error the operator must see.
    """
    if not port:
        return None
    try:
        result = start_http_server(port, addr=addr, registry=REGISTRY)
    except OSError as exc:
        raise ConfigError(cannot_listen(addr, port, exc), key=setting) from exc
    server = result[0] if isinstance(result, tuple) else result
    log.info("metrics_listening", addr=addr, port=port)
    return server


#: why a port cannot be listened on, for the errnos an operator meets (else the system's words)
_LISTEN_WHY = {errno.EADDRINUSE: "already in use", errno.EADDRNOTAVAIL: "not an address of this machine",
               errno.EACCES: "Permission denied"}


def cannot_listen(host: str, port: int, exc: OSError) -> str:
    """The one text of a service's port that cannot be listened on (metrics ports, ``office serve
    --port``): "cannot listen on HOST:PORT (already in use)"."""
    why = _LISTEN_WHY.get(exc.errno, exc.strerror or str(exc))
    return f"cannot listen on {host}:{port} ({why})"


def flag(fn: Callable[[], object]) -> Callable[[], float]:
    """A gauge callback: 1.0 when ``fn()`` is truthy, 0.0 when falsy or when it raises."""
    def get() -> float:
        try:
            return 1.0 if fn() else 0.0
        except Exception:  # a scrape must never break the service
            return 0.0

    return get
