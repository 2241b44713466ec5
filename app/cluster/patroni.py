"""A throw-away replicated ledger on loopback: 3 etcd members and 3 PostgreSQL nodes under Patroni
(issue 37, the ledger tier), for ``portgate demo --cluster``, tests and benchmarks (``testkit.patroni``
re-exports it).

Pinned: Debian bookworm's ``patroni`` 3.0.2, ``etcd-server`` 3.4.23 and ``postgresql`` 15
(``scripts/setup.sh``): the same package source as mosquitto and PostgreSQL, no downloaded binary.
Patroni talks to etcd through its v3 API (``etcd3:`` section: Patroni's own client over etcd's gRPC
gateway, no extra Python package).

The cluster runs in **synchronous mode, strict** (``synchronous_mode_strict``): a commit is
acknowledged only once a standby has it, and with no standby left the primary refuses writes
rather than acknowledge one that a failover would lose. ``ttl`` 10 s, ``loop_wait`` 1 s and
``retry_timeout`` 3 s keep a failover in a test within about 15 s.

``HaLedger().start()`` starts the three etcd members, then the three Patroni nodes (as the
``postgres`` user when run as root: PostgreSQL refuses root), waits for a leader and a synchronous
standby and creates the ``portgate`` database; ``url`` is the office's multi-host SQLAlchemy URL
(``...?host=127.0.0.1:P1&host=...&target_session_attrs=read-write``: libpq tries each host and keeps
the one that accepts writes). ``primary()`` names the leader (Patroni's REST ``/cluster``),
``kill(name)`` SIGKILLs a node's Patroni and its PostgreSQL (a power cut), ``kill_etcd(i)`` an etcd
member, ``stop()`` stops everything and removes its directory (``workdir``, by default a new one under
``/tmp``: the ``postgres`` user must be able to enter it).

Errors: ``StoreError`` if a binary is missing or the cluster does not come up in time (the message
carries the tail of the failing process's log).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from portgate.errors import StoreError
from app.cluster.pg import DEFAULT_DB, _run_as_user, find_bindir, free_port

SCOPE = "portgate-ledger"


def find_tools() -> dict[str, str] | None:
    """Paths of ``patroni`` and ``etcd``, or None when either is not installed."""
    found = {name: shutil.which(name) or "" for name in ("patroni", "etcd")}
    return found if all(found.values()) else None


def _tail(path: Path, n: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


class _Proc:
    """A started process with its log file."""

    def __init__(self, name: str, log: Path) -> None:
        self.name, self.log = name, log
        self.proc: subprocess.Popen | None = None

    def start(self, cmd: list[str], **kw) -> None:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, **kw)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        """Signal the whole process group (Patroni's PostgreSQL children with it)."""
        if self.alive():
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def stop(self, timeout: float = 20) -> None:
        if self.proc is None:
            return
        self.signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            self.proc.wait(10)


class HaLedger:
    """Three etcd members and three Patroni/PostgreSQL nodes on loopback (the module docstring)."""

    def __init__(self, workdir: Path | None = None, *, nodes: int = 3, ttl: int = 10) -> None:
        tools = find_tools()
        if tools is None:
            raise StoreError("patroni or etcd is not installed: scripts/setup.sh installs them (as root)")
        self.tools = tools
        # a directory of its own under /tmp: the ``postgres`` user must reach it (pytest's tmp_path
        # lies under a directory only root may enter)
        self.workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="portgate-ha-"))
        self.bindir = find_bindir()
        self.user = _run_as_user()
        self.ttl = ttl
        self.etcd = [{"name": f"e{i}", "client": free_port(), "peer": free_port()} for i in range(3)]
        self.nodes = [{"name": f"pg{i}", "pg": free_port(), "rest": free_port()} for i in range(nodes)]
        self._etcd_procs: list[_Proc] = []
        self._pg_procs: dict[str, _Proc] = {}

    # -- addresses -----------------------------------------------------------------------------
    @property
    def etcd_hosts(self) -> str:
        return ",".join(f"127.0.0.1:{e['client']}" for e in self.etcd)

    @property
    def url(self) -> str:
        """The office's multi-host URL: libpq keeps the host that accepts writes."""
        hosts = "&".join(f"host=127.0.0.1:{n['pg']}" for n in self.nodes)
        return f"postgresql+psycopg://postgres@/{DEFAULT_DB}?{hosts}&target_session_attrs=read-write"

    def port_of(self, name: str) -> int:
        """Node ``name``'s PostgreSQL port."""
        return next(n["pg"] for n in self.nodes if n["name"] == name)

    def node_url(self, name: str, db: str = DEFAULT_DB) -> str:
        """A single-host URL of one node (to read a standby, or to check one node's contents)."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port_of(name)}/{db}"

    # -- etcd ----------------------------------------------------------------------------------
    def _start_etcd(self, i: int) -> None:
        e = self.etcd[i]
        initial = ",".join(f"{m['name']}=http://127.0.0.1:{m['peer']}" for m in self.etcd)
        data = self.workdir / e["name"]
        state = "existing" if data.exists() else "new"
        data.mkdir(parents=True, exist_ok=True)
        proc = _Proc(e["name"], self.workdir / f"{e['name']}.log")
        proc.start([self.tools["etcd"], "--name", e["name"], "--data-dir", str(data),
                    "--listen-client-urls", f"http://127.0.0.1:{e['client']}",
                    "--advertise-client-urls", f"http://127.0.0.1:{e['client']}",
                    "--listen-peer-urls", f"http://127.0.0.1:{e['peer']}",
                    "--initial-advertise-peer-urls", f"http://127.0.0.1:{e['peer']}",
                    "--initial-cluster", initial, "--initial-cluster-state", state,
                    "--initial-cluster-token", f"portgate-{os.getpid()}",
                    "--heartbeat-interval", "100", "--election-timeout", "1000"])
        if i < len(self._etcd_procs):
            self._etcd_procs[i] = proc
        else:
            self._etcd_procs.append(proc)

    def _etcd_healthy(self, i: int) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.etcd[i]['client']}/health", timeout=1) as r:
                return json.loads(r.read()).get("health") == "true"
        except (OSError, ValueError):
            return False

    def kill_etcd(self, i: int) -> None:
        """SIGKILL etcd member ``i`` (0..2); the two others keep the quorum."""
        self._etcd_procs[i].signal(signal.SIGKILL)
        self._etcd_procs[i].proc.wait(10)

    def start_etcd(self, i: int) -> None:
        """Start etcd member ``i`` again on its ports and data."""
        self._start_etcd(i)

    # -- Patroni ---------------------------------------------------------------------------------
    def _patroni_config(self, node: dict) -> Path:
        d = self.workdir / node["name"]
        d.mkdir(parents=True, exist_ok=True)
        sock = self.workdir / "sock"
        sock.mkdir(exist_ok=True)
        conf = {
            "scope": SCOPE, "name": node["name"],
            "log": {"level": "WARNING"},
            "restapi": {"listen": f"127.0.0.1:{node['rest']}", "connect_address": f"127.0.0.1:{node['rest']}"},
            "etcd3": {"hosts": self.etcd_hosts},
            "bootstrap": {
                "dcs": {"ttl": self.ttl, "loop_wait": 1, "retry_timeout": 3,
                        "maximum_lag_on_failover": 1048576,
                        "synchronous_mode": True, "synchronous_mode_strict": True,
                        "postgresql": {"use_pg_rewind": True, "use_slots": True,
                                       "parameters": {"wal_level": "replica", "hot_standby": "on",
                                                      "max_wal_senders": 10, "max_replication_slots": 10,
                                                      "wal_log_hints": "on", "max_connections": 60}}},
                "initdb": [{"encoding": "UTF8"}, {"locale": "C"}, "data-checksums"],
                "pg_hba": ["local all all trust", "host replication all 127.0.0.1/32 trust",
                           "host all all 127.0.0.1/32 trust"],
            },
            "postgresql": {
                "listen": f"127.0.0.1:{node['pg']}", "connect_address": f"127.0.0.1:{node['pg']}",
                "data_dir": str(d / "data"), "bin_dir": str(self.bindir), "pgpass": str(d / "pgpass"),
                "authentication": {"superuser": {"username": "postgres", "password": "portgate"},
                                   "replication": {"username": "replicator", "password": "portgate"},
                                   "rewind": {"username": "postgres", "password": "portgate"}},
                "parameters": {"unix_socket_directories": str(sock)},
            },
            "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False, "nosync": False},
        }
        path = d / "patroni.yml"
        path.write_text(json.dumps(conf, indent=1))  # JSON is YAML
        return path

    def _chown(self, path: Path) -> None:
        if not self.user:
            return
        entry = pwd.getpwnam(self.user)
        for root, dirs, files in os.walk(path):
            for name in (root, *[os.path.join(root, x) for x in dirs + files]):
                os.chown(name, entry.pw_uid, entry.pw_gid)

    def start_node(self, name: str) -> None:
        """Start (again) the Patroni node ``name`` (``pg0``..``pg2``) on its ports and data."""
        node = next(n for n in self.nodes if n["name"] == name)
        conf = self._patroni_config(node)
        self._chown(self.workdir / name)
        self._chown(self.workdir / "sock")
        proc = _Proc(name, self.workdir / f"{name}.log")
        cmd = [self.tools["patroni"], str(conf)]
        proc.start(["runuser", "-u", self.user, "--", *cmd] if self.user else cmd)
        self._pg_procs[name] = proc

    def cluster(self) -> dict:
        """Patroni's view of the cluster (REST ``/cluster`` of any node that answers): ``{"members":
        [{"name", "role": leader|sync_standby|replica, "state", "lag"...}]}``; ``{}`` if none answers."""
        for n in self.nodes:
            if name_alive := self._pg_procs.get(n["name"]):
                if not name_alive.alive():
                    continue
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{n['rest']}/cluster", timeout=1) as r:
                    return json.loads(r.read())
            except (OSError, ValueError):
                continue
        return {}

    def roles(self) -> dict[str, str]:
        """``{node name: role}`` of the members that are running."""
        return {m["name"]: m["role"] for m in self.cluster().get("members", []) if m.get("state") in ("running", "streaming")}

    def primary(self) -> str | None:
        """The leader's node name, or None during an election."""
        return next((n for n, r in self.roles().items() if r == "leader"), None)

    def wait_ready(self, timeout: float = 90, *, members: int | None = None) -> str:
        """Wait for a leader and a synchronous standby (and ``members`` running members); return
        the leader's name. ``StoreError`` with the node logs if it does not happen in time."""
        want = members or len(self.nodes)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            roles = self.roles()
            if "leader" in roles.values() and "sync_standby" in roles.values() and len(roles) >= want:
                return next(n for n, r in roles.items() if r == "leader")
            time.sleep(0.3)
        logs = "\n".join(f"--- {p.name}: {_tail(p.log, 800)}" for p in self._pg_procs.values())
        raise StoreError(f"the Patroni cluster did not become ready in {timeout:.0f} s: {self.roles()}\n{logs}")

    def kill(self, name: str) -> None:
        """SIGKILL node ``name``'s Patroni and its PostgreSQL together (a power cut of that server)."""
        proc = self._pg_procs[name]
        proc.signal(signal.SIGKILL)
        proc.proc.wait(10)
        self.kill_postmaster(name)

    def kill_postmaster(self, name: str) -> None:
        """SIGKILL node ``name``'s postmaster by its pid file, if it outlived its Patroni's group."""
        pidfile = self.workdir / name / "data" / "postmaster.pid"
        try:  # the postmaster left the group? kill it by its pid file, if that pid is still it
            pid = int(pidfile.read_text().split()[0])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"postgres" in cmdline and str(self.workdir / name).encode() in cmdline:
                os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self, timeout: float = 120) -> HaLedger:
        self.workdir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.workdir, 0o755)
        try:
            for i in range(len(self.etcd)):
                self._start_etcd(i)
            deadline = time.monotonic() + 30
            while not all(self._etcd_healthy(i) for i in range(len(self.etcd))):
                if time.monotonic() > deadline:
                    raise StoreError("etcd did not become healthy: "
                                     + " ".join(_tail(p.log, 600) for p in self._etcd_procs))
                time.sleep(0.2)
            self.start_node(self.nodes[0]["name"])  # the first one bootstraps; the others clone it
            deadline = time.monotonic() + timeout
            while self.primary() is None:
                if time.monotonic() > deadline or not self._pg_procs[self.nodes[0]["name"]].alive():
                    raise StoreError("no Patroni leader: " + _tail(self._pg_procs[self.nodes[0]["name"]].log))
                time.sleep(0.3)
            for n in self.nodes[1:]:
                self.start_node(n["name"])
            self.wait_ready(timeout)
            self._create_database()
        except BaseException:
            self.stop()
            raise
        return self

    def _create_database(self) -> None:
        import psycopg  # lazy: testkit users without PostgreSQL tests

        leader = next(n for n in self.nodes if n["name"] == self.primary())
        with psycopg.connect(host="127.0.0.1", port=leader["pg"], user="postgres", dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DEFAULT_DB}")

    def stop(self) -> None:
        """Stop every node and member and remove ``workdir``. Safe to call twice."""
        for proc in [*self._pg_procs.values(), *self._etcd_procs]:  # throw-away: no clean shutdown
            proc.signal(signal.SIGKILL)
        for proc in [*self._pg_procs.values(), *self._etcd_procs]:
            if proc.proc is not None:
                proc.proc.wait(10)
        for name in self._pg_procs:
            self.kill_postmaster(name)
        self._pg_procs, self._etcd_procs = {}, []
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> HaLedger:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
