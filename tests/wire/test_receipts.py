"""The gate's check of the office's signed chain receipt (wire/receipts.py, issue 20): only a body
signed by the office key, of the receipt kind, for this port and gate, passes."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from central.ingest.receipts import receipt_body
from portgate.errors import BadInput
from wire import chain
from wire.receipts import verify_receipt

OFFICE = chain.new_private_key()
AT = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.UTC)
HEAD = "ab" * 32


def receipt(body: bytes | None = None, key=OFFICE, sig: str | None = None) -> bytes:
    body = body if body is not None else receipt_body("santos", "g1", 20, HEAD, 0, AT)
    return json.dumps({"body": body.decode("utf-8"), "sig": sig if sig is not None else key.sign(body).hex()}).encode()


def test_a_receipt_signed_by_the_office_key_passes_with_what_it_says():
    said = verify_receipt(receipt(), OFFICE.public_key(), port="santos", gate_id="g1")
    assert (said.seq, said.head, said.breaks) == (20, HEAD, 0)
    assert said.text.endswith(f"chain of gate g1 held up to seq 20 with head {HEAD}")


def _edited() -> bytes:
    good = json.loads(receipt())
    good["body"] = good["body"].replace('"seq":20', '"seq":21')
    return json.dumps(good).encode()


@pytest.mark.parametrize("raw, key, why", [
    (receipt(), None, "unverifiable: no office public key configured"),
    (receipt(key=chain.new_private_key()), OFFICE.public_key(), "does not verify against the office public key"),
    (_edited(), OFFICE.public_key(), "does not verify"),
    (receipt(sig="zz"), OFFICE.public_key(), "signature is not hex"),
    (b"not json", OFFICE.public_key(), "not a receipt"),
    (b'{"body": "x"}', OFFICE.public_key(), "not a receipt"),
    (receipt(b'{"kind":"something-else/1"}'), OFFICE.public_key(), "not a receipt"),
    (receipt(receipt_body("santos", "g1", 20, HEAD, 0, AT).replace(b"portgate-chain-receipt/1", b"other/1")),
     OFFICE.public_key(), "of kind 'other/1'"),
    (receipt(receipt_body("santos", "g2", 20, HEAD, 0, AT)), OFFICE.public_key(), "receipt of gate santos/g2"),
    (receipt(receipt_body("rio", "g1", 20, HEAD, 0, AT)), OFFICE.public_key(), "receipt of gate rio/g1"),
])
def test_a_bad_or_unverifiable_receipt_is_refused_with_one_line_saying_why(raw, key, why):
    with pytest.raises(BadInput, match=why) as err:
        verify_receipt(raw, key, port="santos", gate_id="g1")
    assert "\n" not in str(err.value)
