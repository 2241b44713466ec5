"""Which Debian package ``portgate demo --cluster`` lacks: the NATS server, etcd, Patroni and the
PostgreSQL server binaries are looked up before anything starts, so a machine without them gets
one line naming the package to install (``scripts/setup.sh`` installs them all when root).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable

from portgate.errors import StoreError

#: (what is looked for, the Debian package that provides it), in the order they are checked
PACKAGES = (("nats-server", "nats-server"), ("etcd", "etcd-server"), ("patroni", "patroni"),
            ("postgres", "postgresql"))


def missing_package(which: Callable[[str], str | None] = shutil.which) -> tuple[str, str] | None:
    """``(program, Debian package)`` of the first program of ``PACKAGES`` not installed, or None
    when all are. ``which`` finds a program on ``PATH`` (``shutil.which``); the NATS server is also
    looked for in ``/usr/sbin`` (``app.cluster.nats.find_exe``) and PostgreSQL in
    ``/usr/lib/postgresql/*/bin`` (``app.cluster.pg.find_bindir``), where Debian puts them."""
    from app.cluster.nats import find_exe
    from app.cluster.pg import find_bindir

    for program, package in PACKAGES:
        if program == "nats-server":
            found = find_exe(which)
        elif program == "postgres":
            try:
                found = str(find_bindir())
            except StoreError:
                found = None
        else:
            found = which(program)
        if not found:
            return program, package
    return None
