"""Gate key enrolment records, signed by the office and countersigned by the union's inspector
(docs/evidence.md "Keys and pins").

Whoever makes an evidence bundle chooses the keys in it; a court needs keys it did not get from the
bundle. Each gate key is enrolled once: ``portgate central add-gate --public-key`` writes
``<keys_dir>/enrolments/<gate>-<fingerprint>.json``, ``{"body": <JSON text>, "office_sig": hex,
"inspector_key": base64 | null, "inspector_sig": hex | null}``. ``body`` is compact sorted-key
UTF-8 JSON ``{"kind": "portgate-gate-enrolment/1", "gate_id", "public_key" (base64 of the raw 32
bytes), "fingerprint", "office_key", "office_fingerprint", "enrolled_at", "text"}``; ``office_sig``
is the office key's Ed25519 signature of it. The inspector, who read the gate's fingerprint at the
gangway (``portgate edge key``), countersigns the same bytes with his own key
(``portgate evidence inspector-key`` makes it; ``portgate evidence countersign-gate``). The bundle
carries the records of its gate keys; ``verify`` checks both signatures and prints the inspector's
fingerprint: one fingerprint to compare with the union's copy.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from central.office_key import key_pair, load_private
from portgate.clitext import tr
from portgate.errors import BadInput, ConfigError
from wire import chain
from wire.topics import check_id

KIND = "portgate-gate-enrolment/1"
FOLDER = "enrolments"


def record_path(keys_dir: str | Path, gate_id: str, fp: str) -> Path:
    """``<keys_dir>/enrolments/<gate>-<fingerprint>.json``."""
    return Path(keys_dir) / FOLDER / f"{check_id(gate_id, 'gate_id')}-{fp}.json"


def enrol(keys_dir: str | Path, gate_id: str, key: Ed25519PublicKey, office: Ed25519PrivateKey,
          now: dt.datetime) -> tuple[Path, bool]:
    """Write the office-signed enrolment record of ``gate_id``'s ``key`` unless there is one
    (a key is enrolled once). Returns ``(path, written)``."""
    fp = chain.fingerprint(key)
    path = record_path(keys_dir, gate_id, fp)
    if path.exists():
        return path, False
    pub = office.public_key()
    at = now.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    text = (f"chave do portão {gate_id}: {fp}, registrada pelo escritório (chave {chain.fingerprint(pub)}) "
            f"em {at} / key of gate {gate_id}: {fp}, enrolled by the office (key {chain.fingerprint(pub)}) at {at}")
    body = json.dumps({"kind": KIND, "gate_id": gate_id, "public_key": chain.public_raw(key), "fingerprint": fp,
                       "office_key": chain.public_raw(pub), "office_fingerprint": chain.fingerprint(pub),
                       "enrolled_at": at, "text": text},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    record = {"body": body, "office_sig": office.sign(body.encode("utf-8")).hex(), "inspector_key": None,
              "inspector_sig": None}
    path.parent.mkdir(parents=True, exist_ok=True)
    _write(path, record)
    return path, True


def _write(path: Path, record: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


@dataclasses.dataclass(frozen=True, slots=True)
class Enrolment:
    """A record whose office signature holds (against its own ``office_key``): the gate, its key's
    fingerprint, the office's fingerprint, and the inspector's fingerprint when his countersignature
    holds (``None``: not countersigned). ``problem``: why the countersignature does not hold."""

    gate_id: str
    fingerprint: str
    office_fingerprint: str
    enrolled_at: str
    inspector: str | None
    problem: str | None = None


def read_record(raw: bytes) -> tuple[Enrolment, dict]:
    """Check a record's shape and signatures (pure). Returns ``(Enrolment, record)``. Raises
    ``BadInput`` if it is not a record or its office signature does not hold for the office key it
    names (an inspector signature that does not hold is ``Enrolment.problem``)."""
    try:
        record = json.loads(raw)
        body = record["body"]
        said = json.loads(body)
        if said.get("kind") != KIND:
            raise ValueError(tr("cli.evidence.fail.enrolment_kind", kind=repr(said["kind"])) if "kind" in said
                             else tr("cli.evidence.fail.enrolment_no_kind"))
        key = chain.load_public(said["public_key"])
        office = chain.load_public(said["office_key"])
        if chain.fingerprint(key) != said["fingerprint"] or chain.fingerprint(office) != said["office_fingerprint"]:
            raise ValueError(tr("cli.evidence.fail.enrolment_fingerprint"))
        office.verify(bytes.fromhex(record["office_sig"]), body.encode("utf-8"))
    except InvalidSignature as exc:
        raise BadInput(tr("cli.evidence.fail.enrolment_office_sig")) from exc
    except BadInput as exc:  # a key that is not one (wire.chain.load_public)
        raise BadInput(tr("cli.evidence.fail.enrolment_not_record", why=tr("cli.evidence.fail.enrolment_key"))) from exc
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        why = f"{exc}" if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        raise BadInput(tr("cli.evidence.fail.enrolment_not_record", why=why)) from exc
    inspector, problem = None, None
    if record.get("inspector_sig"):
        try:
            ins = chain.load_public(record["inspector_key"])
            ins.verify(bytes.fromhex(record["inspector_sig"]), body.encode("utf-8"))
            inspector = chain.fingerprint(ins)
        except (InvalidSignature, ValueError, TypeError, BadInput):
            problem = tr("cli.evidence.fail.enrolment_countersignature")
    return Enrolment(said["gate_id"], said["fingerprint"], said["office_fingerprint"], said["enrolled_at"],
                     inspector, problem), record


# -- the inspector's side ---------------------------------------------------------------------------

def inspector_key(folder: str | Path) -> tuple[Ed25519PrivateKey, bool]:
    """The inspector's key pair in ``folder`` (``inspector.key``, PKCS#8 PEM 0600, and
    ``inspector.pub``), made if there is none. Returns ``(key, made)``. Raises ``ConfigError`` if
    the file is readable by others or not an Ed25519 key."""
    return key_pair(Path(folder) / "inspector.key", "inspector.pub", "inspector key")


def load_inspector_key(path: str | Path) -> Ed25519PrivateKey:
    """The inspector's private key file. Raises ``ConfigError`` (missing, readable by others, not
    an Ed25519 PEM key)."""
    return load_private(path, "inspector key")


def countersign(path: str | Path, key: Ed25519PrivateKey, gate_fingerprint: str,
                office_fingerprint: str | None = None, out: str | Path | None = None) -> Enrolment:
    """Countersign the record at ``path`` with the inspector's ``key`` and write it to ``out``
    (default: in place). ``gate_fingerprint``: what the inspector read at the gangway
    (``portgate edge key``); ``office_fingerprint``: the office's, if he has it. Raises
    ``BadInput`` if the record's office signature does not hold, a fingerprint differs, or it is
    already countersigned by another inspector key."""
    enr, record = read_record(Path(path).read_bytes())
    if enr.fingerprint != gate_fingerprint:
        raise BadInput(f"the record enrols key {enr.fingerprint} of gate {enr.gate_id}, not {gate_fingerprint} "
                       "(read at the gangway): not countersigned", where=str(path))
    if office_fingerprint is not None and enr.office_fingerprint != office_fingerprint:
        raise BadInput(f"the record is signed by office key {enr.office_fingerprint}, not {office_fingerprint}: "
                       "not countersigned", where=str(path))
    mine = chain.fingerprint(key.public_key())
    if enr.inspector is not None and enr.inspector != mine:
        raise BadInput(f"already countersigned by inspector key {enr.inspector}", where=str(path))
    record["inspector_key"] = chain.public_raw(key.public_key())
    record["inspector_sig"] = key.sign(record["body"].encode("utf-8")).hex()
    _write(Path(out or path), record)
    return dataclasses.replace(enr, inspector=mine, problem=None)
