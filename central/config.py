"""The office configuration (``central.toml``), parsed completely at start-up (STYLE.md 12).

```toml
database_url = "sqlite:///var/lib/portgate/ledger.db"   # or postgresql+psycopg://user@host/db
port = "santos"
keys_dir = "/etc/portgate/keys"       # one <gate_id>.key per gate (0600), see `central add-gate`
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

metrics_port = 9102                   # Prometheus /metrics; 0 = off
metrics_addr = "127.0.0.1"

[publish]                             # where roster/cards/escala downlinks come from
source = "csv"                        # "csv" (the files below, on request) or "registry" (central/downlink.py)
tz = "America/Sao_Paulo"              # registry source: the port's time zone (escala of today + tomorrow)
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
```
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from wire.connection import MqttConfig


class IngestSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    batch_size: Annotated[int, msgspec.Meta(ge=1, le=100_000)] = 1000
    batch_time_s: Annotated[float, msgspec.Meta(ge=0.001, le=60)] = 0.05  # below 1 ms the flusher busy-loops
    gap_grace_s: Annotated[float, msgspec.Meta(ge=0, le=86_400)] = 5.0
    replay_every_s: Annotated[float, msgspec.Meta(ge=0.1, le=86_400)] = 30.0
    tail_grace_s: Annotated[float, msgspec.Meta(ge=0, le=86_400)] = 30.0  # ledger below a gate's sent_seq this long: replay
    share_group: str = "ledger"
    relay_presence: bool = True
    writer: Literal["process", "thread"] = "process"  # central/ingest/link.py


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
    rulebook: str | None = None  # pay rulebook whose [suspension] limits bind case decisions (R4); default: the example port's
    photos_dir: str | None = None  # workers' photos: the gate-size file goes here for `central publish --photos DIR`
    slip_key_file: str | None = None  # payslip verification key (0600); default <keys_dir>/payslip.key, made if missing


class CentralConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    database_url: str
    port: str
    keys_dir: str
    workers: Annotated[int, msgspec.Meta(ge=1, le=64)] = 1
    mqtt: MqttConfig = MqttConfig()
    ingest: IngestSettings = IngestSettings()
    publish: PublishSettings = PublishSettings()
    web: WebSettings = WebSettings()
    metrics_port: int = 0  # Prometheus /metrics (central.metrics); 0 = off
    metrics_addr: str = "127.0.0.1"
    log_json: bool | None = None  # None: JSON unless stderr is a terminal
    log_level: str = "info"
