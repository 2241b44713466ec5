"""The gate's Ed25519 signing key: made on the gate, kept in its state directory, never sent.

``<state_dir>/signing.key`` holds the private key as unencrypted PKCS#8 PEM, mode 0600 (refused
otherwise, as every secret: ``portgate.config.read_secret``). It is made at the gate's first start
(or by ``portgate gate key``, which also prints the public key to register at the office with
``portgate central add-gate --public-key``). Backup: docs/evidence.md "Gate keys".
"""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from portgate.config import read_secret, write_secret
from portgate.errors import ConfigError

KEY_FILE = "signing.key"


def key_path(state_dir: str | Path) -> Path:
    return Path(state_dir) / KEY_FILE


def load_or_create(state_dir: str | Path) -> Ed25519PrivateKey:
    """The gate's private key from ``<state_dir>/signing.key``, made (0600) if there is none.
    Raises ``ConfigError`` if the file is readable by others or is not an Ed25519 PEM key."""
    path = key_path(state_dir)
    if not path.exists():
        key = Ed25519PrivateKey.generate()
        write_secret(path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption()))
        return key
    return load_existing(state_dir)


def load_existing(state_dir: str | Path) -> Ed25519PrivateKey:
    """The gate's private key from ``<state_dir>/signing.key``, never made (read-only callers:
    ``portgate edge verify-journal``). Raises ``ConfigError`` if the file is missing, readable by
    others or not an Ed25519 PEM key; ``OSError`` if it cannot be read (no permission)."""
    path = key_path(state_dir)
    data = read_secret(path, what="gate signing key")
    try:
        key = serialization.load_pem_private_key(data + b"\n", password=None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"not a PEM private key: {exc}", path=str(path)) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError("not an Ed25519 private key", path=str(path))
    return key
