"""The one exception tree of portgate (STYLE.md 4).

Split by who is at fault and what the caller can do. Vendor exceptions (pyscard, pyserial, paho,
SQLAlchemy) are translated where they enter, with ``raise ... from exc``; the rest of the code never
catches a vendor exception.

- ``BadInput``: the data given is wrong (a CSV row, a payload, a UID). Fix the data; nothing was
  written. Carries ``where`` (file and line, topic, field) so the message names the row.
- ``ConfigError``: a configuration file is wrong. The service must not start; the message names the
  key and the problem.
- ``ReaderFault``: a card reader failed (unplugged, daemon gone). Drivers recover by themselves; the
  fault is reported as an event and a metric.
- ``BrokerUnavailable``: the MQTT broker cannot be reached. Keep journaling; the outbox drains later.
- ``StoreError``: a local database is unusable (corrupt, full). At boot: quarantine and start fresh.
"""

from __future__ import annotations


class PortgateError(Exception):
    """Root of every error portgate raises on purpose."""


class BadInput(PortgateError):
    """Input data is invalid. ``where`` names the place (e.g. ``workers.csv:12``, a topic, a field)."""

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.where = where
        self.reason = message
        super().__init__(f"{where}: {message}" if where else message)


class ConfigError(PortgateError):
    """A configuration file or setting is invalid; ``key`` names it. The service must not start."""

    def __init__(self, message: str, *, key: str | None = None, path: str | None = None) -> None:
        self.key = key
        self.path = path
        self.reason = message
        where = ":".join(p for p in (path, key) if p)
        super().__init__(f"{where}: {message}" if where else message)


class ReaderFault(PortgateError):
    """A card reader failed. The driver retries by itself; callers report it, never crash on it."""


class BrokerUnavailable(PortgateError):
    """The MQTT broker cannot be reached. Events stay in the outbox until it can."""


class StoreError(PortgateError):
    """A local database cannot be used (corrupt, unwritable)."""


class StoreUnavailable(StoreError):
    """A database server cannot be reached (yet): the command exits 1, not 2, so systemd's
    ``Restart=on-failure`` tries again (``RestartPreventExitStatus=2`` only stops configuration errors)."""

    exit_code = 1


class StoreLocked(StoreError):
    """A local SQLite file is locked by another process (another gate service on the same state
    directory, a ``sqlite3`` shell or a backup holding a write transaction). ``path`` names the file,
    ``waited_s`` how long the caller waited for it (0: reported at the first try). Nothing was
    changed in the file. Worth a restart once the other process is gone, so the command exits 1
    (systemd's ``Restart=on-failure`` tries again; ``RestartPreventExitStatus=2`` only stops
    configuration errors)."""

    exit_code = 1

    def __init__(self, path, *, waited_s: float = 0) -> None:
        self.path = path
        self.waited_s = waited_s
        name = getattr(path, "name", None) or str(path).rsplit("/", 1)[-1]
        gave_up = f"; still locked after {waited_s:g} s, gave up" if waited_s else ""
        super().__init__(f"{name} is locked by another process (another gate service running?): {path}"
                         f"{gave_up}; stop that process (fuser -v {path} names it)")


class StoreConflict(StoreError):
    """Another run wrote the same rows meanwhile (a unique key taken, a lock held): nothing of this
    run is stored and running it again succeeds, so the command exits 1 (transient), not 2."""

    exit_code = 1
