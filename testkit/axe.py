"""axe-core in a real page: accessibility checks for the browser tests.

axe-core comes from npm at the version pinned in ``tools/node/package-lock.json`` (the set-up runs
``npm ci`` there; no CDN, nothing downloaded by a test). ``axe_violations(page)`` injects
``tools/node/node_modules/axe-core/axe.min.js`` into a Playwright page (sync API), runs
``axe.run`` on the whole document and returns the violations as axe reports them (a list of dicts
with ``id``, ``impact``, ``help``, ``nodes`` ...)::

    from testkit.axe import axe_violations, describe

    bad = axe_violations(page)                                  # every violation
    bad = axe_violations(page, impacts=("serious", "critical"))  # only those impacts
    assert bad == [], describe(bad)

``AxeUnavailable`` (a ``PortgateError``) is raised when the file is missing: tests fail with the
command that installs it, never skip.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from portgate.errors import PortgateError

AXE_JS = Path(__file__).resolve().parents[1] / "tools" / "node" / "node_modules" / "axe-core" / "axe.min.js"
IMPACTS = ("minor", "moderate", "serious", "critical")


class AxeUnavailable(PortgateError):
    """axe-core is not installed under tools/node; the message says how to install it."""


def axe_source() -> str:
    """The text of ``axe.min.js``. Raises ``AxeUnavailable`` naming the install command."""
    try:
        return AXE_JS.read_text(encoding="utf-8")
    except OSError as exc:
        raise AxeUnavailable(f"{AXE_JS} missing: run `cd tools/node && npm ci --ignore-scripts` "
                             "(or scripts/setup.sh)") from exc


def axe_violations(page: Any, *, impacts: Iterable[str] = IMPACTS, context: str | None = None,
                   disable: Iterable[str] = ()) -> list[dict]:
    """Run axe-core on ``page`` (a ``playwright.sync_api.Page``, loaded) and return its violations
    whose impact is in ``impacts``. ``context``: a CSS selector to check instead of the whole
    document; ``disable``: axe rule ids not to run (say why at the call site). The script is added
    to the page once (``window.axe`` kept for later calls)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=axe_source())
    result = page.evaluate(
        """async ([context, disable]) => {
            const rules = {};
            for (const id of disable) rules[id] = {enabled: false};
            return await window.axe.run(context || document, {rules, resultTypes: ['violations']});
        }""",
        [context, list(disable)],
    )
    wanted = set(impacts)
    return [v for v in result["violations"] if v.get("impact") in wanted]


def describe(violations: list[dict]) -> str:
    """One line per violation and node (rule id, impact, help, the node's selector), for an
    assertion message."""
    lines = []
    for v in violations:
        for node in v.get("nodes", [])[:5]:
            lines.append(f"{v['id']} ({v.get('impact')}): {v.get('help')} at {node.get('target')}")
    return "\n".join(lines) or "no violations"
