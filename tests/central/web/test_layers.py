"""Layers point one way: the office web application and the services it calls import no gate code
(edge, drivers) and never the test kit; the vendored static files carry their version and licence."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MODULES = [*sorted((ROOT / "central" / "web").rglob("*.py")), *sorted((ROOT / "central" / "calls").glob("*.py")),
           ROOT / "central" / "registry" / "cases.py", ROOT / "central" / "ingest" / "status.py"]
FORBIDDEN = ("edge", "drivers", "testkit", "app.demo")


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_web_application_imports_no_gate_code_and_no_test_kit():
    assert len(MODULES) > 10
    for path in MODULES:
        bad = {n for n in _imports(path) if n.split(".")[0] in ("edge", "drivers") or n.startswith(FORBIDDEN[2:])}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_vendored_static_files_carry_version_and_licence():
    vendor = ROOT / "central" / "web" / "static" / "vendor"
    versions = (vendor / "VERSIONS.txt").read_text()
    for name, package, version, licence in (("htmx-2.0.11.min.js", "htmx.org", "2.0.11", "LICENSE.htmx"),
                                            ("htmx-ext-sse-2.2.4.min.js", "htmx-ext-sse", "2.2.4",
                                             "LICENSE.htmx-ext-sse")):
        assert (vendor / name).stat().st_size > 1000
        assert "BSD" in (vendor / licence).read_text()
        assert f"{package} {version}" in versions and licence in versions
    base = (ROOT / "central" / "web" / "templates" / "base.html").read_text()
    assert "/static/vendor/htmx-2.0.11.min.js" in base and "/static/vendor/htmx-ext-sse-2.2.4.min.js" in base
