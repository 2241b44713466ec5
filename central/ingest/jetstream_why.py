"""Why the JetStream ingest's set-up failed, in the log line's ``cause`` and ``hint`` (issue 37).

``jetstream.ingest_failed`` carried only a traceback whose last line held the reason; the MQTT
ingest's lines say ``cause`` (what is wrong) and ``hint`` (what to change), ``wire.diagnosis``.
``explain`` gives the same two for a NATS failure:

- no quorum: JetStream's ``503 JetStream system temporarily unavailable`` (API error 10008) or an
  API call unanswered in ``[nats] request_timeout_s`` (a stream without a leader drops the ask);
- connection refused / no server reachable: the ``[nats] servers`` tried;
- a stream refused because ``replicas > 1`` on a server that is not clustered (API error 10074):
  permanent, ``config_error`` turns it into the ``ConfigError`` that ends the ingest (rule: a
  configuration the server can never accept is not retried; the office's watchdog stops).
"""

from __future__ import annotations

import asyncio

import nats.errors
from nats.js.errors import APIError

from portgate.errors import ConfigError

REPLICAS_NOT_CLUSTERED = 10074  # JetStream API: "replicas > 1 not supported in non-clustered mode"
NO_QUORUM = 10008  # JetStream API: "JetStream system temporarily unavailable" (503)
MAJORITY_HINT = "fewer than a majority of the cluster's nodes answer: start the stopped nodes"


def cause_of(exc: BaseException) -> str:
    """One short line: a JetStream API error's description and codes, else the exception's
    type and text (no traceback)."""
    if isinstance(exc, APIError):
        return f"{exc.description or 'JetStream API error'} (code {exc.code}, err_code {exc.err_code})"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def config_error(exc: BaseException) -> ConfigError | None:
    """The ``ConfigError`` for a failure no retry can cure (a stream of ``replicas`` > 1 refused by
    a server that is not clustered: err_code 10074 or its description), else None."""
    if not isinstance(exc, APIError):
        return None
    if exc.err_code != REPLICAS_NOT_CLUSTERED and "non-clustered" not in (exc.description or ""):
        return None
    return ConfigError("[nats] replicas > 1 but the NATS server is not clustered (\"%s\"): set [nats] replicas = 1 "
                       "for a single node, or run a cluster of 3 nodes" % (exc.description or "non-clustered"),
                       key="nats.replicas")


def explain(exc: BaseException, settings) -> dict:
    """``{"cause": ..., "hint": ...}`` for the ``jetstream.ingest_failed`` line; ``settings``: the
    ``[nats]`` table (``servers``, ``request_timeout_s``, seconds)."""
    cause, servers, request_timeout_s = cause_of(exc), settings.servers, settings.request_timeout_s
    if isinstance(exc, APIError) and (exc.err_code == NO_QUORUM or exc.code == 503):
        return {"cause": cause, "hint": MAJORITY_HINT}
    if isinstance(exc, (nats.errors.TimeoutError, asyncio.TimeoutError, TimeoutError)):
        return {"cause": cause or "timeout",
                "hint": f"JetStream did not answer within [nats] request_timeout_s ({request_timeout_s:g} s): "
                        f"if {MAJORITY_HINT}; else the servers are overloaded"}
    if isinstance(exc, (nats.errors.NoServersError, ConnectionRefusedError, OSError)):
        return {"cause": cause,
                "hint": f"no NATS server accepted the connection ({', '.join(servers)}): check [nats] servers "
                        "and that nats-server runs"}
    if isinstance(exc, (nats.errors.ConnectionClosedError, nats.errors.NoRespondersError)):
        return {"cause": cause, "hint": "the connection or JetStream went away during the set-up: "
                                        f"if {MAJORITY_HINT}; else it is retried"}
    return {"cause": cause, "hint": "see the traceback at debug level (log_level = \"debug\")"}


class ConnectFailures:
    """nats-py's ``error_cb``: a connection attempt that failed (a refused connection, a server that
    does not answer) as one ``jetstream.connect_failed`` warning with ``cause`` and ``hint`` (the
    1st, 10th and every 100th attempt of a streak: one every ``reconnect_wait_s``), instead of
    nats-py's default, a traceback per attempt. ``reset()`` once connected ends the streak. Once
    ``stopping()`` is true the failure is raised: nats-py's first connect otherwise tries for ever
    (``max_reconnect_attempts=-1``) and the office would not stop on SIGTERM while no server answers."""

    def __init__(self, settings, logger, stopping) -> None:
        self.settings, self.log, self.stopping = settings, logger, stopping
        self.count = 0

    async def report(self, exc: Exception) -> None:
        if self.stopping():
            raise exc
        self.count += 1
        if self.count in (1, 10) or self.count % 100 == 0:
            self.log.warning("jetstream.connect_failed", attempts=self.count,
                             **explain(exc, self.settings))

    def reset(self) -> None:
        self.count = 0
