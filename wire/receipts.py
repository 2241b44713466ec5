"""The office's signed chain receipt as the gate checks it (docs/evidence.md "Receipts").

On the wire (``portgate/v1/{port}/gate/{G}/receipt``, retained): ``{"body": <JSON text>, "sig":
hex}``; ``body`` is compact sorted-key UTF-8 JSON ``{"kind": "portgate-chain-receipt/1", "port",
"gate_id", "seq", "head", "breaks", "issued_at", "text"}`` ("chain of gate G held up to seq N with
head H") and ``sig`` the Ed25519 signature of the body's UTF-8 bytes by the office key
(``<keys_dir>/office/signing.key``, made by central/ingest/receipts.py). The gate keeps the
newest one only if this check passes (issue 20: neither side can rewrite history without the
other's copy showing it).
"""

from __future__ import annotations

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from portgate.errors import BadInput

KIND = "portgate-chain-receipt/1"


class ReceiptBody(msgspec.Struct, frozen=True):
    """What the office signed. ``head``: the SHA-256 hex of the gate's event at ``seq``."""

    kind: str
    port: str
    gate_id: str
    seq: int
    head: str
    breaks: int = 0
    issued_at: str = ""
    text: str = ""


class _Signed(msgspec.Struct, frozen=True):
    body: str
    sig: str


def verify_receipt(raw: bytes, office_key: Ed25519PublicKey | None, *, port: str, gate_id: str) -> ReceiptBody:
    """The receipt's body, once its signature verifies against ``office_key`` and it names this
    ``port`` and ``gate_id``.

    Raises ``BadInput`` with a one-line reason: no office key configured (unverifiable), not
    ``{"body", "sig"}`` JSON, a signature that is not hex or does not verify (another key, an
    edited body), a body of another kind, port or gate. The caller keeps the receipt it held."""
    if office_key is None:
        raise BadInput("unverifiable: no office public key configured (office_public_key_file in gate.toml)")
    try:
        signed = msgspec.json.decode(raw, type=_Signed)
    except msgspec.DecodeError as exc:
        raise BadInput(f"not a receipt ({{\"body\", \"sig\"}} JSON): {exc}") from exc
    try:
        sig = bytes.fromhex(signed.sig)
    except ValueError as exc:
        raise BadInput("signature is not hex") from exc
    body = signed.body.encode("utf-8")
    try:
        office_key.verify(sig, body)
    except InvalidSignature as exc:
        raise BadInput("signature does not verify against the office public key") from exc
    try:
        said = msgspec.json.decode(body, type=ReceiptBody)
    except msgspec.DecodeError as exc:
        raise BadInput(f"signed body is not a receipt: {exc}") from exc
    if said.kind != KIND:
        raise BadInput(f"signed body is of kind {said.kind!r}, not {KIND!r}")
    if said.port != port or said.gate_id != gate_id:
        raise BadInput(f"receipt of gate {said.port}/{said.gate_id}, not {port}/{gate_id}")
    return said
