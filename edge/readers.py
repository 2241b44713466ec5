"""Build the configured card readers (``[[readers]]`` in gate.toml).

``fifo`` is built here (``portgate.testkit.fifo_reader``); the hardware drivers (serial, pcsc,
wedge, fake) live in ``drivers/`` and are imported lazily by name, so a gate imports only the
driver it uses. Each driver module exposes ``open_reader(config, on_status) -> Reader``.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from drivers.base import Reader, StatusCallback
from edge.config import ReaderConfig
from portgate.errors import ConfigError


def open_reader(cfg: ReaderConfig, on_status: StatusCallback) -> Reader:
    """One reader from its config. Raises ``ConfigError`` naming the reader if its driver is not
    available in this build or refuses the settings."""
    if cfg.driver == "fifo":
        from portgate.testkit.fifo_reader import FifoReader

        if not cfg.device:
            raise ConfigError("fifo reader needs device = <path of the FIFO>", key=f"readers.{cfg.id}.device")
        return FifoReader(cfg.id, cfg.kind, cfg.device, on_status=on_status)
    try:
        module = importlib.import_module(f"drivers.{cfg.driver}")
        factory = module.open_reader
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"driver {cfg.driver!r} is not available: {exc}", key=f"readers.{cfg.id}.driver") from exc
    return factory(cfg, on_status)


def open_readers(configs: Sequence[ReaderConfig], *, on_status: StatusCallback) -> list[Reader]:
    ids = [c.id for c in configs]
    if len(set(ids)) != len(ids):
        raise ConfigError("reader ids must be unique", key="readers")
    return [open_reader(c, on_status) for c in configs]
