"""The screen's page templates (``templates/``: Jinja2, autoescaped), compiled once per process.

``portgate edge display`` (``edge.cli``) compiles them first, before the web stack and the screen's
modules are imported: compiling four small templates allocates about 1.5 MB for a moment (the
generated module's Python AST) and keeps 0.2 MB; done first, the imports that follow reuse that
memory, where done at the first page request it left it free on top of everything else (the
display's peak RSS, DESIGN.md <= 40 MB; docs/performance.md, "The display's peak RSS, third pass").
The templates take every value from the render call (no per-screen globals), so one environment
serves every ``Display`` of a process.
"""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).resolve().parent / "templates"
NAMES = ("page.html", "_now.html", "_status.html", "_person.html")


@functools.cache
def environment() -> jinja2.Environment:
    """The screen's Jinja2 environment with ``NAMES`` compiled. Raises ``jinja2.TemplateError``
    for a broken template (a packaging fault)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True,
                             lstrip_blocks=True)
    for name in NAMES:
        env.get_template(name)
    return env
