"""The office configuration (``central.toml``), parsed completely at start-up (STYLE.md 12).

```toml
database_url = "sqlite:////var/lib/portgate/ledger.db"  # or postgresql+psycopg://user@host/db
port = "santos"
# ports = ["santos", "paranagua"]     # several ports on one ledger: one consumer each (port among them)
keys_dir = "/etc/portgate/keys"       # one <gate_id>.key per gate (0600), see `central add-gate`
# port_keys_dirs = { paranagua = "/etc/portgate/keys-paranagua" }  # another port's add-gate --nats-users dir
workers = 1                           # ingest workers (each its own MQTT session and ledger writer)

[mqtt]                                # wire.connection.MqttConfig
host = "127.0.0.1"
port = 1883

[ingest]
batch_size = 1000                     # events per ledger commit
batch_time_s = 0.05                   # max wait to fill a batch
gap_grace_s = 5.0                     # a sequence gap older than this triggers a replay request
replay_every_s = 30.0                 # do not repeat the same replay request more often
tail_grace_s = 30.0                   # ledger below a gate's acknowledged sent_seq this long: ask for the tail
share_group = "ledger"                # $share/<group>/portgate/v1/<port>/gate/+/events
writer = "process"                    # ledger writes in a child process per worker, or "thread"
verify_processes = 1                  # Ed25519 signature helpers per writer process (0: the writer verifies)

metrics_port = 9102                   # Prometheus /metrics; 0 = off
metrics_addr = "127.0.0.1"

[publish]                             # where roster/cards/escala downlinks come from
source = "csv"                        # "csv" (the files below, on request) or "registry" (central/broadcast/registry_source.py)
tz = "America/Sao_Paulo"              # registry source: the port's time zone (escala of today + tomorrow); checked at load
poll_s = 1.0                          # registry source: how often downlink_changes is read
snapshot_min_s = 5.0                  # registry source: retained snapshot refreshed at most this often after changes
snapshot_every_s = 300.0              # registry source: and at least this often
workers_csv = "data/workers.csv"
cards_csv = "data/cards.csv"
escala_csv = "data/escala.csv"

[web]                                 # portgate office serve (central/web/), see docs/operations.md
secret_file = "/etc/portgate/web-session.key"   # default <keys_dir>/web-session.key, created 0600 if missing
secure_cookies = false                # true behind a TLS reverse proxy
session_hours = 12.0
lang = "pt"                           # pt | en (each user can switch)
tz = "America/Sao_Paulo"
copies_max_age_h = 24.0               # G8
coverage_grace_min = 30               # G11
[nats]                                # optional: ingest from a NATS JetStream cluster (central/ingest/jetstream.py)
servers = ["nats://127.0.0.1:4222"]   # non-empty selects it; [mqtt] then has protocol = "3.1.1" and hosts
```

Relative paths (a SQLite ``database_url``'s file, ``keys_dir``, ``database_password_file``, the
``[mqtt]`` files, the ``[publish]`` CSV files) are relative to the directory of ``central.toml``, as
in ``gate.toml``: ``load_central_config`` resolves them. A PostgreSQL password is never in the
file: ``database_password_file`` names a 0600 file holding it, or libpq reads ``PGPASSFILE``
(default ``~/.pgpass``).
"""

from __future__ import annotations

import re

from pathlib import Path
from typing import Annotated, Literal

import msgspec
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from central.db import BACKENDS, USE
from portgate.config import load_toml, read_secret
from portgate.errors import BadInput, ConfigError
from portgate.timeutil import zone
from wire.mqtt_config import MqttConfig  # not wire.connection: a command that reads the config needs no paho
from wire.topics import check_id


class IngestSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    batch_size: Annotated[int, msgspec.Meta(ge=1, le=100_000)] = 1000
    batch_time_s: Annotated[float, msgspec.Meta(ge=0.001, le=60)] = 0.05  # below 1 ms the flusher busy-loops
    gap_grace_s: Annotated[float, msgspec.Meta(ge=0, le=86_400)] = 5.0
    replay_every_s: Annotated[float, msgspec.Meta(ge=0.1, le=86_400)] = 30.0
    tail_grace_s: Annotated[float, msgspec.Meta(ge=0, le=86_400)] = 30.0  # ledger below a gate's sent_seq this long: replay
    share_group: str = "ledger"  # a topic id (wire.topics.check_id): $share/<group>/...
    relay_presence: bool = True
    # a snapshot kind is served at most once per this many seconds per worker (it is retained and goes
    # to every gate: more requests meanwhile are answered by the one sent)
    snapshot_request_min_s: Annotated[float, msgspec.Meta(ge=0, le=3600)] = 5.0
    # dead letters stored per sending gate (its topic's) a minute; past it one summary row, the rest counted
    dead_letters_per_gate_min: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] = 600
    writer: Literal["process", "thread"] = "process"  # central/ingest/link.py
    verify_processes: Annotated[int, msgspec.Meta(ge=0, le=16)] = 1  # Ed25519 verifiers per writer process (verify.py)

    def __post_init__(self) -> None:
        try:
            check_id(self.share_group, "share_group")
        except BadInput as exc:
            raise ValueError(str(exc)) from None


class PublishSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    source: Literal["csv", "registry"] = "csv"
    tz: str = "America/Sao_Paulo"
    poll_s: float = 1.0
    snapshot_min_s: float = 5.0
    snapshot_every_s: float = 300.0
    workers_csv: str | None = None
    cards_csv: str | None = None
    escala_csv: str | None = None


class WebSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``[web]``: the office web application (``portgate office serve``, central/web/)."""

    secret_file: str | None = None  # session signing key (0600); default <keys_dir>/web-session.key, made if missing
    secure_cookies: bool = False  # Secure cookies behind a TLS reverse proxy (always on with uvicorn's own TLS)
    session_hours: Annotated[float, msgspec.Meta(gt=0, le=24 * 30)] = 12.0
    lang: Literal["pt", "en"] = "pt"
    tz: str = "America/Sao_Paulo"  # the port's time zone for dates shown and period starts
    copies_max_age_h: Annotated[float, msgspec.Meta(gt=0)] = 24.0  # G8: a gate's copies older than this are stale
    coverage_grace_min: Annotated[int, msgspec.Meta(ge=0, le=360)] = 30  # G11: minutes after a period start
    poll_s: Annotated[float, msgspec.Meta(ge=0.05, le=10)] = 0.3  # how often the live stream looks at the ledger
    max_body_mb: Annotated[float, msgspec.Meta(gt=0, le=1024)] = 5.0  # request bodies (ships.csv, attachments) over this: 413
    rulebook: str | None = None  # pay rulebook whose [suspension] limits bind case decisions (R4); default: the example port's
    # a write that waits longer than this for another writer's lock answers "busy, try again" (503);
    # SQLite waits its busy timeout, PostgreSQL gets ``SET LOCAL lock_timeout``
    write_lock_timeout_s: Annotated[float, msgspec.Meta(gt=0, le=60)] = 5.0
    # a web write whose commit the ledger has not answered after this (a replicated ledger's primary
    # waiting for its synchronous standbys) answers 503 "waiting for the replicas, may still be saved"
    commit_wait_s: Annotated[float, msgspec.Meta(gt=0, le=600)] = 10.0
    # a statement the ledger has not answered after this (a frozen server: TCP up, nobody answering)
    # has its connection cut and answers 503 "reconnecting" (central/web/answer_wait.py); more than
    # write_lock_timeout_s (a write's statement waits that long for another writer's lock)
    read_wait_s: Annotated[float, msgspec.Meta(gt=0, le=600)] = 10.0
    enrol_timeout_s: Annotated[int, msgspec.Meta(ge=10, le=3600)] = 120  # a gate's enrol mode ends after this (issue 34)
    photos_dir: str | None = None  # workers' photos: the gate-size file goes here for `central publish --photos DIR`
    slip_key_file: str | None = None  # payslip verification key (0600); default <keys_dir>/payslip.key, made if missing
    # addresses of reverse proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (the login
    # throttle counts per client address); empty: none, the TCP peer is the client
    trusted_proxies: tuple[str, ...] = ()
    # the office application's address as a worker's phone reaches it: a payslip's QR code and short
    # URL point to <public_url>/v/<token> (central/pay/slip_codes.py); default: the address the PDF
    # was asked from
    public_url: str | None = None
    # the port TOML whose [employer] heads the payslips (and whose holidays the pay what-if uses);
    # default config/port.example.toml
    port_config: str | None = None
    # payslip verification look-ups (/v/<token>, no login) per client address and minute; more: 429
    verify_per_minute: Annotated[int, msgspec.Meta(ge=1, le=10_000)] = 20

    def __post_init__(self) -> None:
        if self.read_wait_s <= self.write_lock_timeout_s:
            raise ValueError(f"read_wait_s ({self.read_wait_s:g}) must be more than write_lock_timeout_s "
                             f"({self.write_lock_timeout_s:g}): a write's statement waits that long for a lock")
        if self.public_url is not None and not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", self.public_url):
            raise ValueError(f"public_url {self.public_url!r} is not an http(s)://host[/path] address")


class NatsSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``[nats]``: ingest from a NATS JetStream cluster instead of MQTT (central/ingest/jetstream.py,
    issue 37). Empty ``servers`` (default): the MQTT ingest (mosquitto). Times in seconds."""

    servers: list[str] = []  # nats://host:port of the cluster's nodes; non-empty selects the JetStream ingest
    stream: str = "PORTGATE"  # prefix: the port's stream is <stream>_<port>, created with its gates' subjects if missing
    replicas: Annotated[int, msgspec.Meta(ge=1, le=5)] = 3
    durable: str = ""  # the port's pull consumer; default ledger-<port>
    ack_wait_s: Annotated[float, msgspec.Meta(ge=1, le=3600)] = 30.0  # unacked this long: to another fetcher
    max_ack_pending: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] = 10_000
    max_age_s: Annotated[float, msgspec.Meta(ge=0, le=366 * 86_400)] = 7 * 86_400.0  # stream retention (0: none)
    fetch_wait_s: Annotated[float, msgspec.Meta(ge=0.05, le=60)] = 1.0  # a fetch waits this long for messages
    reconnect_wait_s: Annotated[float, msgspec.Meta(ge=0.05, le=60)] = 0.5
    connect_timeout_s: Annotated[float, msgspec.Meta(ge=0.1, le=60)] = 2.0
    request_timeout_s: Annotated[float, msgspec.Meta(ge=0.1, le=60)] = 30.0  # JetStream API calls (a replicated stream's creation on a loaded cluster takes seconds)
    user: str = ""  # the office's NATS user (``portgate central add-gate --nats-users``: "office"); "" = none
    password_file: str | None = None  # 0600 file with its password (<keys_dir>/office.nats-password)
    tls_ca_file: str | None = None  # the CA of the nodes' client (4222) listeners, when they have TLS


class CentralConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    database_url: str
    port: str  # the home port: the one of a single-port office, and the scope of web users made before 0028
    keys_dir: str
    # several ports on one ledger (docs/operations.md "Many ports, one ledger"): the ingest runs one
    # consumer per port (central/ingest/ports.py); empty: ``port`` alone
    ports: list[str] = []
    # another served port's keys dir holding its gates' registrations (``add-gate --keys-dir DIR
    # --nats-users ... --port P``: DIR/nats-users.json), read with keys_dir's (``registry_dirs``)
    port_keys_dirs: dict[str, str] = {}
    database_password_file: str | None = None  # 0600 file with the PostgreSQL password (or PGPASSFILE)
    workers: Annotated[int, msgspec.Meta(ge=1, le=64)] = 1
    mqtt: MqttConfig = MqttConfig()
    ingest: IngestSettings = IngestSettings()
    publish: PublishSettings = PublishSettings()
    web: WebSettings = WebSettings()
    nats: NatsSettings = NatsSettings()
    metrics_port: Annotated[int, msgspec.Meta(ge=0, le=65535)] = 0  # Prometheus /metrics (central.metrics); 0 = off
    metrics_addr: str = "127.0.0.1"
    log_json: bool | None = None  # None: JSON unless stderr is a terminal
    log_level: str = "info"

    def __post_init__(self) -> None:
        try:
            check_id(self.port, "port")  # the first level of the topic tree
            for name in self.ports:
                check_id(name, "ports")
        except BadInput as exc:
            raise ValueError(str(exc)) from None
        if self.ports and self.port not in self.ports:
            raise ValueError(f"port {self.port!r} (the home port) must be one of ports {self.ports}")
        if len({p.casefold() for p in self.ports}) != len(self.ports):  # "Santos" and "santos": one port
            raise ValueError(f"ports {self.ports} names a port twice (letter case aside)")
        strange = sorted(set(self.port_keys_dirs) - set(self.served_ports[1:]))
        if strange:
            raise ValueError(f"port_keys_dirs names {', '.join(strange)}: not a port of ports other than "
                             f"the home port {self.port!r} (whose registrations are in keys_dir)")
        if len(self.served_ports) > 1 and self.nats.durable:
            raise ValueError("[nats] durable names one consumer: with several ports leave it empty "
                             "(each port's consumer is ledger-<port>)")
        if self.nats != NatsSettings() and not self.nats.servers:
            raise ValueError("[nats] has settings but no servers: give servers (the JetStream ingest) or "
                             "remove [nats] (the MQTT ingest)")

    @property
    def served_ports(self) -> tuple[str, ...]:
        """The ports this office ingests and shows, the home port first: ``ports`` or ``(port,)``."""
        if not self.ports:
            return (self.port,)
        return (self.port, *(p for p in self.ports if p != self.port))

    @property
    def registry_dirs(self) -> tuple[str, ...]:
        """The keys dirs whose gate registrations (``<dir>/nats-users.json``, ``add-gate --nats-users
        ... --port``) the office reads: ``keys_dir``, then each other served port's ``port_keys_dirs``
        entry (``central.ingest.nats_users.registered_in``)."""
        return (self.keys_dir, *(self.port_keys_dirs[p] for p in self.served_ports if p in self.port_keys_dirs))


def load_central_config(path: str | Path) -> CentralConfig:
    """Read and validate ``central.toml``; relative paths resolved against its directory, and the
    password of ``database_password_file`` put into ``database_url`` (in memory only).

    Raises ``ConfigError`` naming the key: a bad value, a ``database_url`` that is not a URL or is
    an in-memory SQLite database (private to one connection), a password file missing or readable
    by others. This is the one place ``central.toml`` is checked: ``check-config`` loads it."""
    path = Path(path)
    cfg = load_toml(path, CentralConfig)
    base = path.resolve().parent

    def rel(p: str | None) -> str | None:
        return None if p is None else str(base / p) if not Path(p).is_absolute() else p

    mqtt = msgspec.structs.replace(
        cfg.mqtt, password_file=rel(cfg.mqtt.password_file), tls_ca_file=rel(cfg.mqtt.tls_ca_file),
        tls_cert_file=rel(cfg.mqtt.tls_cert_file), tls_key_file=rel(cfg.mqtt.tls_key_file))
    publish = msgspec.structs.replace(
        cfg.publish, workers_csv=rel(cfg.publish.workers_csv), cards_csv=rel(cfg.publish.cards_csv),
        escala_csv=rel(cfg.publish.escala_csv))
    nats = msgspec.structs.replace(cfg.nats, password_file=rel(cfg.nats.password_file),
                                   tls_ca_file=rel(cfg.nats.tls_ca_file))
    if nats.user and not nats.password_file:
        raise ConfigError("[nats] user given without password_file", key="$.nats.password_file", path=str(path))
    zone(cfg.web.tz, key="$.web.tz", path=str(path))  # office serve would fail on it at its first page
    zone(cfg.publish.tz, key="$.publish.tz", path=str(path))  # the registry source would, when it started
    _check_nats(cfg.nats, str(path))
    password_file = rel(cfg.database_password_file)
    web = msgspec.structs.replace(cfg.web, port_config=rel(cfg.web.port_config))
    return msgspec.structs.replace(
        cfg, database_url=_database_url(cfg.database_url, base, password_file, str(path)),
        keys_dir=rel(cfg.keys_dir), port_keys_dirs={p: rel(d) for p, d in cfg.port_keys_dirs.items()}, mqtt=mqtt, publish=publish, nats=nats, database_password_file=password_file,
        web=web)


#: a NATS stream or consumer name: no whitespace, '.', '*', '>' nor a path separator (JetStream's API
#: subjects carry it as one token), not empty
_NATS_NAME = re.compile(r"[^\s.*>/\\]+")
_NATS_SERVER = re.compile(r"(nats|tls)://([^\s/?#@]+@)?[^\s/?#@]+/?")


def _check_nats(nats: NatsSettings, where: str) -> None:
    """``[nats]`` names the JetStream ingest would only refuse when it starts (and then retry for
    ever): ``ConfigError`` naming the key for a ``stream`` or ``durable`` that is not a NATS name
    (``durable`` may be empty: ``ledger-<port>``), or a ``servers`` entry that is not a
    ``nats://host[:port]`` or ``tls://host[:port]`` address."""
    for key, value in (("stream", nats.stream), ("durable", nats.durable or "x")):
        if not _NATS_NAME.fullmatch(value):
            raise ConfigError(f"{value!r} is not a NATS name (not empty; no whitespace, dot, *, > or /)",
                              key=f"$.nats.{key}", path=where)
    for i, server in enumerate(nats.servers):
        if not _NATS_SERVER.fullmatch(server):
            raise ConfigError(f"{server!r} is not a NATS server address (nats://host:port or tls://host:port)",
                              key=f"$.nats.servers[{i}]", path=where)


def _database_url(text: str, base: Path, password_file: str | None, where: str) -> str:
    try:
        url = make_url(text)
    except ArgumentError as exc:
        raise ConfigError(f"not a database URL: {exc}", key="$.database_url", path=where) from exc
    if url.get_backend_name() not in BACKENDS:  # refused here, not only when a command opens it
        raise ConfigError(f"{url.get_backend_name()} is not supported: {USE}", key="$.database_url", path=where)
    if url.get_backend_name() == "sqlite":
        if (url.database or ":memory:") == ":memory:":
            raise ConfigError("an in-memory SQLite ledger is private to one connection: use a file or PostgreSQL",
                              key="$.database_url", path=where)
        if url.database and url.database != ":memory:" and url.query.get("uri") != "true" \
                and not Path(url.database).is_absolute():
            url = url.set(database=str(base / url.database))
    elif password_file is not None:
        if url.password is not None:
            raise ConfigError("give the password in database_password_file or in database_url, not both",
                              key="$.database_password_file", path=where)
        try:
            password = read_secret(password_file, what="database password").decode()
        except ConfigError as exc:
            raise ConfigError(f"{exc.path}: {exc.reason}", key="$.database_password_file", path=where) from exc
        url = url.set(password=password)
    return url.render_as_string(hide_password=False)
