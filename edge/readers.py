"""Build the configured card readers (``[[readers]]`` in gate.toml).

``fifo`` is built here (``drivers.fifo_reader``); the hardware drivers live in ``drivers/``
and are imported lazily, so a gate imports only the driver it uses:

- ``pcsc``: ``drivers.pcsc.PcscReader(id, kind, name_pattern=device or "*", **options)``;
- ``serial``: ``drivers.serial_rfid.Em4100SerialReader`` (``options.protocol = "em4100"``, default)
  or ``LineSerialReader`` (``protocol = "line"``, reads in ``uid_format``), on ``device``, with
  ``confirm_ms`` when set (confirm-by-repeat; the driver's default otherwise);
- ``wedge``: ``drivers.wedge.WedgeReader(id, kind, device, uid_format=..., **options)``; an input
  node present but without digit keys is a ``ConfigError`` naming the nodes that have them;
- ``fake``: ``drivers.fake.FakeReader(id, kind)`` (scripted in code; the demo feeds it).
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
        from drivers.fifo_reader import FifoReader

        if not cfg.device:
            raise ConfigError("fifo reader needs device = <path of the FIFO>", key=f"readers.{cfg.id}.device")
        return FifoReader(cfg.id, cfg.kind, cfg.device, on_status=on_status)
    opts = dict(cfg.options)
    key = f"readers.{cfg.id}"
    try:
        if cfg.driver == "pcsc":
            cls = importlib.import_module("drivers.pcsc").PcscReader
            return cls(cfg.id, cfg.kind, cfg.device or "*", on_status=on_status, **opts)
        if cfg.driver == "serial":
            module = importlib.import_module("drivers.serial_rfid")
            if cfg.confirm_ms is not None:
                opts["confirm_ms"] = cfg.confirm_ms
            if opts.pop("protocol", "em4100") == "line":
                return module.LineSerialReader(cfg.id, cfg.kind, cfg.device, uid_format=cfg.uid_format,
                                               on_status=on_status, **opts)
            return module.Em4100SerialReader(cfg.id, cfg.kind, cfg.device, on_status=on_status, **opts)
        if cfg.driver == "wedge":
            cls = importlib.import_module("drivers.wedge").WedgeReader
            reader = cls(cfg.id, cfg.kind, cfg.device, uid_format=cfg.uid_format, on_status=on_status, **opts)
            problem = reader.check_device()
            if problem is not None:
                raise ConfigError(problem, key=f"{key}.device")
            return reader
        cls = importlib.import_module("drivers.fake").FakeReader
        return cls(cfg.id, cfg.kind, on_status=on_status, **opts)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"driver {cfg.driver!r} is not available in this build: {exc}",
                          key=f"{key}.driver") from exc
    except TypeError as exc:  # an option the driver does not take
        raise ConfigError(f"bad options for driver {cfg.driver!r}: {exc}", key=f"{key}.options") from exc


def open_readers(configs: Sequence[ReaderConfig], *, on_status: StatusCallback) -> list[Reader]:
    ids = [c.id for c in configs]
    if len(set(ids)) != len(ids):
        raise ConfigError("reader ids must be unique", key="readers")
    return [open_reader(c, on_status) for c in configs]
