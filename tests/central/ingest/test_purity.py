"""The ingest's check and repair cores stay pure: no database, broker, file or clock."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import central.ingest

HERE = Path(central.ingest.__file__).parent
PURE = ("check", "repair")
FORBIDDEN = ("sqlalchemy", "paho", "sqlite3", "psycopg", "socket", "structlog")


def test_importing_the_cores_pulls_in_no_io_library():
    code = ("import json, sys\n" + "".join(f"import central.ingest.{m}\n" for m in PURE)
            + "print(json.dumps(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert [m for m in json.loads(out.stdout) if m.split(".")[0] in FORBIDDEN] == []


def test_no_clock_file_or_environment_is_read_in_the_cores():
    offenders = []
    for name in PURE:
        tree = ast.parse((HERE / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in {
                "now", "utcnow", "today", "time", "monotonic", "perf_counter", "environ", "getenv", "open",
                "read_text", "read_bytes", "stat",
            }:
                offenders.append(f"{name}.py:{node.lineno}: .{node.attr}")
            if isinstance(node, ast.Name) and node.id == "open":
                offenders.append(f"{name}.py:{node.lineno}: open")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                offenders += [f"{name}.py:{node.lineno}: import {m}" for m in mods if m in {"time", "os", "random"}]
    assert offenders == []
