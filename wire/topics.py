"""The MQTT topic tree, one function per topic (DESIGN.md, wire contract).

Everything lives under ``portgate/v1/{port}/``::

    portgate/v1/{port}/gate/{gate_id}/events      gate -> office   QoS 1   signed Event
    portgate/v1/{port}/gate/{gate_id}/status      gate -> all      QoS 1   signed GateStatus, retained (birth/LWT)
    portgate/v1/{port}/gate/{gate_id}/cmd         office -> gate   QoS 1   Command (replay a range)
    portgate/v1/{port}/gate/{gate_id}/requests    gate -> office   QoS 1   Command (snapshot request)
    portgate/v1/{port}/down/{kind}/snapshot       office -> gates  QoS 1   *Snapshot, retained
    portgate/v1/{port}/down/{kind}/delta          office -> gates  QoS 1   *Delta
    portgate/v1/{port}/down/photos/file           office -> gates  QoS 1   PhotoFile (one photo's bytes)

``kind`` is one of ``DOWNLINK_KINDS``. Port and gate ids are ``ID_PATTERN``: 1-64 characters, ASCII
letters and digits first, then letters, digits, ``_ . -`` (no MQTT special character ``/ + # $``, no
space, no path). ``check_id`` applies the rule (raises ``BadInput``); typed configuration calls it
when loaded (``edge.config.GateConfig``), so a bad id never reaches a running service.
"""

from __future__ import annotations

import re
from typing import Literal

from portgate.errors import BadInput

ROOT = "portgate/v1"
DOWNLINK_KINDS: tuple[str, ...] = ("roster", "cards", "escala", "presence", "photos")
DownKind = Literal["roster", "cards", "escala", "presence", "photos"]
DOWNLINK_FORMS: tuple[str, ...] = ("snapshot", "delta", "file")  # "file": photos only
SHARE_GROUP = "ledger"

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z"  # \Z: "$" would accept a trailing newline
ID_RULE = "1-64 of A-Z a-z 0-9 _ . -, starting with a letter or digit"
_ID = re.compile(ID_PATTERN)


def check_id(value: str, what: str = "id") -> str:
    """Return ``value`` if it matches ``ID_PATTERN`` (usable as one topic level and as a file name);
    raise ``BadInput`` naming ``what`` otherwise."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise BadInput(f"{what} {value!r} is not a valid id ({ID_RULE})")
    return value


def gate_events(port: str, gate_id: str) -> str:
    """Uplink of signed events from one gate (QoS 1, not retained)."""
    return f"{ROOT}/{check_id(port, 'port')}/gate/{check_id(gate_id, 'gate_id')}/events"


def gate_status(port: str, gate_id: str) -> str:
    """Retained status of one gate: birth on connect, Last Will / graceful "offline"."""
    return f"{ROOT}/{check_id(port, 'port')}/gate/{check_id(gate_id, 'gate_id')}/status"


def gate_cmd(port: str, gate_id: str) -> str:
    """Commands from the office to one gate (replay a sequence range)."""
    return f"{ROOT}/{check_id(port, 'port')}/gate/{check_id(gate_id, 'gate_id')}/cmd"


def gate_receipt(port: str, gate_id: str) -> str:
    """The office's newest signed receipt of one gate's chain (retained, QoS 1; docs/evidence.md)."""
    return f"{ROOT}/{check_id(port, 'port')}/gate/{check_id(gate_id, 'gate_id')}/receipt"


def gate_requests(port: str, gate_id: str) -> str:
    """Requests from one gate to the office (a snapshot when a delta does not follow its version).
    Under the gate's own topic, so the broker's ACL (``%u``) binds the gate id to its credentials:
    the office answers only a request whose ``gate_id`` is the topic's."""
    return f"{ROOT}/{check_id(port, 'port')}/gate/{check_id(gate_id, 'gate_id')}/requests"


def all_gate_requests(port: str) -> str:
    """Filter matching the requests topic of every gate of ``port``."""
    return f"{ROOT}/{check_id(port, 'port')}/gate/+/requests"


def downlink(port: str, kind: str, form: Literal["snapshot", "delta", "file"]) -> str:
    """Downlink of ``kind`` (roster, cards, escala, presence, photos) as a retained snapshot, a
    delta, or (photos only) one photo file."""
    if kind not in DOWNLINK_KINDS:
        raise BadInput(f"downlink kind {kind!r} is not one of {'|'.join(DOWNLINK_KINDS)}")
    if form not in ("snapshot", "delta") and not (form == "file" and kind == "photos"):
        raise BadInput(f"downlink form {form!r} is not snapshot|delta (or file, for photos)")
    return f"{ROOT}/{check_id(port, 'port')}/down/{kind}/{form}"


def downlink_filter(port: str) -> str:
    """Subscription filter for every downlink of a port (what a gate subscribes to)."""
    return f"{ROOT}/{check_id(port, 'port')}/down/#"


def all_gate_events(port: str) -> str:
    """Filter matching the event uplink of every gate of ``port``."""
    return f"{ROOT}/{check_id(port, 'port')}/gate/+/events"


def shared_gate_events(port: str, group: str = SHARE_GROUP) -> str:
    """Shared subscription (``$share/ledger/...``): the broker spreads events over ingest workers."""
    return f"$share/{check_id(group, 'group')}/{all_gate_events(port)}"


def all_gate_status(port: str) -> str:
    """Filter matching the status topic of every gate of ``port``."""
    return f"{ROOT}/{check_id(port, 'port')}/gate/+/status"


def parse_gate_topic(topic: str) -> tuple[str, str, str]:
    """Split ``portgate/v1/{port}/gate/{gate_id}/{leaf}`` into (port, gate_id, leaf).

    Raises ``BadInput`` (where=topic) if the topic is not a gate topic of this tree.
    """
    parts = topic.split("/")
    if len(parts) != 6 or f"{parts[0]}/{parts[1]}" != ROOT or parts[3] != "gate":
        raise BadInput("not a portgate gate topic", where=topic)
    return parts[2], parts[4], parts[5]


def parse_downlink_topic(topic: str) -> tuple[str, str, str]:
    """Split ``portgate/v1/{port}/down/{kind}/{form}`` into (port, kind, form); ``BadInput`` if not."""
    parts = topic.split("/")
    if (
        len(parts) != 6
        or f"{parts[0]}/{parts[1]}" != ROOT
        or parts[3] != "down"
        or parts[4] not in DOWNLINK_KINDS
        or parts[5] not in DOWNLINK_FORMS
        or (parts[5] == "file" and parts[4] != "photos")
    ):
        raise BadInput("not a portgate downlink topic", where=topic)
    return parts[2], parts[4], parts[5]
