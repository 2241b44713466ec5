"""PostgreSQL helpers shared by the throw-away servers (``testkit.postgres``) and the Patroni ledger
(``app.cluster.patroni``): where the server binaries are, a free loopback port, and which user runs
the server when we are root (PostgreSQL refuses root).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
from pathlib import Path

from portgate.errors import StoreError

DEFAULT_DB = "portgate"


def find_bindir() -> Path:
    """The newest ``/usr/lib/postgresql/*/bin`` that has ``initdb`` and ``pg_ctl``."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
    )
    for bindir in reversed(candidates):
        if (Path(bindir) / "initdb").exists() and (Path(bindir) / "pg_ctl").exists():
            return Path(bindir)
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    raise StoreError("no PostgreSQL server binaries found (looked in /usr/lib/postgresql/*/bin)")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run_as_user() -> str | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise StoreError("running as root and no unprivileged user (postgres, nobody) to run PostgreSQL")
