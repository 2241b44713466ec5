"""Gate configuration (``gate.toml``): parsed and validated completely at start-up (STYLE.md 12).

See ``config/gate.example.toml`` and docs/gate.md for every key. A bad key stops the service with a
``ConfigError`` naming it (``$.readers[0].driver``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from edge.sync.settings import SyncSettings
from portgate.config import load_toml
from portgate.errors import BadInput, ConfigError
from wire.mqtt_config import MqttConfig
from wire.topics import check_id


#: The drivers that open a path, and what their ``device`` names (a PC/SC reader's empty device
#: means "any reader", a fake reader has none).
DEVICE_NEEDED = {"serial": "the serial port (device = \"/dev/ttyUSB0\")",
                 "wedge": "the input device (device = \"/dev/input/by-id/...-event-kbd\")",
                 "fifo": "the FIFO's path"}


class ReaderConfig(msgspec.Struct, forbid_unknown_fields=True):
    """One card reader. ``driver``: serial | pcsc | fake | wedge | fifo (fifo: lines ``UID`` or
    ``control UID`` from a named pipe, for tests and the demo). ``device``: serial port, PC/SC
    reader name, input device or FIFO path. ``options``: passed to the driver as keyword arguments.
    ``confirm_ms`` (serial readers only): publish a UID only once an identical repeat comes within
    this many ms; absent = the driver's default (150 for EM4100 readers, off for line readers), 0 = off.
    ``direction`` (G6, G9): ``in`` (entry only: a worker aboard is shown "already aboard"), ``out``
    (exit only: a read with no open shift is an EXIT flagged NO_ENTRY) or ``both`` (default: the
    worker's state says entry or exit). Only a control reader takes ``in``/``out``.
    """

    id: str
    kind: Literal["control", "badge"]
    driver: Literal["serial", "pcsc", "fake", "wedge", "fifo"]
    device: str = ""
    direction: Literal["in", "out", "both"] = "both"
    # the form this reader produces (portgate.uid): whole UID, or only its low 32/24 bits
    uid_format: Literal["hex", "hex_reversed", "decimal10_le", "decimal10", "dez8", "wiegand26"] = "hex"
    confirm_ms: Annotated[int, msgspec.Meta(ge=0, le=2000)] | None = None
    options: dict[str, str | int | float | bool] = {}

    def __post_init__(self) -> None:
        needs = DEVICE_NEEDED.get(self.driver)
        if needs and not self.device.strip():
            raise ValueError(f"device is empty: a {self.driver} reader needs {needs} (reader {self.id!r})")
        if self.confirm_ms is not None and self.driver != "serial":
            raise ValueError(f"confirm_ms applies to serial readers only (reader {self.id!r})")
        from drivers.options import option_problem  # the drivers declare their options

        problem = option_problem(self.driver, self.options, self.uid_format)
        if problem is not None:
            raise ValueError(f"{problem} (reader {self.id!r})")


class GpioConfig(msgspec.Struct, forbid_unknown_fields=True):
    """BCM pin numbers for the GPIO indicator (``indicator = "gpio"``); 0 = not wired."""

    green: int = 17
    red: int = 27
    amber: int = 22
    buzzer: int = 23
    relay: int = 0  # turnstile / door strike, pulsed on ADMIT and EXIT
    pulse_s: float = 2.0


class SeedConfig(msgspec.Struct, forbid_unknown_fields=True):
    """CSV files loaded into the store at start when its copies are empty (a gate without office,
    the demo). Paths relative to the config file."""

    workers: str
    cards: str
    escala: str | None = None


class DisplayConfig(msgspec.Struct, forbid_unknown_fields=True):
    """The watchman's screen (``portgate edge display``, ``edge.display``). ``host`` must be a
    loopback address (the page shows workers' names and photos); ``port``: its TCP port;
    ``poll_ms``: how often the journal is looked at (1-1000); ``lang``: the screen's first language
    (default: the gate's ``lang``); ``photo_max_bytes``: the size cap of one photo file accepted
    from the office (1 KiB - 4 MiB); ``idle_after_s``: seconds after a read (with no newer one)
    when the main area returns to "Aproxime o cartão" (0.1-600; a denial that asks the watchman
    to act stays until acknowledged or the next read); ``outbox_warn_after_s``: the age of the
    oldest unsent event past which the "Sem rede" strip shows though the office link is up
    (1-86400)."""

    host: str = "127.0.0.1"
    port: int = 8090
    poll_ms: int = 20
    lang: Literal["pt", "en"] | None = None
    photo_max_bytes: int = 256 * 1024
    idle_after_s: float = 5.0
    outbox_warn_after_s: float = 60.0

    def __post_init__(self) -> None:
        import ipaddress

        try:
            loopback = self.host == "localhost" or ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise ValueError(f"host {self.host!r} is not a loopback address (127.0.0.1, ::1 or localhost)")
        if not 0 <= self.port <= 65535:
            raise ValueError("port must be 0-65535")
        if not 1 <= self.poll_ms <= 1000:
            raise ValueError("poll_ms must be 1-1000")
        if not 1024 <= self.photo_max_bytes <= 4 * 1024 * 1024:
            raise ValueError("photo_max_bytes must be 1024-4194304")
        if not 0.1 <= self.idle_after_s <= 600:
            raise ValueError("idle_after_s must be 0.1-600 (seconds)")
        if not 1 <= self.outbox_warn_after_s <= 86400:
            raise ValueError("outbox_warn_after_s must be 1-86400 (seconds)")


class GateConfig(msgspec.Struct, forbid_unknown_fields=True):
    """The whole ``gate.toml``. Checked when built, so ``edge check-config`` and ``edge run`` refuse
    the same files: ``port`` and ``gate_id`` are topic ids (``wire.topics.check_id``: 1-64 of
    ``A-Z a-z 0-9 _ . -``, letter or digit first), ``[mqtt] username`` (if set) is the gate id,
    reader ids are unique, ``indicator = "file"`` names its ``indicator_file``, ``clock = "scripted"``
    its ``clock_file``, and ``metrics_port`` is 0-65535. A refusal is a ``ValueError`` naming the
    key (``ConfigError`` from ``load_gate_config``). Nothing else checks these values again."""

    port: str  # port code, e.g. "santos" (first level of the MQTT topic tree)
    gate_id: str
    state_dir: str  # holds store.db, journal.db (+ .hwm)
    key_file: str  # HMAC key of this gate, mode 0600
    office_public_key_file: str | None = None  # PEM of the office's receipt key (<keys_dir>/office/signing.pub)
    # while the office's key rotates: its next public key, also accepted on downlinks and receipts
    office_next_public_key_file: str | None = None
    ship: str | None = None  # IMO number of the ship this gate serves
    readers: list[ReaderConfig] = []
    rulebook: str | None = None  # TOML file of gate rule settings; default rulebook if absent
    indicator: Literal["console", "gpio", "file", "none"] = "console"
    indicator_file: str | None = None  # for indicator = "file": one JSON line per decision
    gpio: GpioConfig = msgspec.field(default_factory=GpioConfig)
    lang: Literal["pt", "en"] = "pt"
    clock_trust: Literal["ntp", "always", "never"] = "ntp"  # "always" only for a dev machine
    clock: Literal["system", "scripted"] = "system"  # "scripted": demo/rehearsal only
    clock_file: str | None = None  # for clock = "scripted" (edge.scripted_clock)
    log_json: bool | None = None
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    metrics_port: Annotated[int, msgspec.Meta(ge=0, le=65535)] = 0  # Prometheus /metrics (edge.metrics); 0 = off
    metrics_addr: str = "127.0.0.1"
    # seconds start-up waits, retrying every LOCK_RETRY_S, for store.db/journal.db locked by
    # another process (edge.service.wait_unlocked); then the gate exits 1 (systemd restarts it)
    lock_wait_s: Annotated[float, msgspec.Meta(ge=0, le=600)] = 60.0
    seed: SeedConfig | None = None
    mqtt: MqttConfig | None = None  # absent: standalone gate (journal only); see wire.connection
    sync: SyncSettings = msgspec.field(default_factory=SyncSettings)  # uplink tuning
    display: DisplayConfig = msgspec.field(default_factory=DisplayConfig)  # the watchman's screen

    def directions(self) -> dict[str, str]:
        """Reader id -> declared direction (G6, G9), for the gate loop's presentations."""
        return {r.id: r.direction for r in self.readers}

    def __post_init__(self) -> None:
        for key in ("port", "gate_id"):
            try:
                check_id(getattr(self, key), key)
            except BadInput as exc:
                raise ValueError(str(exc)) from None
        if self.mqtt is not None and self.mqtt.username and self.mqtt.username != self.gate_id:
            raise ValueError(f"mqtt.username {self.mqtt.username!r} must be the gate id {self.gate_id!r}: "
                             "the broker's ACL gives a gate its topics by username (%u)")
        if self.mqtt is not None and self.mqtt.protocol == "3.1.1" and "." in self.port + self.gate_id:
            raise ValueError(f"port {self.port!r} / gate_id {self.gate_id!r}: a '.' in a topic level is refused "
                             "by NATS's MQTT layer (protocol 3.1.1, nats-server 2.9), which closes the connection")
        if self.sync.lanes > 1 and (self.mqtt is None or self.mqtt.protocol != "3.1.1"):
            raise ValueError(f"sync.lanes = {self.sync.lanes} needs mqtt.protocol = '3.1.1' (a NATS cluster): "
                             "mosquitto gives every connection of a gate the gate's client id "
                             "(use_username_as_clientid), so the lanes would take the session from each other")
        ids = [r.id for r in self.readers]
        if len(set(ids)) != len(ids):
            raise ValueError(f"readers: reader ids must be unique: {ids}")
        if self.indicator == "file" and not self.indicator_file:
            raise ValueError("indicator = 'file' needs indicator_file")
        if self.clock == "scripted" and not self.clock_file:
            raise ValueError("clock = 'scripted' needs clock_file")


def check_directions(readers: list[ReaderConfig], *, path: str | None = None) -> None:
    """G9: a badge reader takes no direction (the paired control read's reader decides), and a gate
    with control readers must have one that records exits (``out`` or ``both``). Raises
    ``ConfigError`` naming the reader."""
    for i, r in enumerate(readers):
        if r.kind == "badge" and r.direction != "both":
            raise ConfigError(f"reader {r.id!r} is a badge reader: direction applies to control readers",
                              key=f"$.readers[{i}].direction", path=path)
    control = [r for r in readers if r.kind == "control"]
    if control and all(r.direction == "in" for r in control):
        raise ConfigError("every control reader is declared 'in': no exit could be recorded "
                          "(declare one 'out' or 'both')", key="$.readers", path=path)


def load_gate_config(path: str | Path) -> GateConfig:
    """Read and validate ``gate.toml``; relative paths (state, keys, rulebook, seed files, TLS files,
    the indicator and clock files, and the ``device`` of serial, wedge and FIFO readers) are resolved
    against its directory.
    Raises ``ConfigError`` naming the key."""
    path = Path(path)
    cfg = load_toml(path, GateConfig)
    check_directions(cfg.readers, path=str(path))
    if cfg.office_public_key_file is not None and not cfg.office_public_key_file.strip():
        raise ConfigError("the value is empty: name the office public key file or leave the key out",
                          key="office_public_key_file", path=str(path))
    if not cfg.state_dir.strip():
        raise ConfigError("the value is empty: name the directory of store.db and journal.db "
                          "(e.g. /var/lib/portgate)", key="state_dir", path=str(path))
    base = path.resolve().parent

    def rel(p: str | None) -> str | None:
        return None if p is None else str((base / p) if not Path(p).is_absolute() else Path(p))

    seed = cfg.seed and SeedConfig(rel(cfg.seed.workers), rel(cfg.seed.cards), rel(cfg.seed.escala))
    mqtt = cfg.mqtt and msgspec.structs.replace(
        cfg.mqtt, password_file=rel(cfg.mqtt.password_file), tls_ca_file=rel(cfg.mqtt.tls_ca_file),
        tls_cert_file=rel(cfg.mqtt.tls_cert_file), tls_key_file=rel(cfg.mqtt.tls_key_file),
    )
    # a reader's device is a path for the file-backed drivers (serial port, input node, FIFO); a
    # PC/SC reader name or a fake reader's label is not
    readers = [msgspec.structs.replace(r, device=rel(r.device)) if r.device and r.driver in ("serial", "wedge", "fifo")
               else r for r in cfg.readers]
    cfg = msgspec.structs.replace(
        cfg, mqtt=mqtt, state_dir=rel(cfg.state_dir), key_file=rel(cfg.key_file), rulebook=rel(cfg.rulebook),
        indicator_file=rel(cfg.indicator_file), seed=seed,
        clock_file=rel(cfg.clock_file), readers=readers, office_public_key_file=rel(cfg.office_public_key_file),
        office_next_public_key_file=rel(cfg.office_next_public_key_file),
    )
    if Path(cfg.state_dir).exists() and not Path(cfg.state_dir).is_dir():
        raise ConfigError(f"{cfg.state_dir} exists and is not a directory (store.db and journal.db go "
                          "in it)", key="state_dir", path=str(path))
    office_key(cfg, path=str(path))  # a bad key file stops the gate here, as check-config does
    office_next_key(cfg, path=str(path))
    return cfg


def office_next_key(cfg: GateConfig, *, path: str | None = None):
    """The office's next public key (``office_next_public_key_file``, while the office rotates its
    key: docs/operations.md "Downlink signing keys"), or None. ``ConfigError`` as ``office_key``."""
    if cfg.office_next_public_key_file is None:
        return None
    return office_key(msgspec.structs.replace(cfg, office_public_key_file=cfg.office_next_public_key_file),
                      path=path, key="office_next_public_key_file")


#: A PEM Ed25519 public key is 113 bytes; anything far larger is not one.
OFFICE_KEY_MAX_BYTES = 4096


def read_small_file(name: str, limit: int) -> bytes:
    """The bytes of the regular file ``name`` (at most ``limit``). Opened without blocking (a FIFO
    does not hang the gate); raises ``OSError`` for an unreadable file and ``BadInput`` for one
    that is not a regular file (device, FIFO, directory) or is larger than ``limit`` bytes."""
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BadInput("not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise BadInput(f"the file is larger than {limit} bytes: not a public key")
    return data


def office_key(cfg: GateConfig, *, path: str | None = None, key: str = "office_public_key_file"):
    """The office's Ed25519 public key named by ``office_public_key_file`` (PEM, or base64 of the
    raw 32 bytes), against which the gate verifies the office's chain receipts (docs/evidence.md);
    None if the key is not set (receipts are then refused as unverifiable). Raises ``ConfigError``
    naming the key if the value is empty, the file is unreadable, not a regular file, over
    ``OFFICE_KEY_MAX_BYTES`` or not one valid Ed25519 public key (``wire.chain.load_public``)."""
    if cfg.office_public_key_file is None:
        return None
    from wire.chain import load_public

    if not cfg.office_public_key_file.strip():
        raise ConfigError("the value is empty: name the office public key file or leave the key out",
                          key=key, path=path)
    try:
        return load_public(read_small_file(cfg.office_public_key_file, OFFICE_KEY_MAX_BYTES))
    except OSError as exc:
        raise ConfigError(f"cannot read the office public key: {exc.strerror or exc}",
                          key=key, path=path) from exc
    except BadInput as exc:
        raise ConfigError(str(exc), key=key, path=path) from exc
