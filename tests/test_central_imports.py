"""How ``central/`` imports (docs/architecture.md, "Imports inside central/").

- An import inside a function is written at module top, unless it hides a real optional dependency
  or a real import cycle; such an import carries ``# lazy: <reason>`` on its line.
- The ledger (``central.ledger``) never imports pay (``central.pay``): pay reads the ledger. Its
  command line (``central/ledger/cli.py``, the top of the package, which reads the pay rulebook's
  time zone) is the one exception.
- No import cycle between the packages of ``central/`` (``central.<name>``, a top module such as
  ``central.config`` counts as its own). The command-line modules (``*/cli.py``) sit above the
  packages and are left out. ``KNOWN_CYCLES`` lists the cycles not yet broken: the test fails on
  any other and when one of them is gone (so the list only shrinks).
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

from tests.test_layers import ROOT, _module_name, import_edges

LAZY_MARK = "# lazy:"
KNOWN_CYCLES: list[set[str]] = []  # none left (issue 32 item 7)


def _function_imports(tree: ast.AST):
    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from visit(child, True)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                if in_function:
                    yield child
            else:
                yield from visit(child, in_function)
    yield from visit(tree, False)


def lazy_import_violations(root: Path) -> list[str]:
    """``path:line: ...`` for each function-level import under ``root/central`` (migrations aside)
    whose lines carry no ``# lazy: <reason>``."""
    bad = []
    for path in sorted((root / "central").rglob("*.py")):
        if "migrations" in path.relative_to(root).parts:
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in _function_imports(ast.parse(text, filename=str(path))):
            span = lines[node.lineno - 1: node.end_lineno]
            marks = [line.split(LAZY_MARK, 1)[1].strip() for line in span if LAZY_MARK in line]
            if not any(marks):
                bad.append(f"{path.relative_to(root)}:{node.lineno}: function-level import without "
                           f"'{LAZY_MARK} <reason>': {ast.unparse(node)}")
    return bad


def _unit(module: str) -> str:
    return ".".join(module.split(".")[:2])


def ledger_pay_violations(root: Path) -> list[str]:
    return [f"{e}: the ledger never imports pay" for e in import_edges(root, ["central"])
            if _unit(_module_name(root, root / e.path)) == "central.ledger"
            and not e.path.endswith("cli.py") and _unit(e.imported) == "central.pay"]


def package_cycles(root: Path) -> list[set[str]]:
    """The import cycles between ``central.<name>`` units (strongly connected sets of two or more)."""
    graph: dict[str, set[str]] = {}
    for e in import_edges(root, ["central"]):
        src, dst = _unit(_module_name(root, root / e.path)), _unit(e.imported)
        if dst.startswith("central.") and src != dst and not e.path.endswith("cli.py"):
            graph.setdefault(src, set()).add(dst)
    counter = itertools.count()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[set[str]] = []

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = next(counter)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(component)

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return cycles


def test_function_level_imports_in_central_say_why():
    assert lazy_import_violations(ROOT) == []


def test_the_ledger_does_not_import_pay():
    assert ledger_pay_violations(ROOT) == []


def test_no_new_import_cycle_between_central_packages():
    found = package_cycles(ROOT)
    assert sorted(map(sorted, found)) == sorted(map(sorted, KNOWN_CYCLES))


def _plant(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_a_planted_unmarked_function_level_import_is_caught(tmp_path):
    _plant(tmp_path, {
        "central/a.py": "import json\n\ndef f():\n    from central import b\n    return b\n",
        "central/b.py": "def g():\n    from central import a  # lazy: cycle a <-> b\n    return a\n",
        "central/c.py": "class C:\n    def m(self):\n        from json import (\n            dumps,  # lazy: optional\n        )\n",
        "central/d.py": "def h():\n    import json  # lazy:\n",
        "central/migrations/versions/x.py": "def upgrade():\n    import sqlalchemy\n",
    })
    found = lazy_import_violations(tmp_path)
    assert [f.split(":")[:2] for f in found] == [["central/a.py", "4"], ["central/d.py", "2"]], found


def test_a_planted_ledger_to_pay_import_is_caught(tmp_path):
    _plant(tmp_path, {
        "central/ledger/shifts.py": "from central.pay.watchmen import WatchShift\n",
        "central/ledger/cli.py": "from central.pay.cli import load_setup\n",
        "central/pay/watchmen.py": "from central.ledger.shifts import Shift\n",
    })
    found = ledger_pay_violations(tmp_path)
    assert len(found) == 1 and found[0].startswith("central/ledger/shifts.py:1:"), found


def test_a_planted_cycle_between_packages_is_caught(tmp_path):
    _plant(tmp_path, {
        "central/registry/api.py": "def f():\n    from central.rotation.service import day_entries\n",
        "central/rotation/service.py": "from central.registry.changes import audit\n",
        "central/rotation/cli.py": "from central.web import app\n",
        "central/web/app.py": "from central.rotation import cli\n",
        "central/config.py": "from central.registry import api\n",
    })
    assert package_cycles(tmp_path) == [{"central.registry", "central.rotation"}]
