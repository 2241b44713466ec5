"""A gate's port registered by ``portgate central add-gate --port PORT`` (issue 37 item 4: several
ports on one ledger), with or without a NATS user: ``<keys_dir>/gate-ports.json``, gate id -> port.
It is the port of a gate that has sent no event yet (``central.ingest.nats_users.registered_ports``,
read by the office pages, the rotation and each port's escala publisher); a gate of an office of
several ports with neither events nor a registration has no port ("sem porto registrado").
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from wire import topics

PORTS_FILE = "gate-ports.json"


def file_ports(keys_dir: str | Path) -> dict[str, str]:
    """gate id -> port of ``<keys_dir>/gate-ports.json``; ``{}`` when there is none. Raises
    ``OSError``/``ValueError`` for a file that cannot be read or is not such a JSON object (the
    caller logs it and leaves those gates without a port)."""
    path = Path(keys_dir) / PORTS_FILE
    if not path.exists():
        return {}
    found = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(found, dict) or not all(isinstance(v, str) for v in found.values()):
        raise ValueError(f"{path} is not an object of gate id -> port")
    return found


def case_twin(gate_id: str, known: Iterable[str]) -> str | None:
    """The gate id of ``known`` (the first in sorted order) that is ``gate_id`` in other letter case
    (``G1`` for ``g1``), None if there is none. Topics tell them apart, people do not: at one port
    such ids are refused (``portgate central add-gate``, ``register_port``, ``central.ingest.keys.add_gate``,
    ``central.ingest.nats_users.add_gate_user``)."""
    folded = gate_id.casefold()
    return next((g for g in sorted(known) if g != gate_id and g.casefold() == folded), None)


#: the office's own key files in a keys dir (``central.web.key_files``' defaults), by the name a
#: gate id would give them: never a gate's key (a gate ``payslip`` would be checked against the
#: payslip key, and ``add-gate --rotate`` would replace it; ``central.ingest.keys.gate_key_id``)
OFFICE_KEYS = {"payslip": "payslip key", "web-session": "session key"}


def keyed_gates(keys_dir: str | Path) -> set[str]:
    """The gate ids with a key file in ``keys_dir`` (``<gate>.key``, ``<gate>.pub``; not the office's
    ``OFFICE_KEYS``): the gates of the port that keys dir serves. Empty for a directory that is not there."""
    path = Path(keys_dir)
    if not path.is_dir():
        return set()
    return {p.stem for p in path.iterdir()
            if p.suffix in (".key", ".pub") and not p.name.startswith(".") and p.stem not in OFFICE_KEYS}


def register_port(keys_dir: str | Path, gate_id: str, port: str) -> None:
    """Record ``gate_id``'s ``port`` in ``<keys_dir>/gate-ports.json`` (written whole, then renamed
    over the old file: a reader never sees half of it). ``BadInput`` (``wire.topics.check_id``) for
    a bad id; ``ValueError`` for an id differing only in letter case from a gate registered there at
    the same port (``case_twin``); ``OSError``/``ValueError`` as ``file_ports`` and for a directory
    that cannot be written."""
    found = file_ports(keys_dir)
    twin = case_twin(gate_id, [g for g, p in found.items() if p == port])
    if twin is not None:
        raise ValueError(f"gate id {gate_id} differs only in letter case from {twin}, registered at port {port} "
                         f"in {Path(keys_dir) / PORTS_FILE}: use {twin} or choose another gate id")
    found[topics.check_id(gate_id, "--gate-id")] = topics.check_id(port, "--port")
    path = Path(keys_dir) / PORTS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{PORTS_FILE}.tmp")
    tmp.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
