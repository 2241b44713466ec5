"""The cluster demo's office by port (issue 37 item 4; ``app.demo.cluster``): the web
application's central.toml naming every port of the day (``web_config``), its users by port scope
(``add_port_users``), and each gate registered with its own port (``register_gates``), as
``portgate central add-gate --nats-users FILE --port PORT`` registers it, so a port's office user
sees his port's gates on the live page from the start, before their first event
(``central.web.ports.port_of``: a gate with no event takes its registration's port).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

USERS_INCLUDE = "nats-users.conf"  # the include ``add-gate --nats-users`` writes, in each port's keys dir


def register_gates(keys_dir: Path, port: str, gate_ids: Iterable[str]) -> None:
    """Give each gate of ``gate_ids`` its NATS user of ``port`` in ``keys_dir`` (one port's keys dir:
    ``<keys_dir>/nats-users.json``, the include ``USERS_INCLUDE``), with the function
    ``portgate central add-gate --nats-users ... --port`` runs; an existing user keeps its password.
    ``ValueError`` if ``keys_dir`` holds another port's users; ``BadInput`` for a bad id."""
    from central.ingest.nats_users import add_gate_user

    keys_dir.mkdir(parents=True, exist_ok=True)
    for gate_id in gate_ids:
        add_gate_user(keys_dir, keys_dir / USERS_INCLUDE, port, gate_id)


def web_config(central_toml: Path, ports: tuple[str, ...],
               port_keys_dirs: dict[str, Path] | None = None) -> Path:
    """Write ``office-web.toml`` beside ``central_toml``: the same settings with ``ports`` (the
    home port, ``port``, first) and ``port_keys_dirs`` (the other ports' keys dirs, whose gate
    registrations the web application reads, as ``portgate office serve`` does); returns its path."""
    lines = central_toml.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("port = ")) + 1
    lines.insert(at, "ports = [" + ", ".join(f'"{p}"' for p in ports) + "]\n")
    if port_keys_dirs:  # TOML basic strings and keys: JSON's quoting
        lines.insert(at + 1, "port_keys_dirs = { " + ", ".join(
            f"{json.dumps(p)} = {json.dumps(str(d))}" for p, d in port_keys_dirs.items()) + " }\n")
    path = central_toml.with_name("office-web.toml")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def add_port_users(url: str, ports: tuple[str, ...], *, actor: str = "demo") -> tuple[str, ...]:
    """The cluster demo's office users by port scope (``central.web.ports``): the demo's ``demo``
    and ``escritorio`` see every port (the whole tour: registry, pay and cases are all-ports pages),
    ``escritorio-<port>`` (role office) sees its port only, ``auditor`` every port. Returns the
    logins added, the auditor last. ``BadInput``/``StoreError`` as ``add_user``."""
    from sqlalchemy.orm import Session

    from app.demo.web import DEMO_PASSWORD, DEMO_USER, OFFICE_USER
    from central.db import make_engine
    from central.web.ports import ALL
    from central.web.users import add_user, set_ports

    logins = (*(f"{OFFICE_USER}-{port}" for port in ports), "auditor")
    engine = make_engine(url)
    try:
        with Session(engine) as s, s.begin():
            for login in (DEMO_USER, OFFICE_USER):
                set_ports(s, login, ALL, actor=actor)
            for port, login in zip(ports, logins, strict=False):
                add_user(s, login, role="office", password=DEMO_PASSWORD, name=f"Escritório {port}", actor=actor,
                         ports=port)
            add_user(s, logins[-1], role="auditor", password=DEMO_PASSWORD, name="Auditor", actor=actor, ports=ALL)
    finally:
        engine.dispose()
    return logins
