"""Modules and functions past the size guide (docs/architecture.md "Sizes"), product code only:

    .venv/bin/python scripts/size_report.py            # counts and the lists, largest first
    .venv/bin/python scripts/size_report.py --top 10   # the ten largest of each

Counts the product packages (``portgate``, ``wire``, ``drivers``, ``edge``, ``central``, ``app``),
the Alembic migrations (``*/migrations/``) aside. A module is over the guide past 400 lines (all
lines, as ``wc -l`` counts them); a function or method past 50 lines, from its ``def`` (or its
first decorator) to its last line, nested functions counted on their own as well as inside their
parent. A file that does not parse is reported and stops the run with status 1.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("portgate", "wire", "drivers", "edge", "central", "app")
MODULE_LIMIT = 400
FUNCTION_LIMIT = 50


@dataclass(frozen=True)
class Sized:
    """One module or function and its length in lines."""

    name: str
    lines: int


def product_files(root: Path) -> list[Path]:
    """Every ``.py`` file of the product packages under ``root``, the migrations aside."""
    files: list[Path] = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" not in path.relative_to(root).parts:
                files.append(path)
    return files


def long_functions(path: Path, relative: str) -> list[Sized]:
    """Functions and methods of one module, named ``file:Class.function``, with their lengths."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Sized] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                found.append(Sized(f"{relative}:{prefix}{child.name}", child.end_lineno - first + 1))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def measure(root: Path) -> tuple[list[Sized], list[Sized]]:
    """(modules, functions) of the product code, each largest first; raises SyntaxError."""
    modules: list[Sized] = []
    functions: list[Sized] = []
    for path in product_files(root):
        relative = path.relative_to(root).as_posix()
        with path.open("rb") as handle:
            modules.append(Sized(relative, sum(1 for _ in handle)))
        functions.extend(long_functions(path, relative))
    modules.sort(key=lambda s: (-s.lines, s.name))
    functions.sort(key=lambda s: (-s.lines, s.name))
    return modules, functions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=0, help="list only the N largest of each (0: all)")
    args = parser.parse_args(argv)
    try:
        modules, functions = measure(ROOT)
    except SyntaxError as exc:
        print(f"size_report: cannot parse {exc.filename}:{exc.lineno}: {exc.msg}", file=sys.stderr)
        return 1
    big_modules = [m for m in modules if m.lines > MODULE_LIMIT]
    long_ones = [f for f in functions if f.lines > FUNCTION_LIMIT]
    print(f"modules over {MODULE_LIMIT} lines: {len(big_modules)} (of {len(modules)})")
    print(f"functions over {FUNCTION_LIMIT} lines: {len(long_ones)} (of {len(functions)})")
    for title, rows in (("modules", big_modules), ("functions", long_ones)):
        shown = rows[: args.top] if args.top else rows
        print(f"\n{title}:")
        for row in shown:
            print(f"  {row.lines:5d}  {row.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
