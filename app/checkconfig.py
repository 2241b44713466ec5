"""``check-config``: validate a service's configuration file completely without starting it.

``portgate edge check-config gate.toml`` and ``portgate central check-config central.toml`` parse the
TOML into the typed config (every key, every type), then open every secret it names with
``read_secret`` (the gate HMAC key, the MQTT password, the TLS client key: present, non-empty, mode
0600/0400) and check that the other files it names exist. The first problem raises ``ConfigError``
naming the key (the CLI prints one line and exits 2); success returns a one-line summary.

Nothing is connected to (no broker, no database, no reader): the check runs on an installer's
machine or in ``ExecStartPre=`` before the unit starts. ``app.cli`` adds the two commands below to
the ``edge`` and ``central`` groups (the check reads both layers' configs, so it lives above them).
"""

from __future__ import annotations

from pathlib import Path

import click

from portgate.config import read_secret, unreadable
from portgate.errors import ConfigError


def _exists(path: str | None, key: str, *, directory: bool = False) -> None:
    if path is None:
        return
    p = Path(path)
    try:
        ok = p.is_dir() if directory else p.is_file()
    except (OSError, ValueError) as exc:  # a name too long for the file system
        raise ConfigError(unreadable(exc), key=key) from exc
    if not ok:
        raise ConfigError(f"{'directory' if directory else 'file'} not found: {p}", key=key)


def _secret(path: str | None, key: str, what: str) -> None:
    if path is None:
        return
    try:
        read_secret(path, what=what)
    except ConfigError as exc:
        raise ConfigError(str(exc), key=key) from exc


def _mqtt(mqtt, prefix: str) -> str:
    """Check an MQTT section (``wire.connection.MqttConfig`` or the gate's own struct)."""
    if mqtt is None:
        return "standalone (no [mqtt])"
    if getattr(mqtt, "username", None) and not getattr(mqtt, "password_file", None):
        raise ConfigError("username given without password_file", key=f"{prefix}.password_file")
    _secret(getattr(mqtt, "password_file", None), f"{prefix}.password_file", "MQTT password")
    for name in ("tls_ca_file", "ca_file", "tls_cert_file", "cert_file"):
        _exists(getattr(mqtt, name, None), f"{prefix}.{name}")
    for name in ("tls_key_file", "key_file"):
        _secret(getattr(mqtt, name, None), f"{prefix}.{name}", "TLS private key")
    tls = any(getattr(mqtt, n, None) for n in ("tls_ca_file", "ca_file")) or getattr(mqtt, "tls", False)
    return f"mqtt {mqtt.host}:{mqtt.port}{' tls' if tls else ''}"


def _metrics(cfg) -> str:
    port = getattr(cfg, "metrics_port", 0)
    if not 0 <= port <= 65535:
        raise ConfigError("must be 0 (off) or a TCP port", key="$.metrics_port")
    return f"metrics {getattr(cfg, 'metrics_addr', '127.0.0.1')}:{port}" if port else "metrics off"


def check_gate(path: str | Path) -> str:
    """Validate ``gate.toml``; return a summary line. Raises ``ConfigError`` naming the key."""
    from edge.config import load_gate_config

    cfg = load_gate_config(path)
    _secret(cfg.key_file, "$.key_file", "gate HMAC key")
    _exists(cfg.rulebook, "$.rulebook")
    if cfg.rulebook:
        from edge.rules.rulebook import load_gate_rulebook

        load_gate_rulebook(cfg.rulebook)
    if cfg.seed is not None:
        _exists(cfg.seed.workers, "$.seed.workers")
        _exists(cfg.seed.cards, "$.seed.cards")
        _exists(cfg.seed.escala, "$.seed.escala")
    parts = [f"gate {cfg.gate_id}", f"port {cfg.port}", f"{len(cfg.readers)} reader(s)",
             _mqtt(cfg.mqtt, "$.mqtt"), _metrics(cfg)]
    return f"ok: {path}: " + ", ".join(parts)


def check_central(path: str | Path) -> str:
    """Validate ``central.toml``; return a summary line. Raises ``ConfigError`` naming the key."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from central.config import load_central_config

    cfg = load_central_config(path)
    try:
        url = make_url(cfg.database_url)
    except ArgumentError as exc:
        raise ConfigError(f"not a database URL: {exc}", key="$.database_url") from exc
    if url.get_backend_name() == "sqlite" and (url.database or ":memory:") == ":memory:":
        raise ConfigError("an in-memory SQLite ledger is private to one connection: use a file or PostgreSQL",
                          key="$.database_url")
    _exists(cfg.keys_dir, "$.keys_dir", directory=True)
    if cfg.workers < 1:
        raise ConfigError("must be at least 1", key="$.workers")
    from portgate.errors import BadInput
    from wire import topics

    try:
        topics.shared_gate_events(cfg.port, cfg.ingest.share_group)  # what ``central run`` subscribes to
    except BadInput as exc:
        raise ConfigError(str(exc), key="$.ingest.share_group") from exc
    keys = sorted(Path(cfg.keys_dir).glob("*.key"))
    for k in keys:
        _secret(str(k), "$.keys_dir", f"gate key {k.name}")
    p = cfg.publish
    for name in ("workers_csv", "cards_csv", "escala_csv"):
        _exists(getattr(p, name), f"$.publish.{name}")
    parts = [f"port {cfg.port}", f"database {url.get_backend_name()}", f"{cfg.workers} worker(s)",
             f"{len(keys)} gate key(s)", _mqtt(cfg.mqtt, "$.mqtt"), _metrics(cfg)]
    return f"ok: {path}: " + ", ".join(parts)


@click.command("check-config")
@click.argument("config_path")
def gate_check_config(config_path: str) -> None:
    """Validate gate.toml completely (keys, types, secret files) without starting anything."""
    click.echo(check_gate(config_path))


@click.command("check-config")
@click.argument("config_path", type=click.Path(dir_okay=False))
def central_check_config(config_path: str) -> None:
    """Validate central.toml completely (keys, types, secret files) without starting anything."""
    click.echo(check_central(config_path))
