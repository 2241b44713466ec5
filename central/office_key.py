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
    return key_pair(Path(keys_dir) / "office" / "signing.key", "signing.pub", "office signing key")[0]


def key_pair(path: Path, pub_name: str, what: str) -> tuple[Ed25519PrivateKey, bool]:
    """The Ed25519 private key in ``path`` (PKCS#8 PEM, 0600), made with its public half
    ``pub_name`` beside it if there is none; returns ``(key, made)``. Raises ``ConfigError`` as
    ``load_private``. Used for the office's key and the union inspector's."""
    if not path.exists():
        key = Ed25519PrivateKey.generate()
        write_secret(path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption()))
        (path.parent / pub_name).write_text(public_pem(key.public_key()), encoding="ascii")
        return key, True
    return load_private(path, what), False


def load_private(path: str | Path, what: str) -> Ed25519PrivateKey:
    """An Ed25519 private key file (PEM). Raises ``ConfigError`` naming ``what`` if it is missing,
    readable by others or not an Ed25519 PEM key: the caller reports it and stops."""
    try:
        key = serialization.load_pem_private_key(read_secret(path, what=what) + b"\n", None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"not a PEM private key: {exc}", path=str(path)) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError("not an Ed25519 private key", path=str(path))
    return key
