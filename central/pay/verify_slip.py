"""``portgate pay verify-slip``: check a payslip PDF against the ledger.

For each slip the PDF names (metadata subject, ``central.pay.payslip_pdf``): rebuild the slip
from the ledger's statements, recompute its code with the office's key and compare it with the one
named; then check the pages print that code and every figure of the ledger's slip (rules and
amounts, in order). A PDF edited after it was made, or a slip whose ledger rows changed, fails.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from pathlib import Path

from pypdf import PdfReader
from pypdf.errors import PdfReadError
from sqlalchemy.engine import Engine

from central.pay.payslip import build_slips, code, grouped, printed_figures
from portgate.errors import BadInput


@dataclasses.dataclass(frozen=True, slots=True)
class Verdict:
    """``ok`` when every slip checks; ``problems`` names each that does not, by registration."""

    slips: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def _read(path: Path):
    try:
        reader = PdfReader(str(path))
        subject = (reader.metadata or {}).get("/Subject")
        text = "\n".join(page.extract_text() or "" for page in reader.pages)
    except (PdfReadError, OSError, ValueError) as exc:
        raise BadInput(f"not a readable PDF: {exc}", where=str(path)) from exc
    try:
        meta = json.loads(subject or "")
        slips = [(str(r), str(c)) for r, c in meta["slips"]]
        first, last = dt.date.fromisoformat(meta["from"]), dt.date.fromisoformat(meta["to"])
        if meta.get("portgate_slips") != 1:
            raise ValueError("version")
    except (ValueError, KeyError, TypeError) as exc:
        raise BadInput("not a portgate payslip (no slip metadata)", where=str(path)) from exc
    return slips, first, last, re.sub(r"\s+", " ", text)


def verify(path: str | Path, engine: Engine, key: bytes) -> Verdict:
    """Check the PDF at ``path``. ``BadInput`` when it is not a portgate payslip PDF."""
    named, first, last, text = _read(Path(path))
    with engine.connect() as conn:
        ledger = {s.registration: s for s in build_slips(conn, first, last)}
    problems: list[str] = []
    pos = 0
    for reg, claimed in named:
        slip = ledger.get(reg)
        if slip is None:
            problems.append(f"{reg}: no statements in the ledger for {first}..{last}")
            continue
        expected = code(key, slip)
        if expected != claimed:
            problems.append(f"{reg}: code {claimed} does not match the ledger (the slip or the ledger changed)")
            continue
        at = text.find(f"Código de verificação: {grouped(expected)}", pos)
        start = text.rfind("Demonstrativo de pagamento", 0, at if at >= 0 else len(text))
        if at < 0 or start < 0:
            problems.append(f"{reg}: the code {grouped(expected)} is not printed on the slip")
            continue
        cursor = max(start, pos)
        for figure in printed_figures(slip):
            found = text.find(figure, cursor, at)
            if found < 0:
                problems.append(f"{reg}: the printed slip does not show {figure} as the ledger has it (edited?)")
                break
            cursor = found + len(figure)
        pos = at + 1
    return Verdict(len(named), tuple(problems))
