"""Per-gate HMAC keys at the office: one file ``<keys_dir>/<gate_id>.key`` per gate, mode 0600.

Provisioning (``portgate central add-gate --gate-id g1``) writes a fresh 32-byte random key as 64
hex characters; the same file is copied to the gate (its ``key_file`` setting). The key bytes used
for HMAC-SHA256 are the file's text (without the trailing newline) on both sides.

A gate that signs its events (wire/chain.py) has its Ed25519 public keys in ``<gate_id>.pub`` (PEM,
oldest first; ``add-gate --public-key``). The private key never leaves the gate.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from pathlib import Path

from central.ingest.gate_port_file import OFFICE_KEYS, case_twin, keyed_gates
from portgate.config import must_exist, read_secret, write_secret
from portgate.errors import BadInput, ConfigError
from wire.chain import fingerprint, load_public, public_pem
from wire.topics import check_id


def gate_key_id(gate_id: str) -> str:
    """``gate_id`` when it may name a gate key file: a valid id (``check_id``) that is not one of
    ``OFFICE_KEYS``; ``BadInput`` otherwise."""
    if check_id(gate_id, "gate_id") in OFFICE_KEYS:
        raise BadInput(f"gate id {gate_id!r} is reserved: {gate_id}.key in a keys dir is the office's "
                       f"{OFFICE_KEYS[gate_id]}; choose another gate id")
    return gate_id


def key_path(keys_dir: str | Path, gate_id: str) -> Path:
    """``<keys_dir>/<gate_id>.key``; ``BadInput`` for an id that cannot name a gate key (``gate_key_id``)."""
    return Path(keys_dir) / f"{gate_key_id(gate_id)}.key"


def gate_key_files(keys_dir: str | Path) -> list[Path]:
    """The gate keys of ``keys_dir``: its ``*.key`` files that name a gate (not the office's own
    ``OFFICE_KEYS``), sorted."""
    return sorted(p for p in Path(keys_dir).glob("*.key") if p.stem not in OFFICE_KEYS)


def add_gate(keys_dir: str | Path, gate_id: str, *, overwrite: bool = False) -> Path:
    """Create the key file of ``gate_id`` (0600) and return its path.

    Raises ``BadInput`` if the gate already has a key (pass ``overwrite`` to rotate it), or if a
    gate of ``keys_dir`` (the keys dir of one port) has the same id in other letter case (``G1``
    beside ``g1``: ``central.ingest.gate_port_file.case_twin``; ``overwrite`` does not lift it).
    """
    path = key_path(keys_dir, gate_id)
    twin = case_twin(gate_id, keyed_gates(keys_dir))
    if twin is not None:
        raise BadInput(f"gate id {gate_id} differs only in letter case from {twin}, which has a key in {keys_dir}: "
                       f"use {twin} or choose another gate id", where="--gate-id")
    if path.exists() and not overwrite:
        raise BadInput(f"gate {gate_id} already has a key (use --rotate to replace it)", where=str(path))
    write_secret(path, secrets.token_hex(32).encode() + b"\n")
    return path


def public_key_path(keys_dir: str | Path, gate_id: str) -> Path:
    """``<keys_dir>/<gate_id>.pub``: the gate's Ed25519 public keys (PEM blocks, oldest first)."""
    return Path(keys_dir) / f"{check_id(gate_id, 'gate_id')}.pub"


def register_public_key(keys_dir: str | Path, gate_id: str, text: str) -> Path:
    """Register (append) a gate's Ed25519 public key given as PEM or base64 of the raw 32 bytes;
    registering a key already there changes nothing. Raises ``BadInput`` if it is not a key."""
    key = load_public(text)
    path = public_key_path(keys_dir, gate_id)
    known = {fingerprint(k) for k in read_public_keys(path)}
    if fingerprint(key) not in known:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="ascii") as fh:
            fh.write(public_pem(key))
    return path


def read_public_keys(path: str | Path) -> list:
    """The Ed25519 public keys of a ``.pub`` file (PEM ``PUBLIC KEY`` blocks, oldest first; empty
    if the file is missing or blank). Raises ``BadInput`` naming the file, "not a valid Ed25519
    public key", for anything else: a block that is not a key, text without a PEM block, bytes
    that are not ASCII."""
    try:
        text = Path(path).read_text(encoding="ascii")
    except FileNotFoundError:
        return []
    except UnicodeDecodeError as exc:
        raise BadInput("not a valid Ed25519 public key (not PEM text)", where=str(path)) from exc
    end = "-----END PUBLIC KEY-----"
    blocks = [block + end for block in text.split(end) if "-----BEGIN" in block]
    if not blocks and text.strip():
        raise BadInput("not a valid Ed25519 public key (no PEM PUBLIC KEY block)", where=str(path))
    try:
        return [load_public(block) for block in blocks]
    except BadInput as exc:
        raise BadInput(f"not a valid Ed25519 public key ({exc.reason.removeprefix('not an Ed25519 public key: ')})",
                       where=str(path)) from exc


class KeyUnreadable(Exception):
    """A gate's key file exists but cannot be used: unreadable, empty, or open to group/others
    (its message names the gate, the file and the cause, e.g. ``chmod 600``)."""


class KeyRing:
    """Looks up gate keys in ``keys_dir``: cached, and each cached key's file is looked at again
    (``os.stat``) at most every ``recheck_s`` seconds, so a new gate's file is picked up on first
    use and a key replaced, restored (``add-gate --rotate``) or re-permissioned (``chmod``: the
    mode and change time are compared too) within ``recheck_s``, without a restart of the office."""

    def __init__(self, keys_dir: str | Path, *, recheck_s: float = 5.0) -> None:
        self.keys_dir = Path(keys_dir)
        if not self.keys_dir.is_dir():
            # Every event would be dead-lettered as "unknown gate": refuse to start instead.
            must_exist(str(self.keys_dir), "$.keys_dir", directory=True)  # check-config's words
        self.recheck_s = recheck_s
        self._cache: dict[str, tuple[bytes, tuple, float]] = {}  # gate -> (key, file signature, checked at)
        self._lock = threading.Lock()

    def key(self, gate_id: str) -> bytes | None:
        """The key of ``gate_id``, or None if the gate is unknown (no key file, an invalid id).

        Raises ``KeyUnreadable`` if the key file is there but cannot be used (mode open to group or
        others, empty, unreadable, a directory in its place): that gate's events become dead
        letters saying so (raw bytes kept), the other gates go on; it is read again for the next
        event, so fixing the file is enough.
        """
        now = time.monotonic()
        with self._lock:
            held = self._cache.get(gate_id)
        if held is not None and now - held[2] < self.recheck_s:
            return held[0]
        try:
            path = key_path(self.keys_dir, gate_id)
            st = os.stat(path)
            mtime = (st.st_mtime_ns, st.st_ctime_ns, st.st_mode, st.st_ino)  # a chmod changes ctime/mode
        except (BadInput, ConfigError):
            return None
        except FileNotFoundError:
            with self._lock:
                self._cache.pop(gate_id, None)  # the gate was removed
            return None
        except OSError as exc:
            raise KeyUnreadable(f"key of gate {gate_id} unreadable: {type(exc).__name__}: {exc}") from exc
        if held is not None and held[1] == mtime:
            with self._lock:
                self._cache[gate_id] = (held[0], mtime, now)
            return held[0]
        try:
            key = read_secret(path, what="gate key")
        except (ConfigError, BadInput) as exc:
            with self._lock:
                self._cache.pop(gate_id, None)  # never use a key whose file is no longer acceptable
            raise KeyUnreadable(f"key of gate {gate_id} not used: {exc}") from exc
        except OSError as exc:
            raise KeyUnreadable(f"key of gate {gate_id} unreadable: {type(exc).__name__}: {exc}") from exc
        with self._lock:
            self._cache[gate_id] = (key, mtime, now)
        return key

    def public_keys(self, gate_id: str) -> list:
        """The gate's registered Ed25519 public keys (``<gate>.pub``), cached like ``key``; empty
        if the gate does not sign (HMAC only). Raises ``KeyUnreadable`` for an unreadable or
        malformed file (the event becomes a dead letter saying so)."""
        now = time.monotonic()
        name = f"pub:{gate_id}"
        with self._lock:
            held = self._cache.get(name)
        if held is not None and now - held[2] < self.recheck_s:
            return held[0]
        try:
            path = public_key_path(self.keys_dir, gate_id)
            mtime = os.stat(path).st_mtime_ns
        except (BadInput, ConfigError, FileNotFoundError):
            mtime = -1
        except OSError as exc:
            raise KeyUnreadable(f"public key of gate {gate_id} unreadable: {exc}") from exc
        if held is not None and held[1] == mtime:
            found = held[0]
        else:
            try:
                found = read_public_keys(path) if mtime != -1 else []
            except OSError as exc:
                raise KeyUnreadable(f"public key of gate {gate_id} unreadable: {exc}") from exc
            except BadInput as exc:  # names the file: "not a valid Ed25519 public key (...)"
                raise KeyUnreadable(f"public key of gate {gate_id}: {exc}") from exc
        with self._lock:
            self._cache[name] = (found, mtime, now)
        return found

    def learn_public_key(self, gate_id: str, key) -> None:
        """Add a key the gate named in a ``SIGNING_KEY`` event signed by a registered key."""
        with self._lock:
            register_public_key(self.keys_dir, gate_id, public_pem(key))
            self._cache.pop(f"pub:{gate_id}", None)
