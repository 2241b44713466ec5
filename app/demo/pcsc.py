"""Start and stop a private ``pcscd`` with vpcd virtual readers, for tests, benchmarks and the demo.

Isolation. pcsc-lite 1.9.9 (Debian 12) ignores ``PCSCLITE_CSOCK_NAME`` in the *daemon* (the socket
is always ``/run/pcscd/pcscd.comm``) but honours it in the *client library*. So the daemon runs in a
private mount namespace (``unshare -m``) where a private directory is bind-mounted over
``/run/pcscd``; clients reach the same socket through its real path, given to them in
``PCSCLITE_CSOCK_NAME`` (read once per process by libpcsclite: set it before the first PC/SC call).
The readers come from a private reader.conf directory (``pcscd -c DIR``), so the vpcd ports are free
ports chosen here, not the system's 35963. When ``unshare`` is not permitted the daemon falls back
to the system socket path (``isolated`` is then False) and must not clash with a system pcscd.

The socket's path must fit a Unix socket address (``sun_path``: 107 bytes and a NUL): libpcsclite
cuts a longer ``PCSCLITE_CSOCK_NAME`` and its clients then find no pcscd (``SCARD_E_NO_SERVICE``)
while the daemon, bound under ``/run/pcscd`` in its namespace, runs and reads the cards. A workdir
too deep for it (``portgate demo --cluster`` under pytest's ``/tmp/pytest-of-root/pytest-1000``
and later: ``.../run/paranagua/pr-nordic/pcscd/run/pcscd.comm`` is 108 bytes) gets its socket
directory in a short temporary directory instead (``portgate-pcscd-*``), removed by ``stop()``.

Each vpcd entry gives two readers (slots), ``"<name> NN 00"`` on ``port`` and ``"<name> NN 01"`` on
``port + 1`` (``NN`` is the reader number pcscd assigns). ``rescan()`` makes pcscd re-read the
reader.conf directory (SIGUSR1): removing an entry and rescanning unplugs its readers for real.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SYSTEM_SOCKET = "/run/pcscd/pcscd.comm"
SOCKET_NAME = "pcscd.comm"
#: the longest Unix socket path (``sun_path`` is 108 bytes with its terminating NUL)
MAX_SOCKET_PATH = 107
VPCD_DRIVER = "/usr/lib/pcsc/drivers/serial/libifdvpcd.so"


@dataclasses.dataclass(frozen=True)
class VpcdEntry:
    """One reader.conf entry for vpcd: ``name`` (FRIENDLYNAME) and the TCP port of slot 0."""

    name: str
    port: int

    def conf(self) -> str:
        return (
            f'FRIENDLYNAME "{self.name}"\nDEVICENAME   /dev/null:{self.port}\n'
            f"LIBPATH      {VPCD_DRIVER}\nCHANNELID    {self.port}\n"
        )


def free_port_pair() -> int:
    """A TCP port ``p`` such that ``p`` and ``p + 1`` are free on this machine (vpcd slot 0 and 1)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("0.0.0.0", 0))
            port = s.getsockname()[1]
        if port >= 65535:
            continue
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("0.0.0.0", port))
                b.bind(("0.0.0.0", port + 1))
        except OSError:
            continue
        return port
    raise RuntimeError("no free pair of TCP ports")


def _can_unshare() -> bool:
    if shutil.which("unshare") is None:
        return False
    try:
        return subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


class PcscDaemon:
    """A private ``pcscd -f -i`` with vpcd readers. Use as a context manager or start()/stop().

    ``workdir``: where the config, socket and log go (a temporary directory if None).
    ``entries``: the vpcd reader.conf entries (default: one entry "Virtual PCD" on a free port).
    """

    def __init__(self, workdir: str | Path | None = None, entries: list[VpcdEntry] | None = None):
        self._tmp = None
        if workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="portgate-pcscd-")
            workdir = self._tmp.name
        self.workdir = Path(workdir)
        self.confdir = self.workdir / "reader.conf.d"
        self.rundir = self.workdir / "run"
        self._short_rundir = False
        self.log_path = self.workdir / "pcscd.log"
        self.confdir.mkdir(parents=True, exist_ok=True)
        self.isolated = _can_unshare()
        if self.isolated and len(os.fsencode(self.rundir.absolute() / SOCKET_NAME)) > MAX_SOCKET_PATH:
            self.rundir = Path(tempfile.mkdtemp(prefix="portgate-pcscd-"))
            self._short_rundir = True
        self.rundir = self.rundir.absolute()
        self.rundir.mkdir(parents=True, exist_ok=True)
        self.socket_path = str(self.rundir / SOCKET_NAME) if self.isolated else SYSTEM_SOCKET
        if len(os.fsencode(self.socket_path)) > MAX_SOCKET_PATH:
            raise RuntimeError(f"pcscd socket path over {MAX_SOCKET_PATH} bytes (set TMPDIR shorter): {self.socket_path}")
        self.entries: list[VpcdEntry] = []
        self.set_entries(entries if entries is not None else [VpcdEntry("Virtual PCD", free_port_pair())])
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def port(self) -> int:
        """Port of slot 0 of the first entry (``VirtualCard(port=...)``)."""
        return self.entries[0].port

    def client_env(self) -> dict[str, str]:
        """Environment for PC/SC clients of this daemon (``PCSCLITE_CSOCK_NAME``)."""
        return {"PCSCLITE_CSOCK_NAME": self.socket_path}

    def set_entries(self, entries: list[VpcdEntry]) -> None:
        """Rewrite the private reader.conf directory (takes effect on start or ``rescan()``)."""
        for old in self.confdir.iterdir():
            old.unlink()
        for i, entry in enumerate(entries):
            (self.confdir / f"vpcd-{i}").write_text(entry.conf())
        self.entries = list(entries)

    def start(self, timeout: float = 10.0) -> None:
        """Start the daemon and wait until it says it is ready. Raises RuntimeError if it fails."""
        if self._proc is not None and self._proc.poll() is None:
            return
        self.rundir.mkdir(parents=True, exist_ok=True)  # a short one is removed by stop()
        for stale in self.rundir.iterdir():
            stale.unlink()
        pcscd = f"exec pcscd -f -i -c {self.confdir}"
        if self.isolated:
            cmd = [
                "unshare", "-m", "--propagation", "private", "sh", "-c",
                f"mkdir -p /run/pcscd && mount --bind {self.rundir} /run/pcscd && {pcscd}",
            ]
        else:
            cmd = ["sh", "-c", pcscd]
        log = open(self.log_path, "ab")
        offset = log.tell()
        self._proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log_path.read_bytes()[offset:]
            if b"daemon ready" in text and os.path.exists(self.socket_path):
                return
            if self._proc.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"pcscd did not start; see {self.log_path}")

    def stop(self) -> None:
        """Stop the daemon (SIGTERM, then SIGKILL) and wait for it; a short socket directory made
        in the temporary directory goes too (``start()`` makes it again)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if self._short_rundir:
            shutil.rmtree(self.rundir, ignore_errors=True)

    def restart(self) -> None:
        self.stop()
        self.start()

    def rescan(self) -> None:
        """Ask pcscd to re-read the reader.conf directory (readers added/removed: hotplug)."""
        if self._proc is None:
            raise RuntimeError("pcscd is not running")
        self._proc.send_signal(signal.SIGUSR1)

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def __enter__(self) -> PcscDaemon:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self._tmp is not None:
            self._tmp.cleanup()
