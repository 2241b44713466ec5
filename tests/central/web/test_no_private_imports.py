"""No module of ``central/web`` takes another module's private names (``_name``), and no module
takes a private name of ``central.web``: a helper one module lends to another is public (named
without the underscore), so renaming or changing a private helper never breaks a module it does
not know about (the live panel took ``render._local_time`` and ``render._once``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _private_uses(path: Path) -> list[str]:
    """``module:line name`` for each private name ``path`` imports from a ``central`` module (only
    those of ``central.web`` outside ``central/web``) or reads off such an imported module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside = "central/web/" in path.relative_to(ROOT).as_posix()
    found, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("central"):
            for alias in node.names:
                modules.add(alias.asname or alias.name)
                if alias.name.startswith("_") and (inside or node.module.startswith("central.web")):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.module}.{alias.name}")
    if inside:
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in modules and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value.id}.{node.attr}")
    return found


def test_no_module_takes_a_private_name_of_central_web_or_central_web_another_s():
    found = [use for path in sorted((ROOT / "central").rglob("*.py")) for use in _private_uses(path)]
    assert found == []


def test_the_check_sees_a_private_import_and_a_private_attribute(tmp_path, monkeypatch):
    web = ROOT / "central" / "web" / "routes" / "live.py"  # a real module's place, another text
    text = ("from central.web.render import _local_time\nfrom central.web import users\n"
            "users._hasher\n")
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: text)
    assert _private_uses(web) == ["central/web/routes/live.py:1 central.web.render._local_time",
                                  "central/web/routes/live.py:3 users._hasher"]
