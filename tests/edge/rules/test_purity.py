"""The rules engine stays pure (STYLE.md 1): no drivers, databases, brokers or clock reads."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import edge.rules

RULES_DIR = Path(edge.rules.__file__).parent
FORBIDDEN = ("sqlalchemy", "paho", "serial", "smartcard", "sqlite3", "socket", "psycopg", "evdev")


def test_importing_the_engine_pulls_in_no_io_library():
    code = (
        "import json, sys\n"
        "import edge.rules.engine, edge.rules.coverage, edge.rules.pairing\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    bad = [m for m in loaded if m.split(".")[0] in FORBIDDEN]
    assert bad == []


def test_no_clock_or_environment_is_read_in_the_rules():
    offenders = []
    for path in sorted(RULES_DIR.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in {
                "now", "utcnow", "today", "time", "monotonic", "monotonic_ns", "time_ns", "environ", "getenv",
            }:
                offenders.append(f"{path.name}:{node.lineno}: .{node.attr}")
            if isinstance(node, ast.ImportFrom) and node.module in {"time", "os", "random"}:
                offenders.append(f"{path.name}:{node.lineno}: from {node.module}")
            if isinstance(node, ast.Import) and any(a.name in {"time", "os", "random"} for a in node.names):
                offenders.append(f"{path.name}:{node.lineno}: import")
    assert offenders == []


def test_datetime_now_is_never_called_while_deciding():
    """Swap ``datetime.datetime`` for a subclass whose now()/utcnow()/today() fail, then decide."""
    code = r"""
import datetime as dt
import time
from tests.edge.rules.conftest import Port, local
port = Port(words=False)  # the rules core alone: the words come from the catalogs at the edge
uid = port.worker("1001")
port.dispatch("1001")
class Trap(dt.datetime):
    @classmethod
    def now(cls, tz=None): raise AssertionError("datetime.now called")
    @classmethod
    def utcnow(cls): raise AssertionError("datetime.utcnow called")
    @classmethod
    def today(cls): raise AssertionError("datetime.today called")
dt.datetime = Trap
def trap(*a): raise AssertionError("time read")
time.time = time.monotonic = time.monotonic_ns = time.time_ns = trap
print(port.read(uid, local(7)).outcome, port.read(uid, local(13)).outcome, port.read("zz", local(8)).outcome)
"""
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["admit", "exit", "deny"]
