"""Logging as a pipeline (STYLE.md 9): structlog key-value events, JSON for journald, colour on a
terminal. Services call ``configure_logging()`` once at start; modules call
``structlog.get_logger(__name__)`` and bind gate id, reader id and event id where they know them.

Every line is JSON when ``json`` is on, whoever writes it:

- structlog lines render through the processors below;
- stdlib ``logging`` lines (alembic, paho, sqlalchemy, uvicorn, ``warnings``) reach the root
  logger's one handler, whose ``structlog.stdlib.ProcessorFormatter`` runs the same processors and
  renderer (``logger`` names the library; ``exception`` holds a traceback as one JSON string);
- an uncaught exception in any thread is logged as ``uncaught_exception`` instead of printed.

uvicorn installs its own handlers unless it is started with ``log_config=None``; with that its
lines come here too.

``fields`` are bound for the whole process, every thread included (``structlog.contextvars`` are
per thread: paho's network thread, the uplink pump and the reader threads start empty): the gate
binds ``service``, ``port`` and ``gate_id``, the office ``service`` and ``port``.

Secrets never reach a log line: values of keys that look like secrets are masked by
``_redact_secrets`` before rendering.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
from collections.abc import Mapping

import structlog

SECRET_KEYS = ("password", "secret", "key", "token", "hmac", "passwd")

_PROCESS: dict[str, object] = {}  # fields of every line of this process (configure_logging)
_HANDLER_NAME = "portgate"


@functools.lru_cache(maxsize=512)  # a process logs a few dozen distinct key names
def _is_secret(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in SECRET_KEYS) and not lowered.endswith(("_file", "_path", "_id"))


def _redact_secrets(_logger, _method, event_dict: dict) -> dict:
    for name in list(event_dict):
        if _is_secret(name):
            event_dict[name] = "***"
    return event_dict


def _process_fields(_logger, _method, event_dict: dict) -> dict:
    for name, value in _PROCESS.items():
        event_dict.setdefault(name, value)
    return event_dict


def bind_process(**fields: object) -> None:
    """Add ``fields`` to every later line of this process, from any thread."""
    _PROCESS.update(fields)


def configure_logging(*, json: bool | None = None, level: str = "info",
                      fields: Mapping[str, object] | None = None) -> None:
    """Configure structlog, the stdlib root logger and the uncaught-exception hooks.

    ``json``: True renders one JSON object per line (journald), False colourful console output, None
    picks console when stderr is a terminal. ``level``: debug|info|warning|error. ``fields``:
    bound on every line of the process (replaces those of an earlier call).
    """
    if json is None:
        json = not sys.stderr.isatty()
    numeric = getattr(logging, level.upper(), logging.INFO)
    _PROCESS.clear()
    _PROCESS.update(fields or {})
    shared = [
        structlog.contextvars.merge_contextvars,
        _process_fields,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _redact_secrets,
        structlog.processors.StackInfoRenderer(),
    ]
    renderer = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        # one write() per line (WriteLogger), so lines from the office's writer processes sharing
        # stderr never interleave (print() wrote the text and its newline separately)
        logger_factory=structlog.WriteLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    _route_stdlib(shared, renderer, numeric, json)
    _hook_uncaught(structlog.get_logger("portgate.logs"))


def _route_stdlib(shared: list, renderer, numeric: int, json: bool) -> None:
    """The stdlib root logger (and ``warnings``) through the same processors and renderer, on one
    handler to stderr replacing any other."""
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    *([structlog.processors.format_exc_info] if json else []), renderer],
    ))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(numeric)
    logging.captureWarnings(True)


def _hook_uncaught(log) -> None:
    """An uncaught exception, in the main thread or another, logged as ``uncaught_exception``."""

    def on_uncaught(exc_type, exc, tb, thread=None) -> None:
        log.critical("uncaught_exception", thread=thread, exc_info=(exc_type, exc, tb))

    sys.excepthook = on_uncaught
    threading.excepthook = lambda a: on_uncaught(a.exc_type, a.exc_value, a.exc_traceback,
                                                 a.thread.name if a.thread else None)
