"""A throw-away 3-node NATS JetStream cluster on loopback, for ``portgate demo --cluster``, tests and
benchmarks (issue 37; ``testkit.nats`` re-exports it).

Pinned: Debian bookworm's ``nats-server`` 2.9.10 (``/usr/sbin/nats-server``, ``scripts/setup.sh``).
Why this one: it installs from the same package source as mosquitto and PostgreSQL here (no
downloaded binary), and 2.9 is the first line whose MQTT layer runs on a JetStream *cluster*
(sessions, retained messages and QoS 1 state live in replicated ``$MQTT_*`` streams). NATS speaks
MQTT 3.1.1 only (no MQTT 5 in any 2.x), so gates reach it with ``[mqtt] protocol = "3.1.1"``.

``NatsCluster(workdir)`` writes one config per node (``n1``..``n3``): a client port, a cluster
port with routes to the two others, JetStream with a file store in ``workdir/nN/js`` (a
``server_name`` each: JetStream in a cluster and the MQTT layer both need it), an MQTT listener
and an HTTP monitor port (``/healthz?js-enabled-only=true`` says when JetStream is up). ``start()``
starts the three processes and waits until every node answers healthy and the cluster has a
JetStream meta leader; ``kill(i)`` SIGKILLs node ``i`` (a power cut), ``start_node(i)`` starts it
again on the same ports and store; ``stop()`` stops them all (SIGTERM) and keeps ``workdir``.

``clustered=False`` (with ``size=1``): one server without a ``cluster`` block, where JetStream
refuses a stream of more than one replica (the single-node mistake ``central.ingest.jetstream_why``
explains); ``start()`` then waits for health alone (no meta leader).

``auth_include``: a users file (``portgate central add-gate --nats-users``) each node includes; ``tls``:
``testkit.tls.TlsFiles`` for a TLS MQTT listener; ``reload()`` SIGHUPs the nodes (users added).

``mqtt_hosts`` is ``[(host, port), ...]`` of the MQTT listeners; ``nats_urls`` the client URLs
(``nats://127.0.0.1:P``) for ``nats-py``. Running as root is fine: nats-server drops nothing.

Errors: ``BrokerUnavailable`` if ``nats-server`` is missing or a node does not become healthy (the
message carries the tail of that node's log).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from portgate.errors import BrokerUnavailable
from app.cluster.pg import free_port

EXE_CANDIDATES = ("nats-server", "/usr/sbin/nats-server", "/usr/bin/nats-server")
CLUSTER_NAME = "portgate"


def find_exe(which=shutil.which) -> str | None:
    """The ``nats-server`` executable, or None when it is not installed (``which``: how a name is
    looked up, ``shutil.which``)."""
    for name in EXE_CANDIDATES:
        found = which(name)
        if found:
            return found
    return None


class NatsNode:
    """One node's ports, paths and process."""

    def __init__(self, workdir: Path, name: str) -> None:
        self.name = name
        self.dir = workdir / name
        self.client_port, self.cluster_port = free_port(), free_port()
        self.mqtt_port, self.http_port = free_port(), free_port()
        self.conf_path = self.dir / "nats.conf"
        self.log_path = self.dir / "nats.log"
        self.proc: subprocess.Popen | None = None
        self.monitor_moves = 0

    def config(self, routes: list[int], *, auth_include: Path | None = None, tls=None, clustered: bool = True) -> str:
        """The node's nats.conf; ``clustered=False``: no ``cluster`` block (a single, non-clustered
        server, where JetStream refuses ``replicas`` > 1) and the MQTT layer's streams unreplicated."""
        route_urls = ", ".join(f'"nats-route://127.0.0.1:{p}"' for p in routes)
        mqtt_tls = [f'  tls {{ cert_file: "{tls.cert}", key_file: "{tls.key}" }}'] if tls is not None else []
        # a relative include: nats-server 2.9 resolves it from this file's folder
        auth = [f'include "{os.path.relpath(auth_include, self.dir)}"'] if auth_include is not None else []
        return "\n".join([*auth,
            f'server_name: "{self.name}"',
            f"listen: 127.0.0.1:{self.client_port}",
            f"http: 127.0.0.1:{self.http_port}",
            f'log_file: "{self.log_path}"',
            "jetstream {",
            f'  store_dir: "{self.dir / "js"}"',
            "  max_memory_store: 64MB",
            "  max_file_store: 2GB",
            "}",
            *(["cluster {",
               f"  name: {CLUSTER_NAME}",
               f"  listen: 127.0.0.1:{self.cluster_port}",
               f"  routes: [{route_urls}]",
               "}"] if clustered else []),
            "mqtt {",
            f"  listen: 127.0.0.1:{self.mqtt_port}",
            "  ack_wait: \"10s\"",  # QoS 1 redelivery to an MQTT subscriber that sent no PUBACK
            # the MQTT layer's own streams (sessions, retained messages, QoS 1 queues): without this,
            # 2.9.10 counts the *other* nodes it sees at the first MQTT connect (2 of 3) and makes
            # them R2; a SIGKILLed member then leaves $MQTT_sess without quorum ("NO quorum, stalled")
            # and every MQTT CONNECT on the surviving nodes fails until it comes back (measured)
            *(["  stream_replicas: 3"] if clustered else []),
            *mqtt_tls,
            "}",
            "",
        ])

    def log_tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return "(no log)"

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/healthz", timeout=1) as r:
                return json.loads(r.read()).get("status") == "ok"
        except (OSError, urllib.error.URLError, ValueError):
            return False

    def jsz(self) -> dict:
        """The node's ``/jsz`` (JetStream state: meta leader, streams)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/jsz", timeout=2) as r:
            return json.loads(r.read())


class NatsCluster:
    """Three nats-server processes with JetStream, cluster routes and MQTT; a context manager."""

    def __init__(self, workdir: str | Path, *, size: int = 3, auth_include: Path | None = None, tls=None,
                 clustered: bool = True) -> None:
        self.workdir = Path(workdir)
        self.exe = find_exe()
        self.nodes = [NatsNode(self.workdir, f"n{i + 1}") for i in range(size)]
        self.clustered = clustered  # False: one server without a cluster block (size 1)
        self._conf_args = {"auth_include": auth_include, "tls": tls, "clustered": clustered}
        for node in self.nodes:
            node.dir.mkdir(parents=True, exist_ok=True)
            self._write_config(node)

    def _write_config(self, node: NatsNode) -> None:
        routes = [o.cluster_port for o in self.nodes if o is not node]
        node.conf_path.write_text(node.config(routes, **self._conf_args))

    @property
    def mqtt_hosts(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", n.mqtt_port) for n in self.nodes]

    @property
    def nats_urls(self) -> list[str]:
        return [f"nats://127.0.0.1:{n.client_port}" for n in self.nodes]

    def live_urls(self) -> list[str]:
        """The client URLs of the nodes whose process runs."""
        return [f"nats://127.0.0.1:{n.client_port}" for n in self.nodes if n.proc is not None and n.proc.poll() is None]

    def start_node(self, i: int) -> None:
        """Start node ``i`` (0-based) on its ports and store (again after ``kill``)."""
        if self.exe is None:
            raise BrokerUnavailable("nats-server is not installed (Debian package nats-server)")
        node = self.nodes[i]
        node.proc = subprocess.Popen([self.exe, "-c", str(node.conf_path)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)

    def start(self, timeout: float = 30.0) -> NatsCluster:
        for i in range(len(self.nodes)):
            self.start_node(i)
        self.wait_healthy(timeout)
        return self

    def wait_healthy(self, timeout: float = 30.0, nodes: list[int] | None = None) -> None:
        """Wait until the nodes (all by default) answer healthy and a meta leader is elected."""
        deadline = time.monotonic() + timeout
        wanted = [self.nodes[i] for i in (nodes if nodes is not None else range(len(self.nodes)))]
        while time.monotonic() < deadline:
            dead = [n for n in wanted if n.proc is not None and n.proc.poll() is not None]
            dead = [n for n in dead if not self._moved_monitor(n)]
            if dead:
                raise BrokerUnavailable(f"nats-server {dead[0].name} exited: {dead[0].log_tail()}")
            if all(n.healthy() for n in wanted) and (not self.clustered or self.meta_leader() is not None):
                return
            time.sleep(0.1)
        raise BrokerUnavailable("NATS cluster not healthy in time: "
                                + " | ".join(f"{n.name}: {n.log_tail(600)}" for n in wanted))

    def _moved_monitor(self, node: NatsNode) -> bool:
        """A node that exited because its HTTP monitor port was taken in the meantime (chosen free
        at construction, bound by another test's server before this node started: seen in CI) is
        started again on a new monitor port, at most three times; True when it was. The monitor
        port is this class's alone (health and ``/jsz``); the client, route and MQTT ports are
        known to others and are not moved."""
        if node.monitor_moves >= 3 or "can't listen to the monitor port" not in node.log_tail(400):
            return False
        node.monitor_moves += 1
        node.http_port = free_port()
        self._write_config(node)
        with node.log_path.open("a") as log:
            log.write(f"(portgate: monitor port taken, moved to {node.http_port})\n")
        self.start_node(self.nodes.index(node))
        return True

    def meta_leader(self) -> str | None:
        """The JetStream meta leader's server name as one live node sees it, or None."""
        for node in self.nodes:
            if node.proc is None or node.proc.poll() is not None:
                continue
            try:
                leader = node.jsz().get("meta_cluster", {}).get("leader")
            except (OSError, ValueError):
                continue
            if leader:
                return leader
        return None

    def kill(self, i: int) -> None:
        """SIGKILL node ``i`` (0-based): no clean shutdown, like a power cut."""
        proc = self.nodes[i].proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)

    def reload(self) -> None:
        """SIGHUP every live node: it reads its configuration again (users added by add-gate)."""
        for node in self.nodes:
            if node.proc is not None and node.proc.poll() is None:
                node.proc.send_signal(signal.SIGHUP)

    def node_by_mqtt_port(self, port: int) -> int:
        return next(i for i, n in enumerate(self.nodes) if n.mqtt_port == port)

    def stop(self) -> None:
        for node in self.nodes:
            if node.proc is not None and node.proc.poll() is None:
                node.proc.terminate()
        for node in self.nodes:
            if node.proc is not None:
                try:
                    node.proc.wait(10)
                except subprocess.TimeoutExpired:
                    node.proc.kill()
                    node.proc.wait(5)

    def __enter__(self) -> NatsCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_cluster(workdir: str | Path, *, size: int = 3, attempts: int = 3, timeout: float = 30.0,
                  auth_include: Path | None = None, tls=None) -> NatsCluster:
    """A started ``NatsCluster`` in ``workdir``. A port chosen free and taken before the node bound
    it (another test's server started in between: "address already in use") is retried with new
    ports in a fresh subfolder, up to ``attempts`` times; any other failure is raised at once
    (``BrokerUnavailable``)."""
    workdir = Path(workdir)
    for n in range(attempts):
        cluster = NatsCluster(workdir / f"retry{n}" if n else workdir, size=size, auth_include=auth_include, tls=tls)
        try:
            return cluster.start(timeout)
        except BrokerUnavailable as exc:
            cluster.stop()
            if "address already in use" not in str(exc) or n == attempts - 1:
                raise
    raise AssertionError("unreachable")
