"""The import writes its new workers in batches (``central.registry.import_writes``, the import of
100,000 rows that did not finish): the rows are the ones the one-worker path
(``save_with_history`` then ``ids.set_ids``) writes, on a real SQLite file, and a worker moved to
another port by the same import takes his audit entries with him (``audit_ports.follow``). The
benchmark (bench/registry_import.py) runs in smoke mode and prints its JSON line."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from central.audit import audit_log
from central.registry import ids as worker_ids
from central.registry.schema import booklet_revalidations, downlink_changes, health_exams, workers
from central.registry.store import PortScope, import_files, save_with_history
from portgate.records import Worker, load_csv_rows

ROOT = Path(__file__).resolve().parents[3]
NOW = dt.datetime(2026, 12, 6, 12, 0, tzinfo=dt.UTC)
CSV = ("registration,name,category,status,health_exam_date,booklet_revalidated_year,rotation_number,cpf,pis\n"
       "N001,Novo Um,vigia,active,2026-06-01,,101,529.982.247-25,\n"
       "N002,Novo Dois,estivador,active,2026-06-02,2026,7,,170.33259.50-4\n"
       "N003,Novo Três,vigia,active,,,,,\n")


def _written(session: Session) -> dict:
    """What the registry holds after the import, without ids and clocks."""
    return {
        "workers": sorted(tuple(r) for r in session.execute(select(
            workers.c.registration, workers.c.name, workers.c.category, workers.c.status, workers.c.rotation_number,
            workers.c.health_exam_date, workers.c.booklet_revalidated_year, workers.c.cpf, workers.c.pis,
            workers.c.name_folded, workers.c.port))),
        "audit": sorted((r.action, r.subject, json.dumps(r.detail, sort_keys=True), r.port, r.actor)
                        for r in session.execute(select(audit_log))),
        "changes": sorted((r.kind, r.op, r.key, json.dumps(r.body, sort_keys=True), r.port, r.actor)
                          for r in session.execute(select(downlink_changes))),
        "exams": sorted(tuple(r) for r in session.execute(select(health_exams.c.registration, health_exams.c.exam_date))),
        "years": sorted(tuple(r) for r in session.execute(select(booklet_revalidations.c.registration,
                                                                 booklet_revalidations.c.year))),
    }


def test_the_batched_import_writes_what_the_one_worker_path_writes(engine, tmp_path):
    path = tmp_path / "workers.csv"
    path.write_text(CSV, encoding="utf-8")
    with Session(engine) as s, s.begin():
        counts = import_files(s, workers_csv=path, actor="t", now=NOW)
    assert counts == {"workers": 3, "cards": 0, "unchanged": 0}
    with Session(engine) as s:
        batched = _written(s)
    from central import db

    other = db.make_engine(f"sqlite:///{tmp_path / 'one-by-one.db'}")
    db.load_all_tables().create_all(other)
    given = worker_ids.csv_ids(path)
    with Session(other) as s, s.begin():
        for _where, worker in load_csv_rows(path, Worker):
            save_with_history(s, worker, actor="t", now=NOW, action="worker.import")
            if worker.registration in given:
                worker_ids.set_ids(s, worker.registration, given[worker.registration], actor="t", now=NOW)
    with Session(other) as s:
        one_by_one = _written(s)
    other.dispose()
    assert batched == one_by_one
    assert ("N001", "52998224725", None) in {(w[0], w[7], w[8]) for w in batched["workers"]}
    assert len(batched["audit"]) == 5 and batched["years"] == [("N002", 2026)]


def test_new_workers_moved_by_the_same_import_take_their_audit_entries_to_their_port(engine, tmp_path):
    path = tmp_path / "workers.csv"
    path.write_text(CSV, encoding="utf-8")
    with Session(engine) as s, s.begin():
        import_files(s, workers_csv=path, actor="t", now=NOW, port="itajai",
                     ports=PortScope(served=("santos", "itajai")))
    with Session(engine) as s:
        ports = {(r.action, r.subject): r.port for r in s.execute(select(audit_log))}
    assert ports[("worker.import", "N001")] == ports[("worker.ids", "N001")] == "itajai"
    assert ports[("worker.import", "N003")] == ports[("worker.port", "N003")] == "itajai"


def test_the_import_bench_smoke_prints_its_json_line():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "registry_import.py"), "--smoke"],
                         capture_output=True, text=True, check=True, cwd=ROOT, timeout=600).stdout
    last = json.loads(out.strip().splitlines()[-1])
    assert last["bench"] == "registry_import"
    assert [f["rows"] for f in last["figures"]["sizes"]] == [200, 800] and last["baseline"]["parse_s"] > 0
