"""NATS users for the broker tier (issue 37): one user per gate, named after the gate, allowed exactly
the subjects its MQTT topics map to, and one ``office`` user; written by ``portgate central add-gate
--nats-users FILE`` as a NATS configuration include (``authorization { users = [...] }``), which each
node's ``nats.conf`` includes (``include "portgate-users.conf"``) and reloads on SIGHUP.

A gate ``g1`` of port ``santos`` may (NATS maps the MQTT topic ``a/b`` to the subject ``a.b``):

- publish ``portgate.v1.santos.gate.g1.events``, ``.status`` and ``.requests`` (``wire.topics``);
- subscribe ``portgate.v1.santos.gate.g1.cmd``, ``.receipt`` and the port's downlinks
  ``portgate.v1.santos.down`` / ``.down.>`` (the MQTT filter ``.../down/#`` is both).

Measured on nats-server 2.9.10: a publish outside these permissions over MQTT 3.1.1 is **acknowledged
(PUBACK) and dropped** ("Publish Violation" in the server's log): the gate cannot see it. Hence the
user is the gate id (``edge.config`` refuses ``username`` other than ``gate_id`` with ``protocol =
"3.1.1"``), and the topics derive from the gate id: a gate cannot publish outside them. A wrong
password is a refused CONNACK ("Not authorized"): the gate logs ``mqtt.connect_refused``, keeps its
events journaled and retries (``wire.gate_link``).

Passwords: 32 random bytes (URL-safe text) per user, written 0600 to ``<keys_dir>/<user>.nats-password``
to copy to the gate (``[mqtt] password_file``) or the office (``[nats] password_file``); the include
holds only their bcrypt hashes (NATS accepts ``$2a$``/``$2b$`` hashes as ``password``). The users
and their hashes are kept in ``<keys_dir>/nats-users.json`` (0600), the include is rewritten from it.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from pathlib import Path

import bcrypt
import structlog

from central.ingest.gate_port_file import case_twin, file_ports
from portgate.config import write_secret
from wire import topics

log = structlog.get_logger(__name__)

OFFICE_USER = "office"
STATE_FILE = "nats-users.json"
BCRYPT_ROUNDS = 11  # NATS's own tooling (nats server passwd) uses cost 11


def subject(topic: str) -> str:
    """The NATS subject of an MQTT topic (``a/b/c`` -> ``a.b.c``; ids hold no ``.`` under 3.1.1)."""
    return topic.replace("/", ".")


def gate_permissions(port: str, gate_id: str) -> dict:
    """The NATS permissions of gate ``gate_id`` of ``port`` (the module docstring)."""
    down = subject(f"{topics.ROOT}/{port}/down")
    return {
        "publish": {"allow": [subject(topics.gate_events(port, gate_id)), subject(topics.gate_status(port, gate_id)),
                              subject(topics.gate_requests(port, gate_id))]},
        "subscribe": {"allow": [subject(topics.gate_cmd(port, gate_id)), subject(topics.gate_receipt(port, gate_id)),
                                down, f"{down}.>"]},
    }


def password_path(keys_dir: str | Path, user: str) -> Path:
    return Path(keys_dir) / f"{topics.check_id(user, 'user')}.nats-password"


def _state(keys_dir: Path) -> dict:
    path = keys_dir / STATE_FILE
    if not path.exists():
        return {"port": None, "users": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def registered_ports(keys_dir: str | Path) -> dict[str, str]:
    """gate id -> port of every gate given a NATS user (``add-gate --nats-users ... --port``), read
    from ``<keys_dir>/nats-users.json``, or a port alone (``add-gate --port``,
    ``central.ingest.gate_port_file``): the port of a gate that has sent no event yet
    (``central.web.ports.port_of``). ``{}`` when there is no such file or it cannot be read (a
    missing or unreadable registry only leaves those gates to the home port; logged)."""
    try:
        found = file_ports(keys_dir)  # add-gate --port without --nats-users
    except (OSError, ValueError) as exc:
        log.warning("gate_ports.unreadable", keys_dir=str(keys_dir), error=str(exc))
        found = {}
    try:
        state = _state(Path(keys_dir))
        port, users = state["port"], state["users"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("nats_users.unreadable", keys_dir=str(keys_dir), error=str(exc))
        return found
    return found | ({u: port for u in users if u != OFFICE_USER} if isinstance(port, str) else {})


def registered_in(keys_dirs: Iterable[str | Path]) -> dict[str, str]:
    """gate id -> port of the gates registered in any of ``keys_dirs`` (``registered_ports`` of
    each, later dirs winning for a gate id named twice): every served port's registrations, from
    ``CentralConfig.registry_dirs`` (``portgate office serve``, ``portgate rotation --config``)."""
    found: dict[str, str] = {}
    for keys_dir in keys_dirs:
        found.update(registered_ports(keys_dir))
    return found


def registrations(keys_dir: str | Path) -> list[tuple[str, str]]:
    """``(gate id, port)`` of each registration in ``keys_dir``: its ``gate-ports.json``'s
    (``add-gate --port``) and its ``nats-users.json``'s users (``--nats-users``), a gate in both
    listed twice (unlike ``registered_ports``, which keeps one). Raises ``OSError``/``ValueError``
    for a file that cannot be read or is not what ``add-gate`` writes (the caller says so)."""
    found = list(file_ports(keys_dir).items())
    try:
        state = _state(Path(keys_dir))
        port, users = state["port"], state["users"]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{Path(keys_dir) / STATE_FILE} is not a NATS users file of add-gate: {exc}") from None
    if isinstance(port, str):
        found += [(u, port) for u in users if u != OFFICE_USER]
    return found


def users_port(keys_dir: str | Path) -> str | None:
    """The port whose NATS users ``<keys_dir>/nats-users.json`` holds (one port per file); None
    when there is none yet. ``OSError``/``ValueError`` as ``registrations``."""
    try:
        return _state(Path(keys_dir))["port"]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{Path(keys_dir) / STATE_FILE} is not a NATS users file of add-gate: {exc}") from None


def port_clashes(keys_dirs: Iterable[str | Path]) -> dict[str, dict[str, list[str]]]:
    """The gate ids registered at more than one port across ``keys_dirs`` (every served port's,
    ``CentralConfig.registry_dirs``): gate id -> port -> the keys dirs saying so. Gate ids are
    unique across ports (docs/operations.md "Many ports, one ledger"): each is an error for
    ``portgate central check-config``. ``OSError``/``ValueError`` as ``registrations``."""
    seen: dict[str, dict[str, list[str]]] = {}
    for keys_dir in dict.fromkeys(str(d) for d in keys_dirs):
        for gate_id, port in registrations(keys_dir):
            dirs = seen.setdefault(gate_id, {}).setdefault(port, [])
            if keys_dir not in dirs:
                dirs.append(keys_dir)
    return {g: ports for g, ports in seen.items() if len(ports) > 1}


def case_clashes(keys_dirs: Iterable[str | Path]) -> list[tuple[tuple[str, str, str], tuple[str, str, str]]]:
    """The registrations across ``keys_dirs`` whose gate ids differ only by letter case (``G-Aurora``
    beside ``g-aurora``) at different ports: pairs ``((gate id, port, keys dir), (gate id, port, keys
    dir))``, the first one seen first. A person reads them as one gate id, as ``ports`` refuses
    ``Santos`` beside ``santos`` (``CentralConfig``): each is an error for ``portgate central
    check-config``, and ``add-gate`` refuses to make one. ``OSError``/``ValueError`` as ``registrations``."""
    first: dict[str, tuple[str, str, str]] = {}
    found: list[tuple[tuple[str, str, str], tuple[str, str, str]]] = []
    for keys_dir in dict.fromkeys(str(d) for d in keys_dirs):
        for gate_id, port in registrations(keys_dir):
            seen = first.setdefault(gate_id.casefold(), (gate_id, port, keys_dir))
            if seen[0] != gate_id and seen[1] != port:
                found.append((seen, (gate_id, port, keys_dir)))
    return found


def _new_password(keys_dir: Path, user: str) -> str:
    """A new random password written 0600 for ``user``; returns its bcrypt hash."""
    password = secrets.token_urlsafe(32)
    write_secret(password_path(keys_dir, user), password.encode() + b"\n")
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(BCRYPT_ROUNDS)).decode()


def render(state: dict) -> str:
    """The include file's text: ``authorization { users = [...] }`` (JSON values are NATS config)."""
    port = state["port"]
    lines = ["# written by `portgate central add-gate --nats-users`: do not edit (regenerated)",
             "authorization {", "  users = ["]
    for user, hashed in sorted(state["users"].items()):
        entry = {"user": user, "password": hashed}
        if user != OFFICE_USER:
            entry["permissions"] = gate_permissions(port, user)
        lines.append("    " + json.dumps(entry))
    lines += ["  ]", "}", ""]
    return "\n".join(lines)


def add_gate_user(keys_dir: str | Path, include: str | Path, port: str, gate_id: str, *,
                  rotate: bool = False) -> tuple[Path, bool]:
    """Give gate ``gate_id`` of ``port`` a NATS user (and the office one, if missing), rewrite the
    include file ``include``; return the gate's password file and whether it was made now (an
    existing user keeps its password unless ``rotate``).

    Raises ``BadInput`` (``wire.topics.check_id``) for a bad id, ``ValueError`` if the state file
    belongs to another port (one include per port: several ports are several accounts' files) or
    already holds the gate id in other letter case (``gate_port_file.case_twin``)."""
    keys_dir = Path(keys_dir)
    topics.check_id(port, "port")
    topics.check_id(gate_id, "gate_id")
    if gate_id == OFFICE_USER:
        raise ValueError(f"gate id {OFFICE_USER!r} is the office's NATS user: choose another gate id")
    if "." in port or "." in gate_id:
        raise ValueError("a '.' in a port or gate id splits a NATS subject level: not allowed on the NATS tier")
    state = _state(keys_dir)
    if state["port"] not in (None, port):
        raise ValueError(f"{keys_dir / STATE_FILE} holds the users of port {state['port']}, not {port}")
    if (twin := case_twin(gate_id, [u for u in state["users"] if u != OFFICE_USER])) is not None:
        raise ValueError(f"gate id {gate_id} differs only in letter case from {twin}, a NATS user of port {port} "
                         f"in {keys_dir / STATE_FILE}: use {twin} or choose another gate id")
    state["port"] = port
    if OFFICE_USER not in state["users"]:
        state["users"][OFFICE_USER] = _new_password(keys_dir, OFFICE_USER)
    made = gate_id not in state["users"] or rotate
    if made:
        state["users"][gate_id] = _new_password(keys_dir, gate_id)
    write_secret(keys_dir / STATE_FILE, json.dumps(state, indent=1).encode())
    Path(include).parent.mkdir(parents=True, exist_ok=True)
    Path(include).write_text(render(state), encoding="utf-8")
    return password_path(keys_dir, gate_id), made
