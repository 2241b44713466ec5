"""The three screens an office page is looked at on, for the browser tests that take its screenshots
(issue 32's owed screenshots): the gate's 800x480 panel, a 390 px phone and a 1280 px desktop.

``looked_at(page, name, folder)`` saves a full-page screenshot ``<name>.png`` in ``folder`` (the
test's ``tmp_path``; ``PORTGATE_SHOTS`` names a folder to keep them in), then checks what a person
would see wrong: a page wider than the screen, a text cut by its box (an element whose content is
wider than itself with its overflow hidden or clipped), and axe's serious and critical
violations. Returns the screenshot's path."""

from __future__ import annotations

import os
from pathlib import Path

from testkit.axe import axe_violations, describe

SIZES = {"panel": {"width": 800, "height": 480}, "phone": {"width": 390, "height": 844},
         "desktop": {"width": 1280, "height": 800}}

#: the elements whose content is wider than their box and whose overflow hides it (cut text)
_CUT = """() => [...document.querySelectorAll('body *')].filter(e => {
  const s = getComputedStyle(e);
  return e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 1  // 1 px: visually hidden (.sr-only)
         && ['hidden', 'clip'].includes(s.overflowX) && s.textOverflow !== 'ellipsis';
}).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ': ' + e.textContent.trim().slice(0, 60))"""


def looked_at(page, name: str, folder: Path) -> Path:
    """Screenshot ``page`` as ``folder/<name>.png`` and assert it fits its viewport's width, cuts no
    text and has no serious or critical axe violation (office pages need a ``bypass_csp`` context)."""
    keep = os.environ.get("PORTGATE_SHOTS")
    target = Path(keep) if keep else folder
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    width = page.viewport_size["width"]
    wide = page.evaluate("() => document.documentElement.scrollWidth")
    assert wide <= width, f"{name}: the page is {wide} px wide on a {width} px screen ({page.url})"
    cut = page.evaluate(_CUT)
    assert cut == [], f"{name}: text cut by its box: {cut}"
    bad = axe_violations(page, impacts=("serious", "critical"))
    assert bad == [], f"{name}: {describe(bad)}"
    return path
