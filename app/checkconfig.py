"""``check-config``: load a service's configuration file completely without starting it.

``portgate edge check-config gate.toml`` and ``portgate central check-config central.toml`` build
the typed config exactly as ``run`` does (``edge.config.load_gate_config``,
``central.config.load_central_config``: every key, type and value is checked there, once), then
open what the config names: every secret with ``read_secret`` (the gate HMAC key, the MQTT
password, the TLS client key, the gate keys of ``keys_dir``: present, non-empty, mode 0600/0400),
the gate rulebook, and the other files and directories it names must exist. The first problem
raises ``ConfigError`` naming the key (the CLI prints one line and exits 2); success returns a
one-line summary.

Nothing is connected to (no broker, no reader) but the office's ledger, read only and only when it
is there (a SQLite file not made yet is not created): the keys dirs' gate registrations against the
ports the ledger has those gates' events at (``add-gate`` without ``--config`` cannot see the ledger,
and a gate registered at another port than its events' is read as two ports' at once). A ledger that
cannot be reached is a warning line, not a failure: the check still runs on an installer's machine
or in ``ExecStartPre=`` before the database is up. ``app.cli`` adds the two commands below to
the ``edge`` and ``central`` groups (the check reads both layers' configs, so it lives above them).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typing import TYPE_CHECKING

import click

from portgate.clitext import tr
from portgate.config import must_exist as _exists, naming_key, read_secret
from portgate.errors import ConfigError, StoreError

if TYPE_CHECKING:
    from central.config import CentralConfig
    from edge.config import GateConfig
    from wire.connection import MqttConfig


def _secret(path: str | None, key: str, what: str) -> None:
    if path is None:
        return
    try:
        read_secret(path, what=what)
    except ConfigError as exc:
        raise ConfigError(str(exc), key=key) from exc


def _mqtt(mqtt: MqttConfig | None, prefix: str) -> str:
    """Open the files of an ``[mqtt]`` section; its summary."""
    if mqtt is None:
        return "standalone (no [mqtt])"
    _secret(mqtt.password_file, f"{prefix}.password_file", "MQTT password")
    _exists(mqtt.tls_ca_file, f"{prefix}.tls_ca_file")
    _exists(mqtt.tls_cert_file, f"{prefix}.tls_cert_file")
    _secret(mqtt.tls_key_file, f"{prefix}.tls_key_file", "TLS private key")
    hosts = " ".join(f"{h}:{p}" for h, p in mqtt.brokers())  # [mqtt] hosts when given: what is tried
    return f"mqtt {hosts}{' tls' if mqtt.tls_ca_file else ''}"


def _metrics(cfg: GateConfig | CentralConfig) -> str:
    return f"metrics {cfg.metrics_addr}:{cfg.metrics_port}" if cfg.metrics_port else "metrics off"


def check_gate(path: str | Path) -> str:
    """Load ``gate.toml`` and open the files it names; return a summary line. Raises
    ``ConfigError`` naming the key."""
    from edge.config import load_gate_config  # lazily: a gate's command imports no office code
    from edge.config_paths import check_gate_paths
    from edge.rules.rulebook import load_gate_rulebook

    cfg = load_gate_config(path)
    check_gate_paths(cfg)  # what edge run opens first: the state dir's lock, FIFOs, the indicator file
    _secret(cfg.key_file, "$.key_file", "gate HMAC key")
    _exists(cfg.rulebook, "$.rulebook")
    if cfg.rulebook:
        load_gate_rulebook(cfg.rulebook)
    if cfg.seed is not None:
        _exists(cfg.seed.workers, "$.seed.workers")
        _exists(cfg.seed.cards, "$.seed.cards")
        _exists(cfg.seed.escala, "$.seed.escala")
        from edge.store_copies import read_seed  # lazily, as above

        read_seed(cfg.seed.workers, cfg.seed.cards, cfg.seed.escala)  # the rows edge run would refuse
    parts = [f"gate {cfg.gate_id}", f"port {cfg.port}", f"{len(cfg.readers)} reader(s)",
             _mqtt(cfg.mqtt, "$.mqtt"), _metrics(cfg)]
    return f"ok: {path}: " + ", ".join(parts)


def check_central(path: str | Path, warn: Callable[[str], None] = lambda _text: None) -> str:
    """Load ``central.toml`` and open the files it names, then its ledger's gates (``_ledger_ports``);
    return a summary line. Raises ``ConfigError`` naming the key; ``warn`` is given the line saying
    the ledger could not be read (the check goes on without it)."""
    from sqlalchemy.engine import make_url  # lazily: the office's command imports no gate code

    from central.config import load_central_config

    from central.cli_args import db_url_arg, run_files

    cfg = load_central_config(path)
    _exists(cfg.keys_dir, "$.keys_dir", directory=True)
    _web_files(cfg)
    from central.ingest.keys import gate_key_files

    office = {Path(p).resolve() for p in (cfg.web.secret_file, cfg.web.slip_key_file) if p}
    keys = [k for k in gate_key_files(cfg.keys_dir) if k.resolve() not in office]  # gate keys only
    for k in keys:
        _secret(str(k), "$.keys_dir", f"gate key {k.name}")
    _gate_ports(cfg)
    ingest = _ingest(cfg)  # [mqtt]'s files opened
    db_url_arg(cfg.database_url, must_exist=True, name="database_url")  # central run's refusal, word for word
    run_files(cfg)  # central run's too: keys_dir, [publish] CSVs, a writable SQLite ledger
    _ledger_ports(cfg, warn)
    _live_offices(cfg, warn)
    ports = cfg.served_ports  # several ports on one ledger (docs/operations.md)
    parts = [f"port {cfg.port}" if len(ports) == 1 else f"ports {', '.join(ports)}", f"database {make_url(cfg.database_url).get_backend_name()}",
             f"{cfg.workers} worker(s)", f"{len(keys)} gate key(s)", ingest, _metrics(cfg)]
    return f"ok: {path}: " + ", ".join(parts)


def _ingest(cfg: CentralConfig) -> str:
    """The summary of what ``central run`` ingests from: ``[nats]`` servers when set (the JetStream
    ingest; ``[mqtt]`` then still carries the downlinks), and ``[mqtt]``'s brokers."""
    mqtt = _mqtt(cfg.mqtt, "$.mqtt")
    return f"nats {' '.join(cfg.nats.servers)}, {mqtt}" if cfg.nats.servers else mqtt


def _web_files(cfg: CentralConfig) -> None:
    """``[web]``'s files as ``office serve`` opens them: the pay rulebook (``rulebook``, read: its
    ``[suspension]`` limits) and the port configuration must exist; a key file (``secret_file``,
    ``slip_key_file``) not made yet needs its directory (``office serve`` makes the file, never a
    directory). ``ConfigError`` naming the key."""
    from central.web.key_files import check_key_dirs  # lazily: the office's command

    w = cfg.web
    _exists(w.rulebook, "$.web.rulebook")
    _exists(w.port_config, "$.web.port_config")
    if w.rulebook:
        from central.registry.sanctions import load_suspension_limits

        try:
            load_suspension_limits(w.rulebook)
        except ConfigError as exc:
            raise naming_key(exc, "$.web.rulebook", None) from exc
    check_key_dirs(cfg)


def _gate_ports(cfg: CentralConfig) -> None:
    """Every served port's gate registrations (``keys_dir`` and ``port_keys_dirs``): readable, and
    no gate id registered at two ports (gate ids are unique across ports; ``ConfigError`` naming the
    first such gate, its ports and keys dirs), nor gate ids differing only by letter case at two ports
    (``case_clashes``: ``G-Aurora`` beside ``g-aurora``, as ``ports`` refuses ``Santos`` beside ``santos``)."""
    from central.ingest.nats_users import case_clashes, port_clashes

    try:
        clashes = port_clashes(d for d in cfg.registry_dirs if Path(d).is_dir())
    except (OSError, ValueError) as exc:
        raise ConfigError(str(exc), key="$.port_keys_dirs") from exc
    for gate_id, ports in sorted(clashes.items()):
        where = ", ".join(f"{port}: {' '.join(dirs)}" for port, dirs in ports.items())
        raise ConfigError(f"gate {gate_id} is registered at several ports ({where}): a gate id is unique "
                          "across ports", key="$.port_keys_dirs")
    for (a, port_a, dir_a), (b, port_b, dir_b) in case_clashes(d for d in cfg.registry_dirs if Path(d).is_dir()):
        raise ConfigError(f"gates {a} (port {port_a}, {dir_a}) and {b} (port {port_b}, {dir_b}) differ only in "
                          "letter case: a gate id is unique across ports, letter case aside", key="$.port_keys_dirs")


def _key(cfg: CentralConfig, keys_dir: str) -> str:
    return "$.keys_dir" if keys_dir == cfg.keys_dir else "$.port_keys_dirs"


def _ledger_ports(cfg: CentralConfig, warn: Callable[[str], None]) -> None:
    """The served ports' gate registrations against the ledger (``central.ledger.home.ledger_gates``):
    ``ConfigError`` (naming the keys dir's key) for a gate registered at a port other than the one
    the ledger has its events at (``add-gate --keys-dir DIR --port P`` without ``--config`` cannot see
    the ledger; registering it at its real port would then be refused), or whose id differs only in
    letter case from a gate the ledger has at another port. A ledger that cannot be read:
    ``warn`` (``cli.central.check_ledger_unread``) and nothing compared."""
    from central.ingest.nats_users import registrations
    from central.ledger.home import ledger_gates

    try:
        known = ledger_gates(cfg.database_url)
    except StoreError as exc:
        warn(tr("cli.central.check_ledger_unread", error=str(exc)))
        return
    folded = {g.casefold(): (g, p) for g, p in known.items()}
    for keys_dir in dict.fromkeys(d for d in cfg.registry_dirs if Path(d).is_dir()):
        for gate_id, port in registrations(keys_dir):  # readable: _gate_ports read them
            if known.get(gate_id, port) != port:
                raise ConfigError(f"gate {gate_id} is registered at port {port} in {keys_dir}, but the ledger has "
                                  f"its events at port {known[gate_id]}: a gate's port is its events' port",
                                  key=_key(cfg, keys_dir))
            same, other = folded.get(gate_id.casefold(), (gate_id, port))
            if gate_id not in known and other != port:  # G-Aurora beside the ledger's g-aurora
                raise ConfigError(f"gate {gate_id} is registered at port {port} in {keys_dir}, but the ledger has "
                                  f"events of gate {same} at port {other}: gate ids differing only in letter case "
                                  "are one gate id", key=_key(cfg, keys_dir))


def _live_offices(cfg: CentralConfig, warn: Callable[[str], None]) -> None:
    """The ``central run`` processes of this config's home port live on the ledger now
    (``central.ledger.instance_claim.live_instances``): ``warn`` names them and their --instance
    (``cli.central.check_offices_running``), as a ``central run`` of this config refuses to start
    under a name one of them holds. Nothing when none, nor when the ledger cannot be read
    (``_ledger_ports`` said so)."""
    import datetime as dt

    from central.ledger.instance_claim import live_instances
    from central.ledger.liveness import STALE_S

    try:
        found = live_instances(cfg.database_url, cfg.port, now=dt.datetime.now(dt.UTC), stale_s=STALE_S)
    except StoreError:
        return
    if found:
        names = ", ".join(tr("cli.central.office_instance", name=h.instance, pid=h.pid, host=h.host) if h.instance
                          else tr("cli.central.office_no_instance", pid=h.pid, host=h.host) for h in found)
        warn(tr("cli.central.check_offices_running", n=len(found), port=cfg.port, offices=names))


@click.command("check-config")
@click.argument("config_path")
def gate_check_config(config_path: str) -> None:
    """Validate gate.toml completely (keys, types, secret files) without starting anything."""
    click.echo(check_gate(config_path))


@click.command("check-config")
@click.argument("config_path", type=click.Path(dir_okay=False))
def central_check_config(config_path: str) -> None:
    """Validate central.toml completely (keys, types, secret files) without starting anything."""
    click.echo(check_central(config_path, warn=lambda text: click.echo(text, err=True)))
