"""Writing the office's production CSV files and running ``portgate production pay`` on them, for
the issue 31 tests (each test names its own rows, so its hand computation reads next to them)."""

from __future__ import annotations

import json
from pathlib import Path

from app.cli import main

TARIFFS = "cargo_class,unit,labour_tariff,effective_from\ngeneral,t,4.50,2026-01-01\n"


def write(tmp_path: Path, *, gang: str, tally: str, interruptions: str | None = None,
          tariffs: str = TARIFFS, rulebook: str = "dl-2032-1940") -> list[str]:
    """Write the files and return the arguments of ``production pay|import`` for them."""
    files = {"gang": gang, "tally": tally, "tariffs": tariffs, "interruptions": interruptions}
    argv = ["--rulebook", rulebook]
    for name, text in files.items():
        if text is None:
            continue
        (tmp_path / f"{name}.csv").write_text(text, encoding="utf-8")
        argv += [f"--{name}", str(tmp_path / f"{name}.csv")]
    return argv


def pay(capsys, argv: list[str], *extra: str) -> dict:
    """``portgate production pay`` as JSON; asserts exit status 0."""
    code = main(["production", "pay", *argv, *extra])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def refused(capsys, argv: list[str], *extra: str, command: str = "pay") -> str:
    """The error text of a ``portgate production`` run that must exit 2."""
    code = main(["production", command, *argv, *extra])
    out = capsys.readouterr()
    assert code == 2, out.out
    return out.err


def member(doc: dict, registration: str, gang: int = 0) -> dict:
    return next(m for m in doc["gangs"][gang]["members"] if m["registration"] == registration)


def lines(m: dict) -> list[tuple[str, str]]:
    return [(x["rule"], x["amount"]) for x in m["lines"]]
