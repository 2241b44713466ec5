"""The demo day of a second port (``portgate demo --cluster``): the scenario of ``config/demo/``
copied under another port key, every id of it made distinct, so two ports play the same day on one
shared ledger without touching each other's rows.

What changes (``derive``): the port; the gate ids (``g-aurora`` -> ``pr-aurora``, the escala's
gates too); the registrations (``V001`` -> ``PRV001``: the registry, the ledger's shifts and pay are
keyed by registration alone); the card UIDs (the top hex digit flipped: ``0A04A10001`` ->
``1A04A10001``, same length, so the same reader frames carry them); the ships' numbers (the
second digit + 1: ``9300001`` -> ``9400001``); the workers' CPF and PIS (the first digit
replaced by 9, the check digits computed again) and rotation numbers (+ 1000). Names, times, decisions and the expected pay
amounts stay as they are. The stevedores and their production files are not copied: they pass no
gate and are the first port's only.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from app.demo.scenario import Scenario
from portgate.docbr import cpf_digits, pis_digits

#: added to the second port's rotation numbers (the registry holds one number per category)
ROTATION_OFFSET = 1000

#: the files of a scenario directory that ``derive`` copies (the others are the first port's)
FILES = ("workers.csv", "cards.csv", "escala.csv", "taps.csv", "expected.csv", "inspectors.csv", "scenario.toml")


def ship_shifted(ship: str) -> str:
    """``ship``'s number with its second digit + 1 (mod 10), the same length (``9300001`` ->
    ``9400001``); a ship id that does not start with two digits gets ``P2`` before it."""
    if not re.fullmatch(r"[0-9]{2}.*", ship):
        return "P2" + ship
    return ship[0] + str((int(ship[1]) + 1) % 10) + ship[2:]


def uid_shifted(uid: str) -> str:
    """``uid`` (hex) with its top hex digit's lowest bit flipped: same length, a different card."""
    return f"{int(uid[0], 16) ^ 1:X}{uid[1:]}"


class IdMap:
    """The ids of one scenario and their second-port counterparts (``tag``: the new prefix)."""

    def __init__(self, scenario: Scenario, tag: str = "pr") -> None:
        self.tag = tag
        rows = {name: _rows(scenario.dir / name) for name in ("workers.csv", "cards.csv", "escala.csv", "inspectors.csv")}
        gates = {g.gate_id for g in scenario.spec.gates} | {r["gate_id"] for r in rows["escala.csv"]}
        regs = {r["registration"] for name in rows for r in rows[name] if r.get("registration")}
        self.gates = {g: self.gate(g) for g in sorted(gates)}
        self.registrations = {r: tag.upper() + r for r in sorted(regs)}
        self.uids = {r["uid"]: uid_shifted(r["uid"]) for r in rows["cards.csv"]}
        self.ships = {r["ship"]: ship_shifted(r["ship"]) for r in rows["escala.csv"]}

    def gate(self, gate_id: str) -> str:
        return f"{self.tag}-{gate_id[2:]}" if gate_id.startswith("g-") else f"{self.tag}-{gate_id}"

    def words(self) -> dict[str, str]:
        return {**self.gates, **self.registrations, **self.uids, **self.ships}


def derive(scenario: Scenario, dest: Path, port: str, tag: str = "pr") -> tuple[Scenario, IdMap]:
    """Write the second port's scenario into ``dest`` (made if missing) and load it. Every id named
    in the module docstring is replaced wherever it appears as a whole word (CSV cells, the TOML's
    gates, expected pay and billing keys); the CPF and PIS columns get new valid numbers. Raises
    what ``Scenario`` raises on the written files (``BadInput``, ``ConfigError``)."""
    ids = IdMap(scenario, tag)
    words = ids.words()
    pattern = re.compile(r"(?<![\w-])(" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
                         + r")(?![\w-])")
    dest.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        src = scenario.dir / name
        if not src.exists():
            continue
        text = pattern.sub(lambda m: words[m.group(1)], src.read_text(encoding="utf-8"))
        if name == "scenario.toml":
            text = re.sub(r'(?m)^port = "[^"]*"', f'port = "{port}"', text, count=1)
        if name == "workers.csv":
            text = _new_payroll_ids(text)
        (dest / name).write_text(text, encoding="utf-8")
    return Scenario(dest), ids


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _new_payroll_ids(text: str) -> str:
    """workers.csv with each CPF's and PIS's first digit made 9 and their check digits recomputed
    (kept in the file's masked form), and each rotation number + ``ROTATION_OFFSET``."""
    rows = list(csv.reader(io.StringIO(text)))
    head = rows[0]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(head)
    for row in rows[1:]:
        cells = dict(zip(head, row))
        if cells.get("cpf"):
            bare = cpf_digits("9" + re.sub(r"\D", "", cells["cpf"])[1:9])
            cells["cpf"] = f"{bare[:3]}.{bare[3:6]}.{bare[6:9]}-{bare[9:]}"
        if cells.get("rotation_number"):  # the registry's rotation numbers are per category, all ports'
            cells["rotation_number"] = str(int(cells["rotation_number"]) + ROTATION_OFFSET)
        if cells.get("pis"):
            bare = pis_digits("9" + re.sub(r"\D", "", cells["pis"])[1:10])
            cells["pis"] = f"{bare[:3]}.{bare[3:8]}.{bare[8:10]}-{bare[10:]}"
        writer.writerow([cells.get(h, "") for h in head])
    return out.getvalue()
