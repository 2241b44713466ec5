"""File boundary of the inspection tools: read periods.csv and crew.csv (every bad row named by
file and line, nothing half-read) and write a set of output files atomically (all or nothing)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from central.inspection.crew_share import CREW_COLUMNS, CREW_REQUIRED, CrewMember, check_unique
from central.inspection.work_periods import PERIOD_COLUMNS, REQUIRED_COLUMNS, WorkPeriod
from portgate.errors import BadInput
from portgate.gctune import paused
from portgate.records import build_cells, build_rows
from portgate.tables import iter_cells, iter_rows, one_line

R = TypeVar("R")


def _read(
    path: Path, required: tuple[str, ...], known: tuple[str, ...],
    build: Callable[[Mapping[str, str], str], R],
) -> list[R]:
    # streamed: each row is built as it is read, not held as a dict until the file ends (a year's
    # periods.csv is 31,000 rows); a CSV fault still raises as soon as it is met
    return build_rows(iter_rows(path, required, known=known), build)


@paused()
def read_periods(path: str | Path) -> list[WorkPeriod]:
    """Read periods.csv (columns ``work_periods.PERIOD_COLUMNS``). Raises one ``BadInput`` listing
    every bad row as ``periods.csv:LINE: reason`` (a header column outside ``PERIOD_COLUMNS``:
    ``periods.csv:1``); overlaps are checked by ``compute_book``.
    Streamed as cells in ``PERIOD_COLUMNS`` order (no dict per row: a year is 31,000 rows)."""
    return build_cells(
        iter_cells(Path(path), PERIOD_COLUMNS, REQUIRED_COLUMNS, known=PERIOD_COLUMNS),
        WorkPeriod.from_cells,
    )


def read_crew(path: str | Path) -> list[CrewMember]:
    """Read crew.csv (``crew_share.CREW_COLUMNS``). Raises ``BadInput`` naming every bad row and
    any crew_id listed twice (``crew.csv:LINE``)."""
    path = Path(path)
    wheres: list[str] = []

    def build(row: Mapping[str, str], where: str) -> CrewMember:
        member = CrewMember.from_row(row)
        wheres.append(where)
        return member

    crew = _read(path, CREW_REQUIRED, CREW_COLUMNS, build)
    check_unique(crew, wheres)
    return crew


def write_all(out_dir: str | Path, files: Mapping[str, str]) -> list[Path]:
    """Write ``files`` (name -> text) into ``out_dir`` all or nothing.

    Files are written to a temporary directory next to ``out_dir`` and moved in only when all are
    written; if ``out_dir`` does not exist the whole temporary directory is renamed to it. A failure
    leaves no output file behind and raises ``BadInput`` naming the output as the user gave it
    (``cannot write the output 'books/overtime_book.csv': Is a directory``), never the temporary
    directory. Returns the written paths (``out_dir`` / name).
    """
    out = Path(out_dir)
    parent = out.parent if str(out.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    except OSError as exc:
        raise _cannot_write(out, exc) from exc
    target = out
    try:
        for name, text in files.items():
            target = out / name
            with (tmp / name).open("w", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        if not out.exists():
            target = out
            tmp.rename(out)
        else:
            for name in files:
                target = out / name
                os.replace(tmp / name, target)
            target = out
            tmp.rmdir()
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _cannot_write(target, exc) from exc
    return [out / name for name in files]


def _cannot_write(target: Path, exc: OSError) -> BadInput:
    """The refusal of an output that cannot be written: ``target`` as the user named it (the
    temporary directory's name is no use to him) and the system's reason without file names."""
    return BadInput(f"cannot write the output {one_line(str(target))!r}: {exc.strerror or type(exc).__name__}")
