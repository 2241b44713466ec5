"""The inspection cores are pure (STYLE.md 1): importing them pulls in no database, CLI or network
library, and they never read the clock."""

from __future__ import annotations

import pathlib
import subprocess
import sys

CORES = ["crew_hours", "work_periods", "hours_book", "crew_share", "aboard", "checklist", "book_render"]


def test_cores_import_no_io_library():
    code = (
        "import sys\n"
        + "".join(f"import central.inspection.{m}\n" for m in CORES)
        + "libs = ('sqlalchemy', 'click', 'paho', 'smartcard', 'serial')\n"
        + "bad = [m for m in libs if m in sys.modules]\n"
        + "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cores_never_read_the_clock():
    root = pathlib.Path(__file__).resolve().parents[3] / "central" / "inspection"
    for name in CORES:
        text = (root / f"{name}.py").read_text(encoding="utf-8")
        for call in ("datetime.now", "dt.datetime.now", "date.today", "time.time(", "utcnow"):
            assert call not in text, f"{name}.py calls {call}"
