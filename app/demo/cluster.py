"""``portgate demo --cluster``: the demo day on the scale-out tiers (issue 37), for two ports at once.

What runs, on loopback, besides what ``portgate demo`` runs per port (gates, readers, screens):

- a 3-node NATS JetStream cluster with an MQTT listener on each node (``app.cluster.nats``, its
  stores in ``RUN_DIR/nats``); the gates connect over MQTT 3.1.1 with the three nodes' list
  (``[mqtt] protocol = "3.1.1"``, ``hosts``), each gate starting on another node;
- the ledger: 3 etcd members and 3 PostgreSQL nodes under Patroni, synchronous and strict
  (``app.cluster.patroni``, in a ``/tmp/portgate-ha-*`` directory the ``postgres`` user can enter,
  removed at the end), reached through its multi-host URL (``target_session_attrs=read-write``);
- one office per port (``portgate central run``): its ingest is the JetStream durable pull
  consumer of its port's stream (``[nats]``), writing into the shared ledger; snapshots, photos
  and replay requests go to the gates through the cluster's MQTT layer;
- one office web application on the shared ledger, as ``portgate office serve`` on a central.toml
  naming both ports (``ports``, ``RUN_DIR/santos/office-web.toml``): logins as in the demo, the
  demo's ``demo`` and ``escritorio`` seeing every port, plus one office user per port
  (``escritorio-santos``, ``escritorio-paranagua``: that port's live page, flags, alarms, calls and
  reports only) and an ``auditor`` of every port (``central/web/ports.py``); each gate (also one
  only the escala names, that never connects: pr-lagoa) is registered with its own port (``app.demo.cluster_office.register_gates``, as ``central add-gate
  --nats-users ... --port``), so a port's user sees his gates before their first event.

The second port is the demo scenario under the port key ``paranagua`` with every id changed
(``app.demo.second_port``). The broker outage of the embedded demo is not played here (no node is
stopped). After the day each port gets the same checks as the embedded demo: every journal event
in the ledger exactly once and no gaps, the office's counts, pay, billing and an evidence bundle,
each against its scenario. Every process started is stopped at the end, also on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

from app.demo.cluster_office import add_port_users, register_gates, web_config
from app.demo.gate import DemoFailed
from app.demo.run import DemoRun, office_totals_line
from app.demo.scenario import Scenario
from portgate.clitext import cli_lang, tr
from portgate.l10n import day as day_text

SECOND_PORT = "paranagua"


class ClusterUnavailable(Exception):
    """A program of the cluster is not installed; the message names its Debian package."""


def check_tools() -> None:
    """Raise ``ClusterUnavailable`` naming the first missing Debian package (``app.cluster.tools``)."""
    from app.cluster.tools import missing_package

    missing = missing_package()
    if missing is not None:
        program, package = missing
        raise ClusterUnavailable(tr("cli.demo.cluster_needs_program", program=program, package=package))


class _ClusterBroker:
    """What ``DemoRun`` keeps as its broker: the cluster, started and stopped by ``run_cluster_demo``."""

    def __init__(self, nats) -> None:
        self.nats = nats
        self.port = nats.mqtt_hosts[0][1]

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


class ClusterPortRun(DemoRun):
    """One port's day on the cluster: ``DemoRun`` with the NATS brokers and the shared ledger.
    ``peers``: the other ports' runs (the web application's clock follows their gates too);
    ``serves_web``: this run starts the office web application; ``ids``: the second port's id
    map (``app.demo.second_port.IdMap``), None for the scenario's own port."""

    OFFICE_READY = "jetstream.consuming"

    def __init__(self, run_dir: Path, scenario: Scenario, *, nats, ledger_url: str, ids=None,
                 serves_web: bool = False, first_node: int = 0, lang: str = "pt",
                 out: Callable[[str], None] = print) -> None:
        super().__init__(run_dir, scenario, lang=lang, out=out, outage=False)
        self.nats = nats
        self.ledger_url = ledger_url
        self.ledger_label = tr("cli.demo.ledger_cluster")  # the console speaks --lang, set before
        self.ids = ids
        self.serves_web = serves_web
        self.peers: list[ClusterPortRun] = []
        self._next_node = first_node
        self._engine = None
        self.workers = {r for r in _column(scenario.workers_csv, "registration")}
        self.ships = {s for s in _column(scenario.escala_csv, "ship")}

    # -- the brokers -----------------------------------------------------------------------------
    def _hosts(self, first: int = 0) -> str:
        hosts = [f'"{h}:{p}"' for h, p in self.nats.mqtt_hosts]
        first %= len(hosts)
        return ", ".join(hosts[first:] + hosts[:first])

    def _start_broker(self) -> None:
        self.broker = _ClusterBroker(self.nats)

    def _office_broker_toml(self) -> str:
        port = self.scenario.spec.port
        servers = ", ".join(f'"{u}"' for u in self.nats.nats_urls)
        return (f'[mqtt]\nprotocol = "3.1.1"\nhosts = [{self._hosts()}]\nclient_id = "ledger-{port}"\n\n'
                f'[nats]\nservers = [{servers}]\nack_wait_s = 10.0\nfetch_wait_s = 0.5\n\n')

    def gate_mqtt_toml(self, mqtt_port: int) -> str:
        """MQTT 3.1.1 to the three nodes, each gate of the day starting on the next node."""
        first, self._next_node = self._next_node, self._next_node + 1
        return (f'[mqtt]\nprotocol = "3.1.1"\nhosts = [{self._hosts(first)}]\n'
                'reconnect_min_s = 0.5\nreconnect_max_s = 2\n\n')

    def _downlink_client(self, client_id: str):
        """The office's downlink client on every node's MQTT listener, as a gate's (a node down: the next)."""
        from app.demo.downlink_client import cluster_client

        return cluster_client(self.nats.mqtt_hosts, f"{client_id}-{self.scenario.spec.port}")

    # -- the ledger ------------------------------------------------------------------------------
    def _prepare_ledger(self) -> None:
        from app.demo.web import prepare_ledger

        prepare_ledger(self.ledger_url, self.scenario, self.day_start, accounts=self.ids is None)

    @property
    def engine(self):
        if self._engine is None:
            from central.db import make_engine

            self._engine = make_engine(self.ledger_url)
        return self._engine

    def _ledger_reader(self):
        return self.engine.connect()

    def _ledger_ids(self, gate_id: str) -> set[str]:
        from sqlalchemy import select
        from sqlalchemy.exc import SQLAlchemyError

        from central.ledger.schema import events

        try:
            with self.engine.connect() as c:
                return set(c.scalars(select(events.c.event_id).where(events.c.gate_id == gate_id)))
        except SQLAlchemyError:  # a failover under way: nothing known now, asked again
            return set()

    def _ledger_counts(self, db, gate_id: str) -> tuple[int, int]:
        from sqlalchemy import func, select

        from central.ledger.schema import events, gate_progress

        row = db.execute(select(gate_progress.c.highest_seq, gate_progress.c.contiguous_seq)
                         .where(gate_progress.c.gate_id == gate_id)).first()
        rows = db.execute(select(func.count()).select_from(events).where(events.c.gate_id == gate_id)).scalar_one()
        return rows, 0 if row is None else row[0] - row[1]

    def _mine(self, *, registration: str | None = None, ship: str | None = None) -> bool:
        if registration is not None:
            return registration in self.workers
        return ship is None or ship in self.ships

    # -- the web application ---------------------------------------------------------------------
    def _clock_files(self) -> list:
        return [g.clock_file for run in (self, *self.peers) for g in run.gates.values()]

    def _start_web(self) -> None:
        if not self.serves_web:
            return
        from app.demo.web import DEMO_PASSWORD, DEMO_USER, OFFICE_USER

        ports = self.served_ports()
        users = add_port_users(self.ledger_url, ports)
        super()._start_web()
        self.out(tr("cli.demo.cluster_users", ports=", ".join(ports), users=", ".join(
            f"{login} / {DEMO_PASSWORD}" for login in users[:-1]), auditor=users[-1], password=DEMO_PASSWORD,
            inspector=DEMO_USER, office=OFFICE_USER))

    def start(self) -> None:
        """Register each gate of this port with its port (``register_gates``), then the day's start."""
        register_gates(self.dir / "keys", self.scenario.spec.port, self.gate_ids())
        super().start()

    def gate_ids(self) -> list[str]:
        """This port's gates: the played ones, then those only its escala names (a ship whose gate
        never connects, as pr-lagoa): registered too, or they would read as the home port's."""
        played = [g.gate_id for g in self.scenario.spec.gates]
        return list(dict.fromkeys([*played, *_column(self.scenario.escala_csv, "gate_id")]))

    def served_ports(self) -> tuple[str, ...]:
        """The ports of the day, this run's (the home port) first."""
        return (self.scenario.spec.port, *(run.scenario.spec.port for run in self.peers))

    def _web_config(self) -> Path:
        """central.toml with ``ports`` naming every port of the day and ``port_keys_dirs`` the other
        ports' keys dirs, so the web application reads every port's gate registrations as ``office
        serve`` does (the web application only: each port's ``central run`` keeps its own one-port
        central.toml and consumer)."""
        return web_config(self.dir / "central.toml", self.served_ports(),
                          {run.scenario.spec.port: run.dir / "keys" for run in self.peers})

    def evidence(self, registration: str = "V017"):
        return super().evidence(self.ids.registrations.get(registration, registration) if self.ids else registration)

    def stop(self) -> None:
        super().stop()
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


def _column(path: Path, name: str) -> list[str]:
    import csv

    with path.open(encoding="utf-8", newline="") as f:
        return [row[name] for row in csv.DictReader(f) if row.get(name)]


def _sigterm(_signum, _frame) -> None:
    raise KeyboardInterrupt  # the same clean-up as Ctrl-C


class ClusterDay:
    """The shared parts (NATS cluster, Patroni ledger) and the two ports' runs of one
    ``portgate demo --cluster`` in ``run_dir``; ``stop()`` ends every process, whatever started."""

    def __init__(self, run_dir: Path, scenario: Scenario, *, lang: str, out: Callable[[str], None]) -> None:
        self.dir, self.scenario, self.lang, self.out = run_dir, scenario, lang, out
        self.nats = None
        self.ha = None
        self.runs: list[ClusterPortRun] = []
        self.quiet = threading.Event()  # set on Ctrl-C: the days' threads print no more

    def start(self) -> None:
        """Start the cluster, the ledger, and both ports' offices, gates and screens (the second
        port first: the first one serves the web application, its clock on every gate). Raises
        what a part raises when it does not start (``DemoFailed``, ``BrokerUnavailable``, ``StoreError``)."""
        from app.cluster.nats import start_cluster
        from app.cluster.patroni import HaLedger
        from app.demo.second_port import derive

        self.nats = start_cluster(self.dir / "nats")
        self.out(tr("cli.demo.cluster_broker", hosts=", ".join(f"{h}:{p}" for h, p in self.nats.mqtt_hosts),
                    folder=self.dir / "nats"))
        self.ha = HaLedger().start()
        self.out(tr("cli.demo.cluster_ledger", primary=self.ha.primary(), url=self.ha.url, folder=self.ha.workdir))
        second, ids = derive(self.scenario, self.dir / f"scenario-{SECOND_PORT}", SECOND_PORT)
        for sc, idmap, node in ((second, ids, 1), (self.scenario, None, 0)):
            port = sc.spec.port
            self.runs.append(ClusterPortRun(self.dir / port, sc, nats=self.nats, ledger_url=self.ha.url, ids=idmap,
                                            serves_web=idmap is None, first_node=node, lang=self.lang,
                                            out=_prefixed(self.out, port, self.quiet)))
        self.runs[1].peers = [self.runs[0]]
        for run in self.runs:
            run.start()

    @property
    def web(self):
        return self.runs[-1].web if self.runs else None

    def stop(self) -> None:
        for run in self.runs:
            if run.web is not None:
                run.web.stop()
            run.stop()
        if self.nats is not None:
            self.nats.stop()
        if self.ha is not None:
            self.ha.stop()


def run_cluster_demo(run_dir: Path, scenario: Scenario, *, lang: str = "pt", out: Callable[[str], None] = print,
                     keep_serving: bool = False) -> int:
    """Play the day for two ports on the cluster (the module docstring); return the exit status: 0
    when both ports' decisions, reconciliation, pay, billing and evidence are right, 1 when not, 2
    when a part did not start, 130 on Ctrl-C before the checks' end (after it, with
    ``keep_serving``, Ctrl-C ends the serving and the day's status stands). ``ClusterUnavailable`` before anything starts when a
    program is not installed. Every process started is stopped before it returns (also on Ctrl-C
    and SIGTERM)."""
    check_tools()
    old_umask = os.umask(0o077)
    old_term = signal.signal(signal.SIGTERM, _sigterm)
    run_dir.mkdir(parents=True, exist_ok=True)
    run_dir.chmod(0o700)
    started = time.monotonic()
    day = ClusterDay(run_dir, scenario, lang=lang, out=out)
    try:
        try:
            day.start()
        except Exception as exc:  # noqa: BLE001 - a part that did not start: one line, then the clean-up
            out(tr("cli.demo.failed", why=exc if isinstance(exc, DemoFailed) else f"{type(exc).__name__}: {exc}"))
            return 2
        out("\n" + tr("cli.demo.cluster_playing", n=len(scenario.taps), day=day_text(scenario.spec.day, cli_lang()),
                      port=scenario.spec.port, second=SECOND_PORT) + "\n")
        failed = _play(day.runs)
        for port, why in failed.items():
            out(tr("cli.demo.failed", why=f"{port}: {why}"))
        status = 2 if failed else _checks(day.runs, out)
        out("\n" + tr("cli.demo.run_dir", path=run_dir, seconds=round(time.monotonic() - started)))
        if keep_serving and day.web is not None and status != 2:
            out("\n" + tr("cli.demo.keep_serving", url=day.runs[-1].web_url))
            try:
                while day.web.thread is not None and day.web.thread.is_alive():
                    time.sleep(0.5)
            except KeyboardInterrupt:  # the end of serving, as in the embedded demo: the day's status
                out(tr("cli.demo.stopped"))
        return status
    except KeyboardInterrupt:
        day.quiet.set()
        out(tr("cli.demo.stopped"))
        return 130
    finally:
        day.stop()
        signal.signal(signal.SIGTERM, old_term)
        os.umask(old_umask)


def _prefixed(out: Callable[[str], None], port: str, quiet: threading.Event) -> Callable[[str], None]:
    """``out`` with ``[port] `` before every non-empty line (the two ports' days interleave);
    nothing once ``quiet`` is set (stopped: a day's thread may still be between two taps)."""

    def say(text: str) -> None:
        if quiet.is_set():
            return
        out("\n".join(f"[{port}] {line}" if line else "" for line in text.split("\n")))

    return say


def _play(runs: list[ClusterPortRun]) -> dict[str, str]:
    """Both ports' days at once, in two threads; returns ``{port: why}`` of the days that failed."""
    failed: dict[str, str] = {}

    def play(run: ClusterPortRun) -> None:
        try:
            run.play()
        except DemoFailed as exc:
            failed[run.scenario.spec.port] = str(exc)
        except Exception as exc:  # noqa: BLE001 - reported as the port's failure, the other port goes on
            failed[run.scenario.spec.port] = f"{type(exc).__name__}: {exc}"

    threads = [threading.Thread(target=play, args=(run,), name=f"demo-{run.scenario.spec.port}", daemon=True)
               for run in runs]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(0.5)  # a short join: Ctrl-C reaches the main thread
    return failed


def _checks(runs: list[ClusterPortRun], out: Callable[[str], None]) -> int:
    """Each port's checks after the day, as the embedded demo's; the exit status (0, 1, or 2 when
    a part failed meanwhile)."""
    try:
        balanced, tables = {}, {}
        for run in runs:  # before the gates stop; each table is printed with its port's totals below
            shown, run.out = run.out, tables.setdefault(run.scenario.spec.port, []).append
            try:
                balanced[run.scenario.spec.port] = run.reconcile()
            finally:
                run.out = shown
        for run in runs:
            run.stop()  # gates send their graceful "offline"; the offices print their totals
        for run in runs:  # as the one-port demo (app.demo.run._play): table, totals, pay, billing, evidence
            for line in tables[run.scenario.spec.port]:
                run.out(line)
            run.out(office_totals_line(run.office_totals()))
            run.pay()
            run.billing()
            run.evidence()
    except DemoFailed as exc:
        out(tr("cli.demo.failed", why=exc))
        return 2
    status = 0
    for run in runs:
        port = run.scenario.spec.port
        if run.problems:
            out(f"\n[{port}] " + tr("cli.demo.problems"))
            for p in run.problems:
                out(f"  - {p}")
            status = 1
        elif not balanced[port]:
            out(f"[{port}] " + tr("cli.demo.not_balanced"))
            status = 1
        else:
            out(f"[{port}] " + tr("cli.demo.balanced", scenario=run.scenario.dir / "scenario.toml"))
    return status
