"""The import direction between the project's packages (docs/architecture.md).

Every ``.py`` file of the product packages is parsed (``ast``) and each import is read, at module
level and inside functions alike, plus ``importlib.import_module("literal")``. An import may only
run down the layers: kernel ``portgate`` -> ``wire``, ``drivers`` -> ``edge``, ``central`` ->
``app``. Packages on the same floor never import each other (``edge`` and ``central``; ``wire`` and
``drivers``), nothing imports ``app``, and no product package imports the test kit (``testkit``) or
the tests.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LAYERS: dict[str, int] = {"portgate": 0, "wire": 1, "drivers": 1, "edge": 2, "central": 2, "app": 3}
TEST_ONLY = ("testkit", "tests")


@dataclasses.dataclass(frozen=True)
class Edge:
    """One import: file (relative to the root), line, importing package, imported module."""

    path: str
    line: int
    importer: str
    imported: str

    @property
    def target(self) -> str:
        return self.imported.split(".")[0]

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.importer} imports {self.imported}"


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute module a ``from`` import names (PEP 328 relative levels resolved)."""
    if level == 0:
        return name or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, name] if name else base)


def import_edges(root: Path, packages) -> list[Edge]:
    """Every import in every ``.py`` file under ``root/<package>`` for the given packages."""
    edges: list[Edge] = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            module = _module_name(root, path)
            is_package = path.name == "__init__.py"
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            rel = str(path.relative_to(root))
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [_absolute(module, is_package, node.level, node.module)]
                elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                      and isinstance(node.args[0].value, str)
                      and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                           or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__")))):
                    names = [node.args[0].value]
                edges += [Edge(rel, node.lineno, package, n) for n in names if n]
    return sorted(edges, key=lambda e: (e.path, e.line, e.imported))


def violations(edges: list[Edge]) -> list[str]:
    """The edges that break the layering, one line each (empty when the tree is sound)."""
    bad: list[str] = []
    for e in edges:
        if e.target in TEST_ONLY:
            bad.append(f"{e}: product code never imports the test kit or the tests")
        elif e.target in LAYERS and e.target != e.importer:
            if e.target == "app":
                bad.append(f"{e}: nothing imports app")
            elif LAYERS[e.target] >= LAYERS[e.importer]:
                bad.append(f"{e}: {e.target} is not below {e.importer}")
    return bad


def test_every_product_import_runs_down_the_layers():
    edges = import_edges(ROOT, LAYERS)
    assert violations(edges) == []


def test_the_walk_sees_the_real_imports():
    edges = import_edges(ROOT, LAYERS)
    seen = {(e.importer, e.target) for e in edges}
    # one known edge per floor, so an empty or broken walk cannot pass the test above
    for pair in [("wire", "portgate"), ("drivers", "portgate"), ("edge", "drivers"), ("edge", "wire"),
                 ("central", "wire"), ("app", "edge"), ("app", "central")]:
        assert pair in seen, pair
    # function-level imports are read too (app.demo.run starts the broker inside a function)
    assert any(e.path == "app/demo/run.py" and e.imported == "app.demo.mosquitto" for e in edges)


def _plant(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for package in LAYERS:
        (root / package).mkdir(exist_ok=True)
        (root / package / "__init__.py").touch()


@pytest.mark.parametrize("rel, text, why", [
    ("portgate/bad.py", "def f():\n    from edge.config import load_gate_config\n", "edge is not below portgate"),
    ("portgate/bad.py", "import drivers.metrics\n", "drivers is not below portgate"),
    ("edge/bad.py", "from central import metrics\n", "central is not below edge"),
    ("central/bad.py", "import edge.loop as loop\n", "edge is not below central"),
    ("wire/bad.py", "from drivers.base import CardRead\n", "drivers is not below wire"),
    ("drivers/bad.py", "from wire import events\n", "wire is not below drivers"),
    ("edge/bad.py", "from app.checkconfig import check_gate\n", "nothing imports app"),
    ("central/sub/bad.py", "from ...app import cli\n", "nothing imports app"),
    ("edge/bad.py", "from testkit.mosquitto import Mosquitto\n", "never imports the test kit"),
    ("drivers/bad.py", "class R:\n    def open(self):\n        import tests.conftest\n", "never imports the test kit"),
    ("central/bad.py", "import importlib\nimportlib.import_module('testkit.sink')\n", "never imports the test kit"),
])
def test_the_checker_catches_a_planted_bad_edge(tmp_path, rel, text, why):
    _plant(tmp_path, {rel: text})
    found = violations(import_edges(tmp_path, LAYERS))
    assert len(found) == 1 and why in found[0] and found[0].startswith(rel + ":"), found


def test_the_checker_lets_downward_and_own_package_imports_pass(tmp_path):
    _plant(tmp_path, {
        "app/cli.py": "import edge.cli\nfrom central import runner\nfrom portgate.errors import PortgateError\n",
        "edge/loop.py": "from . import metrics\nfrom .sync import service\nfrom drivers.base import Reader\n",
        "central/ingest/w.py": "from ..ledger import schema\nimport wire.events\nimport paho.mqtt.client\n",
        "wire/events.py": "from portgate.records import Tap\n",
    })
    edges = import_edges(tmp_path, LAYERS)
    assert {e.imported for e in edges} >= {"edge", "edge.sync", "central.ledger", "drivers.base", "paho.mqtt.client"}
    assert violations(edges) == []
