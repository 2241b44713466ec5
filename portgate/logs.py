"""Logging as a pipeline (STYLE.md 9): structlog key-value events, JSON for journald, colour on a
terminal. Services call ``configure_logging()`` once at start; modules call
``structlog.get_logger(__name__)`` and bind gate id, reader id and event id where they know them.

Secrets never reach a log line: values of keys that look like secrets are masked by
``_redact_secrets`` before rendering.
"""

from __future__ import annotations

import logging
import sys

import structlog

SECRET_KEYS = ("password", "secret", "key", "token", "hmac", "passwd")


def _redact_secrets(_logger, _method, event_dict: dict) -> dict:
    for name in list(event_dict):
        lowered = name.lower()
        if any(word in lowered for word in SECRET_KEYS) and not lowered.endswith(("_file", "_path", "_id")):
            event_dict[name] = "***"
    return event_dict


def configure_logging(*, json: bool | None = None, level: str = "info") -> None:
    """Configure structlog and the stdlib root logger.

    ``json``: True renders one JSON object per line (journald), False colourful console output, None
    picks console when stderr is a terminal. ``level``: debug|info|warning|error.
    """
    if json is None:
        json = not sys.stderr.isatty()
    numeric = getattr(logging, level.upper(), logging.INFO)
    processors = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _redact_secrets,
        structlog.processors.StackInfoRenderer(),
        structlog.processors.format_exc_info,
    ]
    renderer = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    structlog.configure(
        processors=[*processors, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        # one write() per line (WriteLogger), so lines from the office's writer processes sharing
        # stderr never interleave (print() wrote the text and its newline separately)
        logger_factory=structlog.WriteLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(level=numeric, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
