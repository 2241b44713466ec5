"""Generate the JSON Schemas (``wire/schemas/*.json``) and the AsyncAPI 3 document
(``wire/asyncapi.yaml``, JSON syntax, which is valid YAML) from the msgspec message types.

``render()`` returns {relative path: text}; ``portgate wire generate`` writes them and a test checks
the committed files equal ``render()``. What msgspec writes is adjusted for tools nobody here wrote
(tests/wire/test_contract_tools.py runs them): each schema names its dialect (``$schema``, JSON
Schema 2020-12) and ``$id``; msgspec's OpenAPI-style ``discriminator`` object is left out (it is
not JSON Schema, ajv strict refuses it, and AsyncAPI wants a string; the ``type`` member's
``enum`` already tells the variants apart); every field gets its ``description`` from
``wire.fields`` (``ValueError`` if one has none).
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from wire import SCHEMA_VERSION
from wire import downlink as dl
from wire.events import Event
from wire.fields import describe
from wire.signed_downlink import SignedDownlink

HERE = Path(__file__).parent
DIALECT = "https://json-schema.org/draft/2020-12/schema"
ID_BASE = f"https://portgate.invalid/wire/{SCHEMA_VERSION}/schemas/"  # names, not addresses (.invalid)

MESSAGES: dict[str, object] = {
    "Event": Event,
    "GateStatus": dl.GateStatus,
    "Command": dl.Command,
    **{cls.__name__: cls for cls in dl.DOWNLINK_TYPES.values()},
}

GATE, OFFICE, GATES = "a gate", "the office", "every gate of the port"
SEALED = (" On the wire it is the body of a SignedDownlink envelope signed with the office key (issue 36; "
          "docs/mqtt.md).")
CHANNELS = [
    # name, address, message, description, sender, receiver, retained
    ("gateEvents", "portgate/v1/{port}/gate/{gate_id}/events", "Event",
     "Signed gate events (the journal is the outbox; at least once, deduplicated by event_id).", GATE, OFFICE, False),
    ("gateStatus", "portgate/v1/{port}/gate/{gate_id}/status", "GateStatus",
     "Signed gate status: birth on connect, progress, Last Will and graceful offline.", GATE, OFFICE, True),
    ("gateCmd", "portgate/v1/{port}/gate/{gate_id}/cmd", ("ReplayCommand", "EnrolCommand"),
     "Office -> gate: republish a sequence range (a gap or a tail); start or cancel enrol mode (the next "
     "unknown card read is offered to the office's clerk, issue 34)." + SEALED, OFFICE, GATE, False),
    ("gateRequests", "portgate/v1/{port}/gate/{gate_id}/requests", "SnapshotRequest",
     "Gate -> office: a snapshot, when a delta does not follow the gate's copy. The office answers only a "
     "request whose gate_id is the topic's (the ACL binds the topic to the gate's username), and a kind at "
     "most once per [ingest] snapshot_request_min_s.", GATE, OFFICE, False),
] + [
    (f"{kind}{form.title()}", f"portgate/v1/{{port}}/down/{kind}/{form}", cls.__name__,
     f"Downlink: {kind} {form} (office -> gates){'; retained, so a gate gets the newest at once' if form == 'snapshot' else ''}."
     + SEALED,
     OFFICE, GATES, form == "snapshot")
    for (kind, form), cls in dl.DOWNLINK_TYPES.items()
]
PARAMETERS = {"port": {"description": "Port id (one topic level: no / + # $ or spaces)."},
              "gate_id": {"description": "Gate id, also the gate's MQTT username (one topic level)."}}


def _dump(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _drop_discriminators(node):
    """``node`` without msgspec's OpenAPI-style ``discriminator`` objects, at any depth."""
    if isinstance(node, dict):
        return {k: _drop_discriminators(v) for k, v in node.items() if k != "discriminator"}
    if isinstance(node, list):
        return [_drop_discriminators(v) for v in node]
    return node


def _adjust(defs: dict) -> dict:
    """Drop msgspec's ``discriminator`` objects and describe every property of every definition."""
    out = _drop_discriminators(defs)
    for type_name, spec in out.items():
        for field, prop in spec.get("properties", {}).items():
            text = describe(type_name, field)
            if text is None:
                raise ValueError(f"{type_name}.{field} has no description in wire/fields.py")
            prop["description"] = text
    return out


def json_schema(name: str, kind) -> dict:
    """The standalone JSON Schema (2020-12) of message ``name``."""
    schema = _drop_discriminators(msgspec.json.schema(kind))
    schema["$defs"] = _adjust(schema.get("$defs", {}))
    return {"$schema": DIALECT, "$id": f"{ID_BASE}{name}.json", **schema}


SERVERS = {
    "production": {
        "host": "broker.example:8883",
        "protocol": "secure-mqtt",
        "protocolVersion": "5",
        "description": "The port's mosquitto broker over TLS (config/mosquitto/); one broker per port.",
        "security": [{"$ref": "#/components/securitySchemes/userPassword"}],
        "bindings": {"mqtt": {"cleanSession": False, "keepAlive": 60,
                              "sessionExpiryInterval": 604800, "bindingVersion": "0.2.0"}},
    },
}
SECURITY_SCHEMES = {"userPassword": {
    "type": "userPassword",
    "description": "Per-client password (mosquitto password file); a gate's username is its gate id.",
}}


def asyncapi() -> dict:
    """The AsyncAPI 3.0 document: servers, channels, a send and a receive operation per channel
    (with MQTT bindings: QoS 1, retained where it is), messages and their payload schemas."""
    # the envelope every office -> gate message travels in (wire.signed_downlink) is described beside them
    _, components = msgspec.json.schema_components([*MESSAGES.values(), SignedDownlink],
                                                   ref_template="#/components/schemas/{name}")
    components = _adjust(components)
    channels, operations, messages = {}, {}, {}
    for name, address, carried, description, sender, receiver, retained in CHANNELS:
        carried = (carried,) if isinstance(carried, str) else carried  # a channel may carry several
        channels[name] = _channel(address, carried, description)
        operations.update(_operations(name, carried, sender, receiver, retained))
        messages.update({m: _message(m, components) for m in carried})
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "portgate wire contract",
            "version": f"{SCHEMA_VERSION}.0.0",
            "description": "MQTT v5 topics of portgate gates and office: QoS 1 everywhere, persistent "
                           "sessions, JSON with sorted keys, times in UTC. See docs/mqtt.md.",
        },
        "defaultContentType": "application/json",
        "servers": SERVERS,
        "channels": channels,
        "operations": operations,
        "components": {"schemas": components, "messages": messages, "securitySchemes": SECURITY_SCHEMES},
    }


def _channel(address: str, carried: tuple[str, ...], description: str) -> dict:
    return {
        "address": address,
        "description": description,
        "parameters": {p: PARAMETERS[p] for p in PARAMETERS if "{" + p + "}" in address},
        "messages": {m: {"$ref": f"#/components/messages/{m}"} for m in carried},
    }


def _operations(name: str, carried: tuple[str, ...], sender: str, receiver: str, retained: bool) -> dict:
    """The channel's send (by ``sender``) and receive (by ``receiver``) operations."""
    bindings = {"mqtt": {"qos": 1, "retain": retained, "bindingVersion": "0.2.0"}}
    ref = [{"$ref": f"#/channels/{name}/messages/{m}"} for m in carried]
    return {
        f"{action}{name[0].upper()}{name[1:]}": {
            "action": action,
            "channel": {"$ref": f"#/channels/{name}"},
            "summary": f"{who[0].upper()}{who[1:]} {'publishes' if action == 'send' else 'receives'} "
                       f"{' or '.join(carried)} (QoS 1{', retained' if retained else ''}).",
            "messages": ref,
            "bindings": bindings,
        }
        for action, who in (("send", sender), ("receive", receiver))
    }


def _message(message: str, components: dict) -> dict:
    return {
        "name": message,
        "title": message,
        "summary": components[message].get("title", message),
        "contentType": "application/json",
        "payload": {"$ref": f"#/components/schemas/{message}"},
    }


def render() -> dict[str, str]:
    out: dict[str, str] = {}
    for name, kind in MESSAGES.items():
        out[f"schemas/{name}.json"] = _dump(json_schema(name, kind))
    out["asyncapi.yaml"] = "# Generated by `portgate wire generate`; JSON syntax (valid YAML).\n" + _dump(asyncapi())
    return out


def write(root: Path = HERE) -> list[Path]:
    written = []
    for rel, text in render().items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
