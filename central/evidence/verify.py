"""Offline check of an evidence bundle (``portgate evidence verify FILE.zip``; docs/evidence.md).

Needs nothing but the zip: no database, no network, no configuration. ``verify_bundle`` returns
``(failures, notes)``: each failure names the file, gate, seq or statement that does not hold;
notes say what was checked. Checks, in order:

1. ``manifest.sig`` is the office key's (``keys/office.pem``) Ed25519 signature of
   ``manifest.json``; every file of the zip is listed there with its SHA-256 and none is missing;
2. per gate, ``events/<gate>.jsonl`` (the raw signed events, one per line) forms an unbroken chain
   from the manifest's ``seq_from`` (``wire.chain.check_chain`` with ``keys/<gate>.pem``): every
   break is a failure but a ``PREV_MISMATCH`` between two gate-signed events that the office
   recorded on ingest (the gate's journal edited after the ledger verified seq n: the ledger's
   copy counts, the break is a note beside it); a documented quarantine segment is a note; each break the office recorded
   (``chain/<gate>.json``) is a note saying whether the bundle's events break there too (the hash
   links are recomputed from the raw events; the ledger's ``event_links`` rows are never trusted);
3. ``canonical/<gate>/<seq>-<event_id>.bin`` / ``.sig`` are the canonical bytes and raw signature of
   each event (for ``openssl pkeyutl -verify``);
4. ``receipts/<gate>.json`` is signed by the office and its head is the hash of the event at its seq;
5. ``statements.json``: each total is the sum of its lines, the digest of its computed part matches,
   at most one current statement per shift; ``shifts.json``: every admit/exit event is in the bundle
   and verified;
6. every shift of the worker recomputed from the verified gate events, and every current statement
   from those shifts, the bundle's pay rulebook and holiday calendar (``central.evidence.recompute``):
   each difference is a failure naming the shift or statement and the line.

Before anything is read, every member's declared uncompressed size must be at most
``MAX_MEMBER_BYTES`` (256 MiB) and their sum at most ``MAX_TOTAL_BYTES`` (1 GiB); each member is
read with a bounded read, so a header that understates the size cannot exceed either limit.
``manifest.json`` is decoded into ``Manifest`` (msgspec); any other shape is ``BadInput``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zipfile
import zlib
from decimal import Decimal
from pathlib import Path
from typing import Annotated

import msgspec
from cryptography.exceptions import InvalidSignature

from central.evidence.enrolment import read_record
from central.evidence.pins import KeyUse, Pins, confirm
from central.evidence.verify_gate import check_gate, public_keys
from portgate.clitext import tr
from portgate.errors import BadInput
from wire import chain

FORMAT = "portgate-evidence/1"
ADJUSTMENT_RULE, ADJUSTMENT_FLAG = "ADJ", "ADJUSTMENT"
MAX_MEMBER_BYTES = 256 * 2**20  # one member, uncompressed (a month's bundle is a few MiB)
MAX_TOTAL_BYTES = 2**30  # all members together, uncompressed


class GateRange(msgspec.Struct, frozen=True):
    """``manifest.json`` ``gates.<gate>``: the seqs of the gate's chain in the bundle."""

    seq_from: Annotated[int, msgspec.Meta(ge=0)] | None = None
    seq_to: Annotated[int, msgspec.Meta(ge=0)] | None = None


class Manifest(msgspec.Struct, frozen=True):
    """The fields of ``manifest.json`` that ``verify_bundle`` reads (others are ignored):
    ``format``, ``files`` (member name -> SHA-256 hex) and ``gates`` (gate -> ``GateRange``)."""

    format: str | None = None
    files: dict[str, str] = {}
    gates: dict[str, GateRange] = {}
    registration: str | None = None
    date_from: str | None = msgspec.field(default=None, name="from")
    date_to: str | None = msgspec.field(default=None, name="to")


def read_members(zf: zipfile.ZipFile, where: str, *, max_member: int = MAX_MEMBER_BYTES,
                 max_total: int = MAX_TOTAL_BYTES) -> dict[str, bytes]:
    """Every file member of ``zf`` (name -> bytes). Raises ``BadInput`` naming the member if its
    declared size exceeds ``max_member`` bytes, if all declared sizes together exceed ``max_total``
    (both before anything is decompressed), or if a member is damaged (bad CRC-32, a deflate stream
    zlib rejects, truncated data) or holds more than it declares."""
    infos = [i for i in zf.infolist() if not i.is_dir()]
    for info in infos:
        if info.file_size > max_member:
            raise BadInput(f"{info.filename}: unpacks to {info.file_size} bytes, over the limit of "
                           f"{max_member} per member", where=where)
    declared = sum(i.file_size for i in infos)
    if declared > max_total:
        raise BadInput(f"members unpack to {declared} bytes in all, over the limit of {max_total}", where=where)
    files: dict[str, bytes] = {}
    for info in infos:
        try:
            with zf.open(info) as member:
                data = member.read(info.file_size + 1)
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError) as exc:
            raise BadInput(f"{info.filename}: damaged member ({exc})", where=where) from exc
        if len(data) > info.file_size:
            raise BadInput(f"{info.filename}: holds more than the {info.file_size} bytes it declares",
                           where=where)
        files[info.filename] = data
    return files


def statement_digest(st: dict) -> str:
    """The digest of a stored statement's computed part (central.pay.versions.statement_digest):
    its lines and flags without the adjustment, and their total."""
    lines = [ln for ln in st["lines"] if ln["rule"] != ADJUSTMENT_RULE]
    body = {"rulebook": st["rulebook"], "total_cents": sum(ln["amount_cents"] for ln in lines),
            "flags": [f for f in st["flags"] if f != ADJUSTMENT_FLAG], "hold_reason": st["hold_reason"],
            "lines": [[ln["rule"], ln["article"], ln["description"], ln["amount_cents"]] for ln in lines]}
    raw = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


@dataclasses.dataclass(frozen=True, slots=True)
class Verdict:
    """What ``check_bundle`` found: ``failures`` (each names what does not hold), ``notes`` (what
    was checked) and ``keys`` (``pins.KeyUse``: every key relied on, and whether a pin confirms
    it). ``unconfirmed``: the keys no pin confirms (the result holds only if they are the
    parties' own)."""

    failures: list[str]
    notes: list[str]
    keys: list[KeyUse]

    @property
    def unconfirmed(self) -> list[KeyUse]:
        return [k for k in self.keys if not k.confirmed]


def verify_bundle(path: str | Path, *, max_member: int = MAX_MEMBER_BYTES,
                  max_total: int = MAX_TOTAL_BYTES) -> tuple[list[str], list[str]]:
    """(failures, notes) of the bundle at ``path`` with no pins (``check_bundle``). Raises as
    ``check_bundle``."""
    verdict = check_bundle(path, max_member=max_member, max_total=max_total)
    return verdict.failures, verdict.notes


def check_bundle(path: str | Path, pins: Pins = Pins(), *, max_member: int = MAX_MEMBER_BYTES,
                 max_total: int = MAX_TOTAL_BYTES) -> Verdict:
    """Check the bundle at ``path``; ``pins``: the fingerprints the court expects (a mismatch is a
    failure). Raises ``BadInput`` if it is not a zip, a member is over the size limits
    (``read_members``), or the manifest is missing, not JSON or not of the ``Manifest`` shape
    (nothing can be checked then)."""
    files, manifest = _open_bundle(path, max_member, max_total)
    fail: list[str] = []
    notes: list[str] = []
    if manifest.format != FORMAT:
        fail.append("manifest.json: " + tr("cli.evidence.fail.format", format=repr(manifest.format), want=FORMAT))
    office = _check_manifest(files, manifest, fail, notes)

    verified_ids: dict[str, object] = {}  # event id -> Event: own signature and links hold
    gate_keys: dict[str, tuple[str, str]] = {}  # gate -> (starting key fingerprint, what it signed)
    for gate, info in sorted(manifest.gates.items()):
        check_gate(gate, info, files, office, fail, notes, verified_ids, gate_keys)
    if _check_statements(files, fail, notes, verified_ids):  # rows of the shape recheck reads
        from central.evidence.recompute import recheck  # lazy: pay's modules

        try:
            recheck(files, manifest.registration, manifest.date_from, manifest.date_to, verified_ids, fail, notes)
        except (KeyError, TypeError, AttributeError, ValueError, ArithmeticError) as exc:  # a malformed row
            why = f"{type(exc).__name__}: {exc}"
            fail.append("shifts.json/statements.json: " + tr("cli.evidence.fail.not_recomputable", why=why))
    office_fp = chain.fingerprint(office) if office is not None and not any(
        f.startswith(("manifest.sig", "keys/office.pem")) for f in fail) else None
    enrolments = _enrolments(files, office_fp, fail, notes)
    return Verdict(fail, notes, confirm(office_fp, gate_keys, enrolments, pins, fail))


def _open_bundle(path: str | Path, max_member: int, max_total: int) -> tuple[dict[str, bytes], Manifest]:
    """The bundle's members (``read_members``, within the size limits) and its decoded manifest;
    ``BadInput`` if it is not a zip or has no manifest of the ``Manifest`` shape."""
    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise BadInput(f"not a readable zip: {exc}", where=str(path)) from exc
    with zf:
        files = read_members(zf, str(path), max_member=max_member, max_total=max_total)
    if "manifest.json" not in files:
        raise BadInput("no manifest.json: not an evidence bundle", where=str(path))
    try:
        return files, msgspec.json.decode(files["manifest.json"], type=Manifest)
    except msgspec.ValidationError as exc:
        raise BadInput(f"manifest.json is malformed: {exc}", where=str(path)) from exc
    except msgspec.DecodeError as exc:
        raise BadInput(f"manifest.json is not JSON: {exc}", where=str(path)) from exc


def _check_manifest(files: dict[str, bytes], manifest: Manifest, fail: list[str], notes: list[str]):
    """Step 1: ``manifest.sig`` is the office key's signature of ``manifest.json``, and the zip
    holds exactly the files it lists with their SHA-256. Returns the office key (None if missing
    or unreadable)."""
    office = None
    try:
        office = public_keys(files["keys/office.pem"].decode("ascii"))[0]
        office.verify(bytes.fromhex(files["manifest.sig"].decode("ascii").strip()), files["manifest.json"])
        notes.append(tr("cli.evidence.note.manifest_signed", key=chain.fingerprint(office)))
    except KeyError as exc:
        fail.append(f"{exc.args[0]}: " + tr("cli.evidence.fail.missing"))
    except (InvalidSignature, ValueError, IndexError, BadInput):
        fail.append("manifest.sig: " + tr("cli.evidence.fail.manifest_sig"))
    listed = manifest.files
    for name, digest in sorted(listed.items()):
        if name not in files:
            fail.append(f"{name}: " + tr("cli.evidence.fail.listed_missing"))
        elif hashlib.sha256(files[name]).hexdigest() != digest:
            fail.append(f"{name}: " + tr("cli.evidence.fail.sha_differs"))
    for name in sorted(set(files) - set(listed) - {"manifest.json", "manifest.sig"}):
        fail.append(f"{name}: " + tr("cli.evidence.fail.not_listed"))
    return office


def _enrolments(files: dict[str, bytes], office_fp: str | None, fail: list[str], notes: list[str]) -> dict:
    """(gate, key fingerprint) -> ``Enrolment`` of each ``enrolments/<gate>-<fp>.json`` whose office
    signature holds by the bundle's office key; a failure for every other record."""
    out = {}
    for name in sorted(n for n in files if n.startswith("enrolments/")):
        try:
            enr, _record = read_record(files[name])
        except BadInput as exc:
            fail.append(f"{name}: {exc.reason}")
            continue
        if name != f"enrolments/{enr.gate_id}-{enr.fingerprint}.json":
            fail.append(f"{name}: " + tr("cli.evidence.fail.other_enrolment", gate=enr.gate_id, key=enr.fingerprint))
        elif enr.office_fingerprint != office_fp:
            fail.append(f"{name}: " + (tr("cli.evidence.fail.other_office", key=enr.office_fingerprint, bundle=office_fp)
                                       if office_fp else tr("cli.evidence.fail.no_bundle_office", key=enr.office_fingerprint)))
        elif enr.problem:
            fail.append(f"{name}: {enr.problem}")
        else:
            out[(enr.gate_id, enr.fingerprint)] = enr
            fields = {"gate": enr.gate_id, "key": enr.fingerprint, "at": enr.enrolled_at,
                      "office": enr.office_fingerprint, "inspector": enr.inspector}
            notes.append(tr("cli.evidence.note.enrolled_countersigned", **fields) if enr.inspector
                         else tr("cli.evidence.note.enrolled_alone", **fields))
    return out


def _check_statements(files, fail, notes, verified_ids) -> bool:
    """False when statements.json or shifts.json is not a list of objects (nothing to recompute)."""
    try:
        statements = json.loads(files.get("statements.json", b"[]"))
        shifts = json.loads(files.get("shifts.json", b"[]"))
    except ValueError as exc:
        fail.append("statements.json/shifts.json: " + tr("cli.evidence.fail.not_json", why=exc))
        return True  # recheck names its own failure to read them
    for name, rows in (("statements.json", statements), ("shifts.json", shifts)):
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            fail.append(f"{name}: " + tr("cli.evidence.fail.not_objects"))
            return False
    current: dict[str, list[str]] = {}
    for st in statements:
        sid = st.get("statement_id", "?")
        try:
            lines = sum(Decimal(ln["amount_cents"]) for ln in st["lines"])
            if lines != Decimal(st["total_cents"]):
                fail.append(f"statements.json {sid}: " + tr("cli.evidence.fail.total_not_sum",
                                                               total=Decimal(st['total_cents']) / 100, lines=lines / 100))
            if st.get("digest") and statement_digest(st) != st["digest"]:
                fail.append(f"statements.json {sid}: " + tr("cli.evidence.fail.digest"))
            if st.get("superseded_at") is None:
                current.setdefault(st["shift_id"], []).append(sid)
        except (KeyError, TypeError, ArithmeticError) as exc:
            fail.append(f"statements.json {sid}: " + tr("cli.evidence.fail.malformed", why=exc))
    for shift, ids in sorted(current.items()):
        if len(ids) > 1:
            fail.append("statements.json: " + tr("cli.evidence.fail.current_statements", shift=shift, n=len(ids),
                                                     ids=", ".join(ids)))
    for sh in shifts:
        for what in ("admit_event_id", "exit_event_id"):
            eid = sh.get(what)
            if eid and eid not in verified_ids:
                said = (tr("cli.evidence.fail.admit_unverified", event=eid) if what == "admit_event_id"
                        else tr("cli.evidence.fail.exit_unverified", event=eid))
                fail.append(f"shifts.json {sh.get('shift_id')}: {said}")
    notes.append(tr("cli.evidence.note.statements_checked", n=len(statements), current=len(current),
                    shifts=len(shifts)))
    return True
