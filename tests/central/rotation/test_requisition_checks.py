"""DL 2.032 art. 9 (requisition made the day before, with ship, cargo, holds, place and start time)
and art. 13 / DL 3.844 art. 3 (gang composition table), through ``portgate rotation dispatch`` and
``portgate production pay|import``: flags printed with the dispatch, kept on the audit log, and on
the gang's statement."""

from __future__ import annotations

import json
import shutil

from sqlalchemy import select

from app.cli import main
from central import db
from central.production.composition import load_composition, composition_problem
from central.production.schema import production_inputs
from central.registry.schema import audit_log
from tests.central.registry.conftest import REQ_COLUMNS, WORKER_COLUMNS, req_row, write_csv
from tests.central.production.conftest import EXAMPLES

# the office's clock for the rotation commands (--at): the evening before 2026-03-10, when none of
# its periods has ended (the machine's date is later: a past escala is refused)
AT = "2026-03-09T21:00:00+00:00"

EXTRA = ("made_at", "cargo", "holds", "place", "start_time", "unit", "units")


def _stevedores(tmp_path, db_url, n=12):
    rows = [dict(registration=f"E{i:03d}", name=f"Estivador {i}", category="estivador", status="active",
                 suspended_from="", suspended_until="", health_exam_date="2026-01-15",
                 booklet_revalidated_year="2026", rotation_number=str(i)) for i in range(1, n + 1)]
    write_csv(tmp_path / "w.csv", WORKER_COLUMNS, rows)
    assert main(["registry", "import", "--db", db_url, "--workers", str(tmp_path / "w.csv"), "--actor", "s"]) == 0


def _req(ref, function, workers, **extra):
    row = req_row(ref, function=function, workers=str(workers), post="porao1") | {"category": "estivador"}
    full = dict(made_at="2026-03-09T16:00:00-03:00", cargo="300 t sacaria de café", holds="1",
                place="armazém 12, ao cais", start_time="07:00", unit="hold", units="1")
    return row | full | extra


def _dispatch(tmp_path, db_url, rows, capsys):
    path = write_csv(tmp_path / "req.csv", (*REQ_COLUMNS, "category", *EXTRA), rows)
    capsys.readouterr()
    code = main(["rotation", "dispatch", "--at", AT, "--date", "2026-03-10", "--requisitions", str(path),
                 "--db", db_url, "--actor", "despacho"])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


def test_a_complete_requisition_of_a_table_gang_has_no_flags(tmp_path, db_url, capsys):
    _stevedores(tmp_path, db_url)
    out = _dispatch(tmp_path, db_url, [_req("A1", "estivador", 8), _req("A2", "contramestre", 1)], capsys)
    assert out["flags"] == [] and out["dispatched"] == 9


def test_late_incomplete_and_off_table_requisitions_are_flagged_and_audited(tmp_path, db_url, capsys):
    _stevedores(tmp_path, db_url)
    rows = [_req("A1", "estivador", 6, made_at="2026-03-10T06:30:00-03:00", cargo="", place=""),
            _req("A2", "contramestre", 1, start_time="", holds="")]
    out = _dispatch(tmp_path, db_url, rows, capsys)
    flags = {(f["ref"], f["flag"]): f for f in out["flags"]}
    assert flags[("A1", "INCOMPLETE_REQUISITION")]["detail"] == "missing: cargo, place"
    assert flags[("A1", "INCOMPLETE_REQUISITION")]["article"] == "DL 2.032 art. 9 b"
    assert flags[("A1", "LATE_REQUISITION")]["article"] == "DL 2.032 art. 9 a"
    assert "not the day before 2026-03-10" in flags[("A1", "LATE_REQUISITION")]["detail"]
    assert flags[("A2", "INCOMPLETE_REQUISITION")]["detail"] == "missing: start_time, holds"
    gang = flags[("A1, A2", "GANG_COMPOSITION")]
    assert gang["article"] == "DL 2.032 art. 13, §1"
    assert gang["detail"] == ("9123456 2026-03-10 07-13 porao1: 1 × hold asks hatch_foreman 1, stevedore 8; "
                              "the gang has hatch_foreman 1, stevedore 6 (DL 2.032 art. 13, §1)")
    engine = db.make_engine(db_url)
    with engine.connect() as conn:
        kept = conn.execute(select(audit_log.c.detail).where(
            audit_log.c.action == "rotation.requisition-flags")).scalar_one()
    engine.dispose()
    assert len(kept["flags"]) == 4


def test_watchmen_requisitions_are_not_checked_against_art_9(tmp_path, db_url, capsys):
    _stevedores(tmp_path, db_url, 1)
    row = req_row("V1") | {"category": "vigia"} | {k: "" for k in EXTRA}
    assert _dispatch(tmp_path, db_url, [row], capsys)["flags"] == []


def test_composition_problem_by_hand():
    table = load_composition()
    assert composition_problem(table, "hold", 2, ["stevedore"] * 16 + ["hatch_foreman"] * 2) is None
    assert composition_problem(table, "auxiliary", 1, ["stevedore"] * 4 + ["hatch_foreman"]) == (
        "GANG_COMPOSITION: 1 × auxiliary asks stevedore 4; the gang has hatch_foreman 1, stevedore 4 "
        "(DL 2.032 art. 13, §2)")
    assert "unit 'barge' is not in the composition table" in composition_problem(table, "barge", 1, [])


def test_the_gang_statement_carries_the_composition_flag(tmp_path, capsys):
    for name in ("gang.csv", "tariffs.csv"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    tally = (EXAMPLES / "tally.csv").read_text(encoding="utf-8").splitlines()
    tally = [tally[0] + ",unit,units"] + [line + ",hold,1" for line in tally[1:]]
    (tmp_path / "tally.csv").write_text("\n".join(tally) + "\n", encoding="utf-8")
    args = ["--rulebook", "dl-2032-1940", "--gang", str(tmp_path / "gang.csv"), "--tally",
            str(tmp_path / "tally.csv"), "--tariffs", str(tmp_path / "tariffs.csv")]
    assert main(["production", "pay", *args]) == 0
    gangs = json.loads(capsys.readouterr().out)["gangs"]
    assert all(g["summary"]["flags"][0].startswith("GANG_COMPOSITION: 1 × hold asks hatch_foreman 1, stevedore 8")
               for g in gangs)
    url = f"sqlite:///{tmp_path / 'l.db'}"
    assert main(["ledger", "migrate", "--db", url]) == 0  # production import needs an existing ledger
    assert main(["production", "import", "--db", url, *args]) == 0
    engine = db.make_engine(url)
    with engine.connect() as conn:
        kept = conn.execute(select(production_inputs.c.what).where(production_inputs.c.kind == "flag")).scalars().all()
    engine.dispose()
    assert kept and set(kept) == {"GANG_COMPOSITION"}
