"""The pay engine stays pure (STYLE.md 1), by the same three checks as the gate rules
(tests/edge/rules/test_purity.py): importing it pulls in no I/O library, its source reads no clock,
environment or file, and paying a month of shifts calls no clock and opens no file.

Engine modules: ``central.pay.watchmen`` (P1-P7), ``rulebook`` (types), ``calendar`` (holidays as
data), ``lines`` (money), ``cents`` (integer centavos), ``billing`` (P8). The files, the port TOML
and the ``holidays`` package are read by ``central.pay.loading`` at the edge.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import central.pay

PAY_DIR = Path(central.pay.__file__).parent
ENGINE = ("watchmen", "rulebook", "calendar", "lines", "cents", "billing")
FORBIDDEN = ("sqlalchemy", "paho", "serial", "smartcard", "sqlite3", "socket", "psycopg", "evdev",
             "holidays")
ROOT = Path(__file__).resolve().parents[3]


def test_importing_the_engine_pulls_in_no_io_library():
    code = (
        "import json, sys\n"
        + "".join(f"import central.pay.{name}\n" for name in ENGINE)
        + "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT)
    loaded = json.loads(out.stdout)
    assert [m for m in loaded if m.split(".")[0] in FORBIDDEN] == []


CLOCK_OR_ENV = {"now", "utcnow", "today", "time", "monotonic", "monotonic_ns", "time_ns", "environ",
                "getenv"}
FILE_CALLS = {"open", "read_text", "read_bytes", "write_text", "write_bytes", "Path", "loads", "load"}
IO_MODULES = {"time", "os", "random", "pathlib", "io", "csv", "tomllib", "socket", "sqlite3",
              "holidays", "shutil", "tempfile"}


def offences(source: str, name: str) -> list[str]:
    """What in ``source`` reads a clock, the environment or a file, or imports an I/O module."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in CLOCK_OR_ENV and not (
                node.attr == "time" and isinstance(node.value, ast.Name) and node.value.id == "dt"):
            # ``dt.time`` is the time-of-day type (``dt.time(0)``), not a clock
            found.append(f"{name}:{node.lineno}: .{node.attr}")
        if isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in FILE_CALLS:
                found.append(f"{name}:{node.lineno}: {called}()")
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in IO_MODULES:
            found.append(f"{name}:{node.lineno}: from {node.module}")
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in IO_MODULES for a in node.names):
            found.append(f"{name}:{node.lineno}: import")
    return found


def test_no_clock_environment_or_file_is_read_in_the_engine():
    found = []
    for name in ENGINE:
        path = PAY_DIR / f"{name}.py"
        found += offences(path.read_text(encoding="utf-8"), path.name)
    assert found == []


def test_the_source_check_catches_each_kind_of_offence():
    """The check above cannot pass vacuously: each forbidden form is reported."""
    sample = ("import time\nfrom pathlib import Path\nimport datetime as dt\n"
              "a = dt.datetime.now()\nb = open('x')\nc = Path('y').read_text()\n"
              "d = dt.time(0)\ne = time.time()\n")
    got = offences(sample, "s.py")
    assert ["s.py:1: import", "s.py:2: from pathlib"] == sorted(g for g in got if "import" in g
                                                                  or "from" in g)
    assert {"s.py:4: .now", "s.py:5: open()", "s.py:6: read_text()", "s.py:6: Path()",
            "s.py:8: .time"} <= set(got)
    assert not [g for g in got if g.startswith("s.py:7:")]


def test_paying_calls_no_clock_and_opens_no_file():
    """Build the set-up at the edge, then trap the clocks and ``open`` and pay: RULES.md worked
    example 2 (vigia chefe, period 19-01 from Sunday 2026-03-15, anchored, exit 02:30) still gives R$ 696.60."""
    code = r"""
import builtins, datetime as dt, io, time
from zoneinfo import ZoneInfo
from central.pay.loading import holiday_calendar, load_rulebook
from central.pay.watchmen import ShiftPayer, WatchShift
book = load_rulebook("config/rulebooks/decreto-83611-1979.toml")
cal = holiday_calendar("SP")
Z = ZoneInfo("America/Sao_Paulo")
start = dt.datetime(2026, 3, 15, 19, tzinfo=Z)
end = dt.datetime(2026, 3, 16, 1, tzinfo=Z)
shift = WatchShift("s1", "100", "vigia_chefe", "9300001", "anchored", start, end, start,
                   end + dt.timedelta(minutes=90))
class Trap(dt.datetime):
    @classmethod
    def now(cls, tz=None): raise AssertionError("datetime.now called")
    @classmethod
    def utcnow(cls): raise AssertionError("datetime.utcnow called")
    @classmethod
    def today(cls): raise AssertionError("datetime.today called")
dt.datetime = Trap
def trap(*a, **k): raise AssertionError("clock or file read")
time.time = time.monotonic = time.monotonic_ns = time.time_ns = trap
builtins.open = io.open = trap
statement = ShiftPayer(book, cal).pay(shift)
print(statement.total, " ".join(f"{l.rule}={l.amount}" for l in statement.lines))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    total, *lines = out.stdout.split()
    assert total == "696.60"
    assert lines == ["P1=270.00", "P2=108.00", "P3=67.50", "P4=135.00", "P7=116.10"]
