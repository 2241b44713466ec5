"""A private mosquitto broker on a free loopback port, for tests, benchmarks and the demo.

``Mosquitto(workdir)`` writes a config (``listener PORT 127.0.0.1``, ``persistence true``, a private
``persistence_location``), starts ``mosquitto -c``, and waits until the port accepts connections.
``stop()`` (SIGTERM: the broker saves its persistence file), ``kill()`` (SIGKILL: whatever was not
autosaved is lost, like a power cut) and ``start()`` again on the same port and directory.

Running as root: mosquitto would drop privileges to the user ``mosquitto``, which cannot write its
persistence file inside a root-owned private directory (e.g. pytest's 0700 temporary directories),
and would then lose every session on restart without saying so. The generated config therefore says
``user root`` when we are root; the production config (``config/mosquitto/``) keeps the drop.

Optional ``users`` (name -> password) writes a password file with ``mosquitto_passwd`` and turns
anonymous access off; optional ``acl`` text is written to an ACL file.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from portgate.errors import BrokerUnavailable, ConfigError


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Mosquitto:
    """One private broker. Use as a context manager or call ``start``/``stop``."""

    def __init__(
        self,
        workdir: str | Path,
        *,
        port: int | None = None,
        users: dict[str, str] | None = None,
        acl: str | None = None,
        extra: str = "",
        autosave_interval: int = 1,
    ) -> None:
        self.workdir = Path(workdir)
        self.port = port or free_port()
        self.host = "127.0.0.1"
        self.users = users
        self.acl = acl
        self.extra = extra
        self.autosave_interval = autosave_interval
        self.proc: subprocess.Popen | None = None
        self.exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        self.conf_path = self.workdir / "mosquitto.conf"
        self.log_path = self.workdir / "mosquitto.log"
        self._write_config()

    # -- configuration -------------------------------------------------------------------------
    def _write_config(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        data = self.workdir / "data"
        data.mkdir(exist_ok=True)
        lines = [
            f"listener {self.port} 127.0.0.1",
            "persistence true",
            f"persistence_location {data}/",
            f"autosave_interval {self.autosave_interval}",
            "max_queued_messages 0",  # no cap: the ledger's queue must not drop messages
            "max_inflight_messages 0",  # let each v5 client's Receive Maximum decide
            "persistent_client_expiration 1d",
            f"log_dest file {self.log_path}",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type subscribe",
            "connection_messages true",
        ]
        if self.users is not None:
            pw = self.workdir / "passwd"
            pw.unlink(missing_ok=True)
            for name, password in self.users.items():
                subprocess.run(
                    ["mosquitto_passwd", "-b", *([] if pw.exists() else ["-c"]), str(pw), name, password],
                    check=True,
                    capture_output=True,
                )
            lines += ["allow_anonymous false", f"password_file {pw}"]
        else:
            lines.append("allow_anonymous true")
        if self.acl is not None:
            acl_path = self.workdir / "acl"
            acl_path.write_text(self.acl)
            lines.append(f"acl_file {acl_path}")
        if os.geteuid() == 0:
            # Without this mosquitto drops to the user ``mosquitto``, which usually cannot reach a
            # root-owned private temporary directory (pytest's are 0700): persistence would then
            # silently fail to save and sessions would not survive a restart.
            lines.append("user root")
        if self.extra:
            lines.append(self.extra)
        self.conf_path.write_text("\n".join(lines) + "\n")

    # -- life cycle ---------------------------------------------------------------------------
    def start(self, timeout: float = 10.0) -> Mosquitto:
        """Start the broker and wait until it accepts TCP connections. Raises ``BrokerUnavailable``."""
        if self.proc and self.proc.poll() is None:
            return self
        if not Path(self.exe).exists():
            raise ConfigError("mosquitto is not installed (apt-get install mosquitto)")
        self.proc = subprocess.Popen(
            [self.exe, "-c", str(self.conf_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise BrokerUnavailable(f"mosquitto exited at start ({self.proc.returncode}): {err}{self.log()}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        self.kill()
        raise BrokerUnavailable(f"mosquitto did not listen on {self.port} within {timeout}s")

    def stop(self, timeout: float = 10.0) -> None:
        """Graceful stop (SIGTERM): the broker writes its persistence file before exiting."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._wait_port_free()

    def kill(self) -> None:
        """SIGKILL, like a power cut: only what was autosaved survives."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._wait_port_free()

    def restart(self) -> None:
        """Graceful stop then start on the same port and persistence directory."""
        self.stop()
        self.start()

    def _wait_port_free(self, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection((self.host, self.port), timeout=0.1):
                    pass
            except OSError:
                return
            time.sleep(0.05)

    @property
    def running(self) -> bool:
        return bool(self.proc and self.proc.poll() is None)

    def log(self) -> str:
        """The broker's log so far (for assertion messages)."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def __enter__(self) -> Mosquitto:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
