"""``portgate central``: run the office ingest, provision gate keys, publish downlink snapshots."""

from __future__ import annotations

import functools
import os
import signal
import ssl
from pathlib import Path

import click

from central.gate_checks_cli import check_before_writing
from portgate.clitext import tr
from portgate.errors import BrokerUnavailable


class Failed(click.ClickException):
    """A failure (exit 1) printed after the usual ``portgate: `` prefix of the command's refusals,
    not Click's ``Error:``."""

    def show(self, file=None) -> None:
        click.echo(f"portgate: {self.format_message()}", err=True, file=file)


@click.group()
def central() -> None:
    """The office: MQTT ingest into the ledger, gate keys, downlink snapshots."""


@central.command("run")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False), help="central.toml")
@click.option("--instance", default=None, help="Several processes on one config (portgate-central@.service): "
              "suffix for the MQTT client ids, so each process has its own sessions in the share group.")
@click.option("--metrics-port", type=int, default=None, envvar="PORTGATE_METRICS_PORT",
              help="Override metrics_port (env PORTGATE_METRICS_PORT; 0 = off).")
def run(config_path: str, instance: str | None, metrics_port: int | None) -> None:
    """Run the ingest workers until SIGTERM/SIGINT (events -> ledger, presence relay, gap repair).
    A SQLite ``database_url`` whose file does not exist or is empty (0 bytes) is refused (one line,
    exit 2): a mistyped path or a failed copy would otherwise become a new, empty ledger;
    ``portgate ledger migrate`` creates one. Another live process of this config's home port and
    --instance on the ledger refuses it too (one line naming it, exit 2)."""
    from central.cli_args import config_ledger, db_url_arg, run_files  # lazy: CLI start-up
    from central.config import load_central_config  # lazy: CLI start-up
    from central.runner import configure_central_logging, for_instance, ingest_for_run, run_central  # lazy: CLI start-up

    config = for_instance(load_central_config(config_path), instance, metrics_port)
    db_url_arg(config.database_url, must_exist=True, name="database_url")  # never a new empty ledger
    run_files(config)  # keys_dir, [publish] CSVs, a writable SQLite ledger: check-config's refusals
    # a config of another home port than the ledger's: no ingest, exit 2 (a one-port config on a
    # shared ledger is allowed: one office process per port, central.ledger.home)
    config_ledger(config, writes=True, every_port=False)
    from central.ledger.liveness import Liveness  # lazy: CLI start-up
    from central.ledger.migrate import upgrade  # lazy: CLI start-up

    lost = functools.partial(os.kill, os.getpid(), signal.SIGTERM)
    configure_central_logging(config)  # log_json for the migration's and the ledger claim's lines
    upgrade(config.database_url)  # the ingest's own migration, before the row (0037: its instance)
    # [nats]: the JetStream pull consumer (issue 37), else the MQTT ingest; one per port of `ports`;
    # its row in office_processes while it runs (``ledger home-port --set`` refuses then), which
    # refuses a second live process of this home port and instance (exit 2, instance_claim); one
    # taken over meanwhile (a process of its instance started elsewhere while this one could not
    # reach the ledger for 60 s): a clean stop, exit 0, not restarted by systemd
    with Liveness(config.database_url, "central run", config.port, instance=instance or "", on_lost=lost):
        run_central(config, lambda: ingest_for_run(config),
                    metrics_setting="$.metrics_port" if metrics_port is None else "--metrics-port")


@central.command("add-gate")
@click.option("--gate-id", required=True, help="The gate id (one topic level, e.g. g1).")
@click.option("--keys-dir", type=click.Path(file_okay=False), help="Defaults to keys_dir of --config.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml")
@click.option("--rotate", is_flag=True, help="Replace an existing key (the gate must get the new file).")
@click.option("--public-key", "public_key",
              help="The gate's Ed25519 public key: a PEM file (portgate edge key) or base64 text.")
@click.option("--nats-users", "nats_users", type=click.Path(dir_okay=False),
              help="NATS broker tier: give the gate a NATS user (and the office one) and rewrite this "
                   "include file of the nodes' nats.conf (docs/operations.md).")
@click.option("--port", "port_name", default=None,
              help="The gate's port (registered in the keys dir; default: port of --config, which must "
                   "name it when it serves several ports).")
def add_gate_cmd(gate_id: str, keys_dir: str | None, config_path: str | None, rotate: bool,
                 public_key: str | None, nats_users: str | None, port_name: str | None) -> None:
    """Create the gate's HMAC key file (0600) and print where to copy it; with --public-key,
    register the gate's signing key (an existing HMAC key is then kept) and write its enrolment
    record signed by the office key (<keys_dir>/enrolments/<gate>-<fingerprint>.json, once per key)
    for the union's inspector to countersign; with --nats-users, the gate's NATS user and password
    file (<keys_dir>/<gate>.nats-password; an existing HMAC key is then kept); with --port, the
    gate's port in <keys_dir>/gate-ports.json (an existing HMAC key is then kept). A config of
    several ports must be given --port."""
    from central.config import load_central_config  # lazy: CLI start-up
    from central.ingest.keys import add_gate, key_path  # lazy: CLI start-up

    config = load_central_config(config_path) if config_path is not None else None
    if keys_dir is None:
        if config is None:
            raise click.UsageError(tr("cli.central.give_keys_dir"))
        keys_dir = config.keys_dir
    check_before_writing(config, keys_dir, gate_id, port_name, nats_users)
    if nats_users is not None:
        _add_nats_user(keys_dir, nats_users, port_name or (config.port if config is not None else None),
                       gate_id, rotate)
    if port_name is not None:
        _register_port(keys_dir, gate_id, port_name)
    if nats_users is not None:
        if key_path(keys_dir, gate_id).exists() and not rotate:
            return
    if public_key is not None:
        _enrol_public_key(keys_dir, gate_id, public_key)
        if key_path(keys_dir, gate_id).exists() and not rotate:
            return
    if port_name is not None and key_path(keys_dir, gate_id).exists() and not rotate:
        click.echo(tr("cli.central.gate_port_registered", gate=gate_id, port=port_name), err=True)
        return  # an existing gate given its port: its key is kept
    path = add_gate(keys_dir, gate_id, overwrite=rotate)
    click.echo(str(path))
    click.echo(tr("cli.central.copy_gate_key", path=path), err=True)


def _register_port(keys_dir: str, gate_id: str, port_name: str) -> None:
    """``central.ingest.gate_port_file.register_port``; a file that cannot be read or written is one
    line (``click.UsageError``)."""
    from central.ingest.gate_port_file import register_port  # lazy: CLI start-up

    try:
        register_port(keys_dir, gate_id, port_name)
    except (OSError, ValueError) as exc:
        raise click.UsageError(str(exc)) from exc


def _add_nats_user(keys_dir: str, nats_users: str, port_name: str | None, gate_id: str, rotate: bool) -> None:
    """The gate's NATS user (and the office's) in the nodes' include file ``nats_users``; its
    password on stdout. ``click.UsageError`` without a port or for a bad include file."""
    from central.ingest.nats_users import add_gate_user  # lazy: CLI start-up (bcrypt)

    if not port_name:
        raise click.UsageError(tr("cli.central.nats_users_needs_port"))
    try:
        password, made = add_gate_user(keys_dir, nats_users, port_name, gate_id, rotate=rotate)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    click.echo(str(password))
    said = dict(gate=gate_id, users=nats_users, password=password)
    click.echo(tr("cli.central.nats_user_created", **said) if made else tr("cli.central.nats_user_kept", **said),
               err=True)


def _enrol_public_key(keys_dir: str, gate_id: str, public_key: str) -> None:
    """Register the gate's signing key (a PEM file or base64 text) and write its enrolment record
    signed by the office key (once per key); both paths on stdout."""
    import datetime as dt  # lazy: CLI start-up

    from central.evidence.enrolment import enrol  # lazy: CLI start-up
    from central.ingest.keys import register_public_key  # lazy: CLI start-up
    from central.office_key import office_key  # lazy: CLI start-up
    from wire.chain import fingerprint, load_public  # lazy: CLI start-up

    text = Path(public_key).read_text(encoding="ascii") if Path(public_key).is_file() else public_key
    pub = register_public_key(keys_dir, gate_id, text)
    click.echo(str(pub))
    key = load_public(text)
    record, written = enrol(keys_dir, gate_id, key, office_key(keys_dir), dt.datetime.now(dt.UTC))
    click.echo(str(record))
    said = dict(gate=gate_id, fingerprint=fingerprint(key), record=record)
    click.echo(tr("cli.central.key_enrolled", **said) if written
               else tr("cli.central.key_already_enrolled", **said), err=True)


@central.command("publish")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (mqtt + port)")
@click.option("--host", default=None)
@click.option("--mqtt-port", type=int, default=None)
@click.option("--port", "port_name", default=None, help="Port id (topic level), e.g. santos.")
@click.option("--workers", type=click.Path(exists=True, dir_okay=False))
@click.option("--cards", type=click.Path(exists=True, dir_okay=False))
@click.option("--escala", type=click.Path(exists=True, dir_okay=False))
@click.option("--version", "version", type=int, default=None, help="Snapshot version (default: file mtime ms).")
@click.option("--photos", "photos_dir", type=click.Path(exists=True, file_okay=False),
              help="Directory of workers' photos (<registration>.jpg|png|webp) for the gates' screens; "
                   "changes since the last publish go as a delta.")
@click.option("--full-photos", is_flag=True, help="With --photos: send the whole index and every file again.")
@click.option("--no-ledger", is_flag=True,
              help="Publish the blocklist from --cards alone, without the cards confiscated at the gates "
                   "(only for a port whose ledger has no confiscations).")
def publish(config_path, host, mqtt_port, port_name, workers, cards, escala, version, photos_dir, full_photos,
            no_ledger) -> None:
    """Publish retained roster/cards/escala snapshots built from CSV files, and workers' photos.

    The blocklist (--cards) also holds the cards confiscated at the gates, read from the ledger
    named by --config: a gate replaces its copy of the office's blocklist with each snapshot."""
    from sqlalchemy.exc import SQLAlchemyError  # lazy: CLI start-up

    from central.broadcast.csv_source import check_files  # lazy: CLI start-up

    check_files(workers=workers, cards=cards, escala=escala)  # bad rows: BadInput, exit 2, before any connection
    cfg, mqtt_cfg, port_name, ledger = _publish_setup(config_path, host, mqtt_port, port_name, cards, no_ledger)
    signer = _office_signer(cfg)
    broker = f"{mqtt_cfg.host}:{mqtt_cfg.port}"
    client = _connect_publisher(mqtt_cfg, port_name, broker, ledger)
    refused: list[str] = []
    client.on_publish = lambda _c, _u, _mid, rc, _p: rc.is_failure and refused.append(str(rc))
    client.loop_start()
    try:
        done = _send_snapshots(client, port_name, dict(workers=workers, cards=cards, escala=escala, version=version),
                               ledger, signer, photos_dir, full_photos)
    except BrokerUnavailable as exc:
        raise Failed(tr("cli.central.broker_said", broker=broker, why=exc)) from exc
    except SQLAlchemyError as exc:
        why = f"{exc.__class__.__name__}: {str(exc).splitlines()[0]}"
        raise Failed(tr("cli.central.ledger_said", db=_shown(cfg.database_url), why=why)) from exc
    finally:
        client.disconnect()
        client.loop_stop()
        if ledger is not None:
            ledger.dispose()
    _report_published(done, refused, broker, signer)


def _office_signer(cfg):
    """The office key's signer of ``cfg``'s keys folder (the gates refuse a downlink not signed
    with it), or None without --config."""
    if cfg is None:
        return None
    from central.broadcast.publisher import office_signer  # lazy: CLI start-up

    return office_signer(cfg.keys_dir)


def _publish_setup(config_path, host, mqtt_port, port_name, cards, no_ledger) -> tuple:
    """``publish``'s settings: ``(cfg, mqtt_cfg, port_name, ledger)``, the loaded --config (or
    None), the broker's settings with --host/--mqtt-port applied, the port id and the ledger's
    engine for the blocklist's confiscations (None without --cards or with --no-ledger).
    ``click.UsageError`` for --cards without --config or no port id; ``click.ClickException`` for a
    ledger that cannot be read (``_open_ledger``)."""
    from central.config import load_central_config  # lazy: CLI start-up
    from wire import connection  # lazy: CLI start-up

    cfg = None
    if config_path:
        cfg = load_central_config(config_path)
        mqtt_cfg, port_name = cfg.mqtt, port_name or cfg.port
    else:
        mqtt_cfg = connection.MqttConfig()
    ledger = None
    if cards and not no_ledger:
        if cfg is None:
            raise click.UsageError(tr("cli.central.cards_need_config"))
        ledger = _open_ledger(cfg.database_url)
    if host or mqtt_port:
        import msgspec  # lazy: CLI start-up

        mqtt_cfg = msgspec.structs.replace(mqtt_cfg, host=host or mqtt_cfg.host, port=mqtt_port or mqtt_cfg.port)
    if not port_name:
        raise click.UsageError(tr("cli.central.give_port"))
    return cfg, mqtt_cfg, port_name, ledger


def _connect_publisher(mqtt_cfg, port_name: str, broker: str, ledger):
    """A one-shot publisher's paho client (no session kept), connected to ``broker``. An
    ``ssl.SSLError`` passes (a configuration error, exit 2); a broker out of reach is a
    ``click.ClickException`` (exit 1, worth a retry), after ``ledger`` (if any) is disposed."""
    from wire import connection  # lazy: CLI start-up

    client = connection.make_client(mqtt_cfg, f"publisher-{port_name}")
    props = connection.connect_properties(mqtt_cfg)
    props.SessionExpiryInterval = 0  # a one-shot publisher keeps no session
    try:
        client.connect(mqtt_cfg.host, mqtt_cfg.port, clean_start=False, properties=props)
    except ssl.SSLError:
        raise  # a TLS setting (certificate, CA): a configuration error, exit 2
    except OSError as exc:  # refused, timed out, no route, unknown host: exit 1, worth a retry
        if ledger is not None:
            ledger.dispose()
        raise Failed(tr("cli.central.broker_unreachable", broker=broker, why=exc.strerror or exc)) from exc
    return client


def _send_snapshots(client, port_name: str, files: dict, ledger, signer, photos_dir, full_photos: bool) -> dict:
    """Publish the snapshots of ``files`` (``workers``, ``cards``, ``escala``, ``version``: the
    command's options) and, with ``photos_dir``, the photos (the photo counts on stderr). Returns
    kind -> the version each got. Raises ``BrokerUnavailable`` and ``SQLAlchemyError`` (the caller
    words them)."""
    from central.broadcast.csv_source import publish_files  # lazy: CLI start-up

    done = publish_files(client, port_name, **files, ledger=ledger, signer=signer)
    if photos_dir:
        from central.broadcast.photos import publish_photos  # lazy: CLI start-up

        sent = publish_photos(client, port_name, photos_dir, full=full_photos, signer=signer)
        done["photos"] = sent["version"]
        said = dict(version=sent["version"], files=sent["files"], removed=sent["removed"])
        click.echo(tr("cli.central.photos_delta", **said) if sent["delta"]
                   else tr("cli.central.photos_index", **said), err=True)
    return done


def _report_published(done: dict, refused: list[str], broker: str, signer) -> None:
    """``publish``'s output: each snapshot's version on stdout (machine-read), the unsigned warning
    on stderr; ``click.ClickException`` when the broker refused a message, ``click.UsageError``
    when there was nothing to publish."""
    if refused:
        raise Failed(tr("cli.central.broker_refused", broker=broker,
                                      codes=", ".join(sorted(set(refused)))))
    for kind, v in done.items():
        click.echo(tr("cli.central.published_version", kind=kind, version=v))  # the version each snapshot got
    if done and signer is None:
        click.echo(tr("cli.central.unsigned_warning"), err=True)
    if not done:
        raise click.UsageError(tr("cli.central.nothing_to_publish"))


def _shown(url: str) -> str:
    """``url`` with its password masked, for messages."""
    from sqlalchemy.engine import make_url  # lazy: CLI start-up

    return make_url(url).render_as_string(hide_password=True)


def _open_ledger(url: str):
    """An engine on the office's ledger at ``url``, checked to hold the ``events`` table (any
    database). A SQLite file that does not exist is refused before connecting, so no empty file
    is left behind. Raises ``click.ClickException`` (exit 1, one line naming the database) when the
    file or the table is missing or the database cannot be read; the caller disposes the engine."""
    from sqlalchemy import inspect  # lazy: CLI start-up
    from sqlalchemy.engine import make_url  # lazy: CLI start-up
    from sqlalchemy.exc import SQLAlchemyError  # lazy: CLI start-up

    from central.db import make_engine  # lazy: CLI start-up

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.query.get("uri") != "true" \
            and parsed.database not in (None, "", ":memory:") and not Path(parsed.database).is_file():
        raise Failed(tr("cli.central.ledger_file_missing", db=_shown(url), file=parsed.database))
    engine = make_engine(url)
    try:
        has_events = inspect(engine).has_table("events")
    except SQLAlchemyError as exc:
        engine.dispose()
        orig = getattr(exc, "orig", None) or exc
        first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
        raise Failed(tr("cli.central.ledger_unreadable", db=_shown(url), why=first)) from exc
    if not has_events:
        engine.dispose()
        raise Failed(tr("cli.central.ledger_no_events", db=_shown(url)))
    return engine


