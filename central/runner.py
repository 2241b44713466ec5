"""The office service's life cycle (``portgate central run``): logging, metrics, systemd.

Start-up order: structlog (JSON under systemd, ``port`` bound to every line); the Prometheus
endpoint (``metrics_port``, 0 = off); the ingest workers (database tables, MQTT sessions); wait up
to ``ready_wait_s`` for every worker's MQTT session, then ``READY=1`` (with a STATUS saying whether
the broker was reached: the workers keep reconnecting in the background, so a broker that is down
at start does not make systemd restart the office in a loop).

Main loop: every ``Notifier.interval`` seconds, ``WATCHDOG=1`` only if every worker thread is still
alive. A dead worker (a bug) therefore stops the pings and systemd (``WatchdogSec=``) restarts the
service; unacknowledged messages are redelivered by the broker, so nothing is lost.

SIGTERM/SIGINT: ``STOPPING=1``, finish the current batches, disconnect (sessions stay on the broker).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

import msgspec
import structlog

from central import metrics
from portgate.errors import ConfigError, StoreError
from portgate.gctune import tune_for_service
from portgate.logs import configure_logging
from portgate.metrics import serve
from portgate.notify import Notifier

log = structlog.get_logger("central.runner")


#: the longest ``--instance`` name: ``office_processes.instance`` is VARCHAR(64) (migration 0037;
#: PostgreSQL refuses a longer value, SQLite would store it)
INSTANCE_MAX = 64


def for_instance(config, instance: str | None, metrics_port: int | None = None):
    """The config of one instance of ``portgate-central@.service``: MQTT client ids
    ``<client_id or ledger-<port>>-<instance>-<worker>`` (each process keeps its own persistent
    sessions in the share group) and, if given, another metrics port. Raises ``ConfigError`` for an
    instance name that is not a single MQTT-safe word of at most ``INSTANCE_MAX`` characters."""
    if instance:
        if not instance.replace("-", "").replace("_", "").isalnum() or len(instance) > INSTANCE_MAX:
            shown = instance if len(instance) <= INSTANCE_MAX else instance[:INSTANCE_MAX] + "..."
            raise ConfigError(f"instance name {shown!r} ({len(instance)} characters) must be 1 to {INSTANCE_MAX} "
                              "letters, digits, - or _", key="--instance")
        base = config.mqtt.client_id or f"ledger-{config.port}"
        config = msgspec.structs.replace(
            config, mqtt=msgspec.structs.replace(config.mqtt, client_id=f"{base}-{instance}"))
    if metrics_port is not None:
        config = msgspec.structs.replace(config, metrics_port=metrics_port)
    return config


def configure_central_logging(config) -> None:
    """``log_json``, ``log_level`` and the fields of every line of a ``central run``: called before
    the first line is logged (``central.cli.run``: the ledger claim's ``office.instance_taken_over``
    comes before ``run_central``), and again by ``run_central`` (the same settings)."""
    configure_logging(json=config.log_json, level=config.log_level,
                      fields={"service": "central", "port": config.port,
                              "client_id": config.mqtt.client_id or f"ledger-{config.port}"})


def run_central(config, make_ingest: Callable[[], object], *, ready_wait_s: float = 10.0,
                metrics_setting: str = "$.metrics_port") -> None:
    """Run the office until SIGTERM/SIGINT. ``make_ingest`` builds the (not yet started) ``Ingest``.

    Raises ``ConfigError`` (bad secret file; the metrics port taken, naming ``metrics_setting``:
    ``--metrics-port`` when given there) before READY; the CLI turns it into one line and exit status 2.
    """
    configure_central_logging(config)
    notifier = Notifier()
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    ingest = make_ingest()
    serve(config.metrics_port, config.metrics_addr, setting=metrics_setting)
    ingest.start()
    tune_for_service()  # portgate/gctune.py: start-up objects frozen, fewer collections
    metrics.watch_ingest(ingest.workers)
    connected = ingest.wait_connected(timeout=ready_wait_s)
    status = (f"ingesting port {', '.join(config.served_ports)} with {len(ingest.workers)} worker(s)"
              + ("" if connected else "; broker not reached yet, retrying"))
    log.info("central_started", workers=len(ingest.workers), broker_connected=connected,
             metrics_port=config.metrics_port)
    notifier.ready(status)
    publisher = getattr(ingest, "publisher", None)  # [publish] source = "registry"
    publishers = getattr(ingest, "publishers", [publisher] if publisher is not None else [])  # one per port
    watched = [*ingest.workers, *publishers]
    tick = max(0.05, min(notifier.interval / 2, 1.0))
    reported_dead = False
    try:
        while not done.wait(tick):
            if all(metrics.worker_alive(w) for w in watched):
                notifier.watchdog()
            elif not reported_dead:
                reported_dead = True
                log.error("ingest_worker_died", alive=sum(map(metrics.worker_alive, ingest.workers)))
    finally:
        notifier.stopping()
        log.info("central_stopping")
        ingest.stop()
        totals: dict[str, int] = {}
        for worker in ingest.workers:
            for name, value in worker.stats.items():
                totals[name] = totals.get(name, 0) + value
        log.info("ingest.totals", **totals)


def ingest_for_run(config):
    """The ingest ``portgate central run`` starts (``central.ingest.ports.make_ingest``) on an
    engine that opens only the ledger file there is (``make_engine(existing_file=True)``, SQLite URI ``mode=rw``,
    as ``office serve``): a file gone between the start-up check and the first connection, or
    removed or replaced while the office runs, is never created again as a new empty ledger. A
    file gone at start-up is ``db_url_arg``'s refusal (``BadInput``, exit 2); another failure to
    open it the migration's ``StoreError`` or ``central.db.read_failure``'s (exit 1: not reachable,
    a locked file; else 2)."""
    from sqlalchemy.exc import SQLAlchemyError  # lazy: CLI start-up

    from central.cli_args import db_url_arg  # lazy: CLI start-up
    from central.db import make_engine, read_failure  # lazy: CLI start-up
    from central.ingest.ports import make_ingest  # lazy: CLI start-up

    engine = make_engine(config.database_url, existing_file=True)
    try:
        return make_ingest(config, engine=engine)
    except (SQLAlchemyError, StoreError) as exc:  # the migration's StoreError, or the driver's
        engine.dispose()
        db_url_arg(config.database_url, must_exist=True, name="database_url")  # the file is gone: say so
        if isinstance(exc, StoreError):
            raise
        raise read_failure(engine.url.render_as_string(hide_password=True), engine.dialect.name, exc) from exc
