"""Fixtures for the operations tests: a fake systemd notify socket, service subprocesses, scrapes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from app.demo.mosquitto import Mosquitto, free_port
from testkit import cli as testkit_cli
from testkit.nats import find_exe, start_cluster

PORTGATE = [sys.executable, "-m", "app.cli"]


class NotifySocket:
    """A unix datagram socket standing in for systemd's ``NOTIFY_SOCKET``; records every message."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.1)
        self.messages: list[str] = []

    def poll(self) -> list[str]:
        while True:
            try:
                data = self.sock.recv(4096)
            except (TimeoutError, BlockingIOError):
                return self.messages
            self.messages.append(data.decode())

    def seen(self, text: str) -> int:
        return sum(1 for m in self.poll() if text in m.split("\n"))

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def notify_socket(tmp_path):
    ns = NotifySocket(tmp_path / "notify.sock")
    yield ns
    ns.close()


class Service:
    """A ``portgate ...`` subprocess with stdout/stderr captured to files."""

    def __init__(self, args: list[str], *, env: dict[str, str], workdir: Path) -> None:
        self.out = workdir / "service.out"
        self.err = workdir / "service.err"
        self.proc = subprocess.Popen([*PORTGATE, *args], env=env, stdout=self.out.open("wb"),
                                     stderr=self.err.open("wb"), cwd=workdir)

    def output(self) -> str:
        return self.out.read_text(errors="replace") + self.err.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 20.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture
def start_service(tmp_path):
    started: list[Service] = []

    def start(args: list[str], *, notify: NotifySocket | None = None, watchdog_usec: int = 0,
              extra_env: dict[str, str] | None = None) -> Service:
        env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
        env["PYTHONUNBUFFERED"] = "1"
        if notify is not None:
            env["NOTIFY_SOCKET"] = str(notify.path)
        if watchdog_usec:
            env["WATCHDOG_USEC"] = str(watchdog_usec)
        env.update(extra_env or {})
        svc = Service(args, env=env, workdir=tmp_path)
        started.append(svc)
        return svc

    yield start
    for svc in started:
        svc.stop()


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        return resp.read().decode()


def run_cli(args: list[str], **kw) -> subprocess.CompletedProcess:
    """The installed command (``python -m app.cli``, a Python start): a service's ``run`` (it installs
    signal handlers and logging once started) and one ``check-config`` of each kind."""
    return subprocess.run([*PORTGATE, *args], capture_output=True, text=True, timeout=120, **kw)


def run_here(args: list[str]) -> subprocess.CompletedProcess:
    """``check-config`` and the other short commands through ``app.cli.main`` in this process
    (``testkit.cli.run_here``: the same code and output without a Python start)."""
    return testkit_cli.run_here(args)


def run_cli_or_here(args: list[str]) -> subprocess.CompletedProcess:
    """``check-config`` in this process (``run_here``), any other command (a service's ``run``)
    through the installed command (``run_cli``)."""
    return run_here(args) if args[1:2] == ["check-config"] else run_cli(args)


@pytest.fixture
def nats_cluster(tmp_path):
    """A 3-node NATS JetStream cluster of its own (testkit.nats), stopped after the test."""
    assert find_exe(), "nats-server is not installed: scripts/setup.sh installs it (as root)"
    c = start_cluster(tmp_path / "nats")
    yield c
    c.stop()


@pytest.fixture
def broker(tmp_path):
    with Mosquitto(tmp_path / "broker") as b:
        yield b


@pytest.fixture
def secure_broker(tmp_path):
    """A broker with a password: user ``office`` / ``ledger-pw-Secr3t`` and ``g1`` / ``gate-pw-Secr3t``."""
    users = {"office": "ledger-pw-Secr3t", "g1": "gate-pw-Secr3t"}
    with Mosquitto(tmp_path / "sbroker", users=users) as b:
        b.users_passwords = users
        yield b


__all__ = ["free_port", "scrape", "run_cli", "run_here", "run_cli_or_here"]
