"""A real browser for screen tests: Playwright for Python driving Debian's ``chromium``.

No browser is downloaded: Playwright's own browser builds are never installed here. The set-up
(``scripts/setup.sh``) installs the Debian ``chromium`` and ``chromium-headless-shell`` packages
(one source, one version: the same Blink, the same layout, fonts and accessibility tree) when run
as root and the ``playwright`` Python package with the test extras; :func:`chromium_path` finds the
executable: Debian's headless shell first (the browser without its desktop shell: about a quarter
less CPU a page for the same checks, docs/performance.md "CI time, the stop of 2026-12-08"), else
``chromium`` itself.

``launch_chromium()`` is a context manager yielding a Playwright ``Browser``; the flags keep a
headless Chromium from reaching out to the network (this machine has none) and from needing a
sandbox when run as root::

    with launch_chromium() as browser:
        page = browser.new_page()
        page.goto(url)

``BrowserUnavailable`` is raised when chromium or Playwright is missing: tests turn it into a
failure with the install line, never a silent skip (a screen that is not tested is not done).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from typing import Any

from portgate.errors import PortgateError

CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromium", "/usr/bin/chromium-browser")

CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


class BrowserUnavailable(PortgateError):
    """chromium or Playwright is not installed; the message says what to install."""


def chromium_path() -> str:
    """The Chromium executable: ``$PORTGATE_CHROMIUM`` if set, else Debian's headless shell
    (``chromium-headless-shell``), else Debian's ``/usr/bin/chromium``.

    Raises ``BrowserUnavailable`` naming the Debian package to install."""
    override = os.environ.get("PORTGATE_CHROMIUM")
    candidates = (override,) if override else CHROMIUM_CANDIDATES
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return path
    found = shutil.which("chromium")
    if found and not override:
        return found
    raise BrowserUnavailable(
        "chromium not found (install the Debian package: apt-get install chromium)"
    )


@contextlib.contextmanager
def launch_chromium(**launch_options: Any) -> Iterator[Any]:
    """Start headless Chromium under Playwright; yields a ``playwright.sync_api.Browser``.

    Extra keyword arguments go to ``chromium.launch`` (e.g. ``slow_mo``). The browser and the
    Playwright driver are closed on exit, also when the body raises."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # optional: only the screen tests need it
        raise BrowserUnavailable(
            "playwright is not installed (pip install -e '.[test]')"
        ) from exc
    executable = chromium_path()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=executable, headless=True, args=list(CHROMIUM_ARGS), **launch_options
        )
        try:
            yield browser
        finally:
            browser.close()
