"""The wire contract through tools nobody here wrote (issue 21 item 1): the official AsyncAPI parser
(``@asyncapi/parser``) and ajv in strict mode, from npm at the versions of tools/node/package-lock.json
(installed by scripts/setup.sh), and Python ``jsonschema`` Draft 2020-12."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import jsonschema
import msgspec
import pytest

from tests.wire.test_timestamps import KINDS, TIME, sample
from wire import downlink as dl
from wire import events, generate

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "node"
SCHEMAS = sorted((ROOT / "wire" / "schemas").glob("*.json"))
DOC = json.loads((ROOT / "wire" / "asyncapi.yaml").read_text().split("\n", 1)[1])


def run_node_tools() -> dict:
    node = shutil.which("node")
    assert node, "node is missing (scripts/setup.sh installs nodejs)"
    assert (TOOLS / "node_modules" / "@asyncapi" / "parser").is_dir(), "run scripts/setup.sh (npm ci in tools/node)"
    done = subprocess.run([node, "check-contract.mjs", str(ROOT / "wire" / "asyncapi.yaml"), *map(str, SCHEMAS)],
                          cwd=TOOLS, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def node_report() -> dict:
    return run_node_tools()


def test_the_official_asyncapi_parser_reads_the_document_with_no_error(node_report):
    report = node_report["asyncapi"]
    assert report["errors"] == [] and report["parsed"], report["errors"]


def test_ajv_strict_compiles_every_schema(node_report):
    assert len(node_report["ajv"]) == len(generate.MESSAGES) == len(SCHEMAS)
    assert {Path(p).name: e for p, e in node_report["ajv"].items() if e} == {}


def test_the_node_check_reports_a_broken_document(tmp_path):
    """The checker itself fails on what the issue found: msgspec's discriminator object."""
    bad = json.loads(json.dumps(DOC))
    bad["components"]["schemas"]["Event"]["properties"]["payload"]["discriminator"] = {"propertyName": "type"}
    path = tmp_path / "asyncapi.yaml"
    path.write_text(json.dumps(bad))
    schema = tmp_path / "Event.json"
    schema.write_text(json.dumps({**json.loads((ROOT / "wire/schemas/Event.json").read_text()),
                                  "discriminator": {"propertyName": "type"}}))
    done = subprocess.run(["node", "check-contract.mjs", str(path), str(schema)], cwd=TOOLS, capture_output=True,
                          text=True, check=True)
    report = json.loads(done.stdout)
    assert any("discriminator" in e for e in report["asyncapi"]["errors"])
    assert "discriminator" in report["ajv"][str(schema)]


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.stem)
def test_every_schema_is_draft_2020_12_and_checks_real_messages(path):
    schema = json.loads(path.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith(f"/{path.name}")
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    kinds = [k for n, k in KINDS.items() if n == path.stem or n.startswith(f"{path.stem}.")]
    assert kinds
    for info in kinds:
        message = sample(info)
        wire = json.loads((events.encode if path.stem == "Event" else dl.encode)(message))
        validator.validate(wire)
        assert not validator.is_valid({**wire, "unknown": 1})
        times = [k for k, v in wire.items() if isinstance(v, str) and TIME.match(v)]
        assert times, "every message has a time"
        assert not validator.is_valid({**wire, times[0]: "14/03/2026 22:05"})  # format: date-time is checked


def test_every_field_has_a_description():
    missing = []
    for name, spec in DOC["components"]["schemas"].items():
        missing += [f"{name}.{f}" for f, p in spec.get("properties", {}).items() if not p.get("description")]
    for path in SCHEMAS:
        for name, spec in json.loads(path.read_text())["$defs"].items():
            missing += [f"{path.stem}:{name}.{f}" for f, p in spec.get("properties", {}).items()
                        if not p.get("description")]
    assert missing == []
    event = DOC["components"]["schemas"]["Event"]["properties"]
    assert "2^53" in event["mono_ns"]["description"] and "HMAC" in event["mac"]["description"]
    assert "HMAC" in DOC["components"]["schemas"]["GateStatus"]["properties"]["mac"]["description"]


def test_a_field_without_a_description_stops_the_generation(monkeypatch):
    from wire import fields

    monkeypatch.delitem(fields.BY_NAME, "mono_ns")
    with pytest.raises(ValueError, match="Event.mono_ns has no description"):
        generate.render()


def test_servers_send_and_receive_operations_and_mqtt_bindings():
    assert DOC["asyncapi"].startswith("3.")
    (server,) = DOC["servers"].values()
    assert server["protocol"] == "secure-mqtt" and server["protocolVersion"] == "5"
    ops = DOC["operations"]
    retained = set()
    for channel, spec in DOC["channels"].items():
        mine = [o for o in ops.values() if o["channel"]["$ref"] == f"#/channels/{channel}"]
        assert sorted(o["action"] for o in mine) == ["receive", "send"], channel
        for o in mine:
            assert o["bindings"]["mqtt"]["qos"] == 1
            assert o["messages"]  # a channel may carry several (gateCmd: ReplayCommand, EnrolCommand)
            for message in o["messages"]:
                assert message["$ref"].startswith(f"#/channels/{channel}/messages/")
            if o["bindings"]["mqtt"]["retain"]:
                retained.add(spec["address"])
    cmd = [m["$ref"].rsplit("/", 1)[1] for m in ops["sendGateCmd"]["messages"]]
    assert cmd == ["ReplayCommand", "EnrolCommand"]
    assert retained == {"portgate/v1/{port}/gate/{gate_id}/status"} | {
        f"portgate/v1/{{port}}/down/{kind}/snapshot" for kind in ("roster", "cards", "escala", "presence", "photos")}


def test_the_documented_mac_vector_validates_against_the_event_schema():
    from tests.wire.test_mac_vector import _vector

    schema = json.loads((ROOT / "wire/schemas/Event.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads(_vector()["event"]))
    msgspec.json.decode(_vector()["event"].encode(), type=events.Event)
