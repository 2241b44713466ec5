"""Benchmark: ``portgate registry import --workers`` (issue: 2,000 rows took 13 s, 10,000 36 s,
100,000 did not finish in 10 minutes) on SQLite, at several sizes, to see whether it grows faster
than the number of rows.

Each size imports a fresh workers.csv of new workers (each with a CPF, a PIS and a rotation
number, half ``vigia`` half ``estivador``) into an empty ledger file, all or nothing, through
``central.registry.store.import_files`` in one transaction as the command does. Baseline measured
in the same run: reading and parsing the same file (``portgate.records.load_csv_parts``), which an
import cannot do without. Figures: seconds per size and microseconds per row. ``--sizes`` picks
the sizes (default 1000,5000,20000,50000), ``--port itajai`` imports them to a second port (each
worker then moved with ``worker_ports.set_port``); ``--smoke``: 200 and 800. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy.orm import Session  # noqa: E402

from central import db  # noqa: E402
from central.registry.store import PortScope, import_files  # noqa: E402
from portgate.docbr import cpf_digits, pis_digits  # noqa: E402
from portgate.records import Worker, load_csv_parts  # noqa: E402

NOW = dt.datetime(2026, 12, 6, 12, 0, tzinfo=dt.UTC)
HEAD = "registration,name,category,status,health_exam_date,rotation_number,cpf,pis\n"


def write_workers(path: Path, n: int) -> None:
    """``n`` new workers, each with his own CPF, PIS and rotation number in his category."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write(HEAD)
        for i in range(1, n + 1):
            category = "vigia" if i % 2 else "estivador"
            fh.write(f"B{i:06d},Trabalhador {i},{category},active,2026-06-01,{i},"
                     f"{cpf_digits(f'{100000000 + i:09d}')},{pis_digits(f'{1000000000 + i:010d}')}\n")


def one(n: int, root: Path, port: str | None = None) -> dict:
    path = root / f"workers-{n}.csv"
    write_workers(path, n)
    start = time.perf_counter()
    load_csv_parts(path, Worker)
    parse_s = time.perf_counter() - start
    engine = db.make_engine(f"sqlite:///{root / f'ledger-{n}.db'}")
    db.load_all_tables().create_all(engine)
    start = time.perf_counter()
    with Session(engine) as session, session.begin():
        counts = import_files(session, workers_csv=path, actor="bench", now=NOW, port=port,
                              ports=PortScope(served=("santos", "itajai")))
    import_s = time.perf_counter() - start
    engine.dispose()
    assert counts["workers"] == n, counts
    return {"rows": n, "import_s": round(import_s, 3), "us_per_row": round(import_s / n * 1e6, 1),
            "parse_s": round(parse_s, 3)}


def main() -> None:
    from _cli import description, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--sizes", default="1000,5000,20000,50000")
    ap.add_argument("--port", default=None, help="the import's --port (itajai: every worker moves there)")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    sizes = [200, 800] if args.smoke else [int(s) for s in args.sizes.split(",")]
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            figures.append(one(n, Path(tmp), args.port))
            print(json.dumps(figures[-1]), flush=True)
    growth = figures[-1]["us_per_row"] / figures[0]["us_per_row"]
    print(json.dumps({"bench": "registry_import", "figures": {"sizes": figures,
                                                              "per_row_growth": round(growth, 2)},
                      "baseline": {"parse_s": figures[-1]["parse_s"]}}))


if __name__ == "__main__":
    main()
