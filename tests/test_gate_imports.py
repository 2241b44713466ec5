"""The gate process does not load the office's database library (DESIGN.md, issue 23: the gate's
RSS <= 60 MB; SQLAlchemy alone is ~14 MB of it).

Every module of the packages a gate runs (kernel ``portgate``, ``wire``, ``drivers``, ``edge``) and
the ``portgate edge run`` entry (``app.cli`` -> ``edge.cli``) is imported in a fresh interpreter;
then ``sqlalchemy`` must not be in ``sys.modules``. The office (``central``) keeps SQLAlchemy.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GATE_PACKAGES = ("portgate", "wire", "drivers", "edge")
ENTRY = ("app.cli", "edge.cli", "edge.service", "edge.config", "portgate.logs")


def _gate_modules() -> list[str]:
    mods: list[str] = []
    for package in GATE_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            mods.append(".".join(parts))
    return mods


_PROBE = """
import importlib, json, sys
out = {}
for name in json.loads(sys.argv[1]):
    before = "sqlalchemy" in sys.modules
    importlib.import_module(name)
    if not before and "sqlalchemy" in sys.modules:
        out.setdefault("first", name)
if "portgate.logs" in sys.modules:  # the gate's logging as in service (JSON lines)
    sys.modules["portgate.logs"].configure_logging(json=True)
out["loaded"] = sorted(m for m in sys.modules if m.split(".")[0] == "sqlalchemy")
print(json.dumps(out))
"""


def _probe(names: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(names)], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_gate_entry_and_every_gate_module_import_no_sqlalchemy():
    names = [*ENTRY, *_gate_modules()]
    assert len(names) > 50  # the packages were found
    result = _probe(names)
    assert result["loaded"] == [], f"{result.get('first')} imports sqlalchemy"


def test_the_probe_sees_sqlalchemy_when_an_office_module_loads_it():
    result = _probe(["edge.store", "central.db"])
    assert result["first"] == "central.db" and "sqlalchemy" in result["loaded"]
