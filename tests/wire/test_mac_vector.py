"""The MAC recipe of docs/mqtt.md ("Verifying a MAC") and its test vector, checked independently of
the product (hmac + hashlib + json, as an outside consumer would), then against the product."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from pathlib import Path

from wire import events

DOC = Path(__file__).resolve().parents[2] / "docs" / "mqtt.md"


def _vector() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Verifying a MAC", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    return {m.group(1): m.group(2) for m in re.finditer(r"^(key|event|signed|mac):\s+(.*)$", block, re.M)}


def test_the_documented_vector_checks_out_with_only_hmac_and_json():
    v = _vector()
    assert set(v) == {"key", "event", "signed", "mac"}
    message = json.loads(v["event"])
    canonical = json.dumps(message | {"mac": ""}, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert canonical == v["signed"].encode("utf-8")
    key = v["key"].encode("ascii")  # the key file's text, not bytes.fromhex(...)
    assert len(key) == 64
    assert hmac.new(key, canonical, hashlib.sha256).hexdigest() == v["mac"] == message["mac"]
    assert hmac.new(bytes.fromhex(v["key"]), canonical, hashlib.sha256).hexdigest() != v["mac"]
    assert message["mono_ns"] > 2**53  # the vector shows why a JavaScript double is not enough
    assert float(message["mono_ns"]) != message["mono_ns"]


def test_the_product_signs_and_verifies_the_documented_vector():
    v = _vector()
    event = events.decode(v["event"].encode())
    assert events.canonical_bytes(event) == v["signed"].encode("utf-8")
    assert events.verify(event, v["key"].encode())
    assert events.encode(events.sign(event, v["key"].encode())) == v["event"].encode()
    tampered = events.decode(v["event"].replace('"seq":42', '"seq":43').encode())
    assert not events.verify(tampered, v["key"].encode())
