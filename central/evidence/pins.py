"""The keys an evidence bundle's check relied on, and the fingerprints a court expects (pins)
(``portgate evidence verify --office-key/--gate-key/--inspector-key/--pins``; docs/evidence.md
"Keys and pins").

A bundle carries its own public keys, so a bundle made with other keys throughout verifies against
itself. ``confirm`` decides, for each key the check relied on (the office key that signed the
manifest, receipts and enrolment records; for each gate the key its chain in the bundle starts from,
later keys being vouched for by signed ``SIGNING_KEY`` rollovers of the chain), whether it is
confirmed by a pin: the office key by ``--office-key``; a gate key by ``--gate-key G=FP``, or by its
enrolment record in the bundle countersigned by an inspector key given as ``--inspector-key``. A
pin that does not match is a failure; a key left unconfirmed makes the result conditional.

Pin file (``--pins FILE``, TOML)::

    office = "1b16abeadccd9af8"
    inspector = ["4f0c2d9e71a3b655"]        # or one string
    [gates]
    g-nordic = "9e2c61d0a47b3f18"           # or a list (a gate enrolled with several keys)
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

from portgate.clitext import tr
from portgate.errors import BadInput

FINGERPRINT = re.compile(r"[0-9a-f]{16}")


@dataclasses.dataclass(frozen=True)
class Pins:
    """Expected fingerprints (16 lower-case hex digits each): the office's, the inspectors' and,
    per gate, its keys'. Empty: nothing pinned."""

    office: frozenset[str] = frozenset()
    inspectors: frozenset[str] = frozenset()
    gates: dict[str, frozenset[str]] = dataclasses.field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.office or self.inspectors or self.gates)

    def merged(self, other: Pins) -> Pins:
        gates = {g: self.gates.get(g, frozenset()) | other.gates.get(g, frozenset())
                 for g in set(self.gates) | set(other.gates)}
        return Pins(self.office | other.office, self.inspectors | other.inspectors, gates)


def fingerprint_arg(value: str, where: str) -> str:
    """``value`` as a fingerprint (16 hex digits, case ignored). Raises ``BadInput`` naming ``where``."""
    fp = value.strip().lower()
    if not FINGERPRINT.fullmatch(fp):
        raise BadInput(f"{value!r} is not a key fingerprint (16 hex digits, as verify prints them)", where=where)
    return fp


def pins_from_args(office: tuple[str, ...], gates: tuple[str, ...], inspectors: tuple[str, ...]) -> Pins:
    """Pins from the command line: ``--office-key FP``, ``--gate-key GATE=FP``, ``--inspector-key FP``
    (each repeatable). Raises ``BadInput`` naming the option."""
    per_gate: dict[str, set[str]] = {}
    for item in gates:
        gate, sep, fp = item.partition("=")
        if not sep or not gate.strip():
            raise BadInput(f"{item!r} is not GATE=FINGERPRINT", where="--gate-key")
        per_gate.setdefault(gate.strip(), set()).add(fingerprint_arg(fp, "--gate-key"))
    return Pins(frozenset(fingerprint_arg(f, "--office-key") for f in office),
                frozenset(fingerprint_arg(f, "--inspector-key") for f in inspectors),
                {g: frozenset(fps) for g, fps in per_gate.items()})


def load_pins(path: str | Path) -> Pins:
    """The pin file at ``path`` (module docstring). Raises ``BadInput`` naming the file and key."""
    where = str(path)
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadInput(f"cannot read the pin file: {exc.strerror}", where=where) from exc
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BadInput(f"not a pin file: not UTF-8 TOML ({exc})", where=where) from exc
    unknown = sorted(set(raw) - {"office", "inspector", "gates"})
    if unknown:
        raise BadInput(f"not a pin file: unknown key {unknown[0]!r} (office, inspector, gates)", where=where)

    def many(value, key: str) -> frozenset[str]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise BadInput(f"{key}: a fingerprint or a list of them", where=where)
        return frozenset(fingerprint_arg(v, f"{where}: {key}") for v in items)

    gates = raw.get("gates", {})
    if not isinstance(gates, dict):
        raise BadInput("gates: a table GATE = FINGERPRINT", where=where)
    return Pins(many(raw.get("office", []), "office"), many(raw.get("inspector", []), "inspector"),
                {g: many(v, f"gates.{g}") for g, v in gates.items()})


@dataclasses.dataclass(frozen=True, slots=True)
class KeyUse:
    """One key the check relied on: ``role`` ("office", "gate G", "inspector"), its fingerprint,
    what it was used for and how it stands: ``confirmed`` (True: pinned, or a gate key enrolled
    with a pinned inspector's countersignature) and ``how`` (one phrase)."""

    role: str
    fingerprint: str
    used_for: str
    confirmed: bool
    how: str

    def named(self) -> str:
        """Its role and fingerprint in ``cli_lang()``: ``"portaló g1 85814d6ea16399d9"``."""
        return f"{role_words(self.role)} {self.fingerprint}"

    def line(self) -> str:
        """The machine-read ``key:`` line; the rest in ``cli_lang()`` (``used_for`` and ``how`` are
        worded in it when the ``KeyUse`` is made)."""
        return "key: " + tr("cli.evidence.key.line", named=self.named(), used=self.used_for, how=self.how)


def role_words(role: str) -> str:
    """A key's role (``office``, ``gate G``, ``inspector``) in ``cli_lang()``."""
    if role.startswith("gate "):
        return tr("cli.evidence.key.role_gate", gate=role[5:])
    return tr(f"cli.evidence.key.role_{role}") if role in ("office", "inspector") else role


def confirm(office: str | None, gate_keys: dict[str, tuple[str, str]], enrolments: dict[tuple[str, str], object],
            pins: Pins, fail: list[str]) -> list[KeyUse]:
    """The ``KeyUse`` of every key relied on, failures appended for each pin that does not match.
    ``office``: the manifest's signing key fingerprint (``None``: it did not verify);
    ``gate_keys``: gate -> (starting key fingerprint, what it signed); ``enrolments``: (gate,
    fingerprint) -> ``enrolment.Enrolment`` whose office signature holds by the bundle's office key."""
    out: list[KeyUse] = []
    if office is not None:
        if pins.office and office not in pins.office:
            fail.append("keys/office.pem: " + tr("cli.evidence.fail.office_not_pinned", key=office,
                                                   pinned=", ".join(sorted(pins.office))))
            out.append(KeyUse("office", office, tr("cli.evidence.key.used_office"), False, tr("cli.evidence.key.not_the_pinned")))
        else:
            out.append(KeyUse("office", office, tr("cli.evidence.key.used_office"), office in pins.office,
                              tr("cli.evidence.key.pinned") if office in pins.office else tr("cli.evidence.key.not_pinned")))
    inspectors: dict[str, list[str]] = {}
    needed: set[str] = set()  # inspectors a gate key's confirmation rests on (not pinned directly)
    for gate, (fp, used) in sorted(gate_keys.items()):
        enr = enrolments.get((gate, fp))
        ins = getattr(enr, "inspector", None)
        if ins:
            inspectors.setdefault(ins, []).append(f"{gate} {fp}")
            if gate not in pins.gates:
                needed.add(ins)
        if gate in pins.gates:
            ok = fp in pins.gates[gate]
            if not ok:
                fail.append(f"keys/{gate}.pem: " + tr("cli.evidence.fail.gate_not_pinned", gate=gate, key=fp,
                                                          pinned=", ".join(sorted(pins.gates[gate]))))
            out.append(KeyUse(f"gate {gate}", fp, used, ok,
                              tr("cli.evidence.key.pinned") if ok else tr("cli.evidence.key.not_the_pinned")))
        elif ins and ins in pins.inspectors:
            out.append(KeyUse(f"gate {gate}", fp, used, True,
                              tr("cli.evidence.key.enrolled_pinned_inspector", at=enr.enrolled_at, inspector=ins)))
        elif ins and pins.inspectors:
            fail.append(f"enrolments/{gate}-{fp}.json: " + tr("cli.evidence.fail.inspector_not_pinned", key=ins,
                                                                      pinned=", ".join(sorted(pins.inspectors))))
            out.append(KeyUse(f"gate {gate}", fp, used, False, tr("cli.evidence.key.other_inspector", inspector=ins)))
        elif ins:
            out.append(KeyUse(f"gate {gate}", fp, used, False,
                              tr("cli.evidence.key.enrolled_inspector", at=enr.enrolled_at, inspector=ins)))
        else:
            out.append(KeyUse(f"gate {gate}", fp, used, False,
                              tr("cli.evidence.key.office_alone") if enr else tr("cli.evidence.key.no_record")))
    for ins, what in sorted(inspectors.items()):
        pinned = ins in pins.inspectors
        how = tr(f"cli.evidence.key.{'pinned' if pinned else 'not_pinned' if ins in needed else 'not_needed'}")
        out.append(KeyUse("inspector", ins, tr("cli.evidence.key.used_inspector", gates=", ".join(what)),
                          pinned or ins not in needed, how))
    return out
