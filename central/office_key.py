"""The office's own Ed25519 key (``<keys_dir>/office/signing.key``, with its ``signing.pub``): it
signs the chain receipts (``central.ingest.receipts``), the evidence bundles and every downlink
(``central.broadcast.publisher.office_signer``); every gate holds its public half. A module of its
own, below evidence, ingest and broadcast, so none of them imports another for the key."""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from portgate.config import read_secret, write_secret
from portgate.errors import ConfigError
from wire.chain import public_pem


def office_key(keys_dir: str | Path) -> Ed25519PrivateKey:
    """The office's signing key, made (0600, with its ``signing.pub``) if there is none. Raises
    ``ConfigError`` if the file is readable by others or not an Ed25519 PEM key."""
    path = Path(keys_dir) / "office" / "signing.key"
    if not path.exists():
        key = Ed25519PrivateKey.generate()
        write_secret(path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption()))
        (path.parent / "signing.pub").write_text(public_pem(key.public_key()), encoding="ascii")
        return key
    try:
        key = serialization.load_pem_private_key(read_secret(path, what="office signing key") + b"\n", None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"not a PEM private key: {exc}", path=str(path)) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError("not an Ed25519 private key", path=str(path))
    return key
