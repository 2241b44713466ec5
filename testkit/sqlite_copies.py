"""SQLite ledgers made once per process and copied for each test (issue 32: a test's own ledger
without its set-up's seconds).

``copy_made_once(name, make, target)`` calls ``make(path)`` the first time this process asks for
``name`` (a new file in a temporary directory of its own, removed when the process exits), then
copies that file to ``target`` with ``sqlite3``'s backup: the same tables and rows, a file of the
test's own. The migrations (``central.ledger.migrate.upgrade``) or ``create_all`` of every table take
0.4-4 s each under load; a copy takes milliseconds. tests/central's ``migrated_sqlite`` does the same
for the tests under tests/central with a session fixture; this is for helpers that are plain
functions or classes (tests/ops' ``central_toml``, the ingest tests' ``Office``).

Errors: whatever ``make`` raises (nothing is kept then: the next call tries again); ``sqlite3.Error``
if ``target``'s folder does not exist or ``target`` is not a new file's path.
"""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

_MADE: dict[str, Path] = {}  # name -> the file made once in this process


def copy_made_once(name: str, make: Callable[[Path], None], target: Path) -> None:
    """Make ``target`` a copy of the SQLite file ``make`` builds once per process under ``name``."""
    if name not in _MADE:
        folder = Path(tempfile.mkdtemp(prefix=f"portgate-{name}-"))
        atexit.register(shutil.rmtree, folder, True)
        made = folder / "ledger.db"
        make(made)
        _MADE[name] = made
    with closing(sqlite3.connect(_MADE[name])) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


__all__ = ["copy_made_once"]
