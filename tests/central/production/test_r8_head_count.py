"""RULES.md R8 as amended (DL 2.032 art. 6 sole paragraph; issue 31 item 8), through ``portgate
registry register / import / cancel / suspend``, ``portgate production import`` and ``portgate
rotation hours --semester`` on a real SQLite file: the semester average divides the semester's hours
by the mean of the month-end head counts of the stevedores registered at each month's end (not
today's count); a suspended stevedore counts, a cancelled one does not; one with no registration
date on file counts from the first month the ledger holds.

The registry (estivadores), semester 2026-1:

- S001, S002, S005, S006 registered on 2025-06-01 (admission records); S003 registered 2026-06-15;
  S004 imported with no admission record (no registration date);
- S005 cancelled on 2026-04-10; S006 suspended from 2026-12-01 (still registered).

The ledger: 200 stevedoring gangs of S001, S002, S004, S006, 360 min each, from 2026-02-02 (its first
month: February, so S004 counts from February's end): 200 x 4 x 6 h = 4,800 h in the semester.

Month-end head counts:  Jan 31: S001 S002 S005 S006 = 4 (S004 not yet: the ledger starts in Feb)
                        Feb 28, Mar 31: + S004 = 5
                        Apr 30, May 31: S005 cancelled on 04-10 -> 4
                        Jun 30: + S003 (06-15) = 5
Mean: (4 + 5 + 5 + 4 + 4 + 5) / 6 = 27 / 6 = 4.50.
Average: 4,800 h / 4.50 = 1,066.67 h > 1,000 -> "enlarge" (the registry is to be enlarged).
Today's count (not cancelled today: S001 S002 S003 S004 S006 = 5) gave 4,800 / 5 = 960 h -> "close":
the verdict flips.
"""

from __future__ import annotations

import datetime as dt
import json

from app.cli import main
from tests.central.registry.conftest import WORKER_COLUMNS, write_csv

ADM_COLUMNS = ("registration", "birth_date", "nationality", "registered_on", "vaccination",
               "vaccination_on", "fitness", "fitness_on", "criminal_record", "criminal_record_on",
               "military", "military_on")
CREW = ("S001", "S002", "S004", "S006")


def _worker(reg: str) -> dict:
    return dict(registration=reg, name=f"Estivador {reg}", category="estivador", status="active",
                suspended_from="", suspended_until="", health_exam_date="2026-02-01",
                booklet_revalidated_year="2026", rotation_number="")


def _admission(reg: str, on: str, docs_on: str) -> dict:
    row = dict(registration=reg, birth_date="1995-05-01", nationality="BR", registered_on=on)
    for doc in ("vaccination", "fitness", "criminal_record", "military"):
        row[doc], row[f"{doc}_on"] = f"doc-{doc}-{reg}", docs_on
    return row


def _ok(capsys, *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _ledger(tmp_path, capsys) -> str:
    url = f"sqlite:///{tmp_path / 'office.db'}"
    first = write_csv(tmp_path / "w1.csv", WORKER_COLUMNS, [_worker(r) for r in ("S001", "S002", "S005", "S006")])
    adm1 = write_csv(tmp_path / "a1.csv", ADM_COLUMNS,
                     [_admission(r, "2025-06-01", "2025-05-01") for r in ("S001", "S002", "S005", "S006")])
    _ok(capsys, "registry", "register", "--db", url, "--actor", "secretaria", "--workers", str(first),
        "--admissions", str(adm1))
    late = write_csv(tmp_path / "w2.csv", WORKER_COLUMNS, [_worker("S003")])
    adm2 = write_csv(tmp_path / "a2.csv", ADM_COLUMNS, [_admission("S003", "2026-06-15", "2026-06-01")])
    _ok(capsys, "registry", "register", "--db", url, "--actor", "secretaria", "--workers", str(late),
        "--admissions", str(adm2))
    undated = write_csv(tmp_path / "w3.csv", WORKER_COLUMNS, [_worker("S004")])
    _ok(capsys, "registry", "import", "--db", url, "--workers", str(undated))
    _ok(capsys, "registry", "cancel", "--db", url, "--actor", "secretaria", "S005", "--on", "2026-04-10",
        "--reason", "pediu o cancelamento", "--article", "DL 2.032 art. 5")
    _ok(capsys, "registry", "suspend", "--db", url, "--actor", "secretaria", "S006", "--from", "2026-12-01",
        "--days", "10", "--reason", "falta", "--article", "83.611 art. 21 a")

    gang, tally = ["gang_id,registration,role,minutes_worked,boarded"], [
        "gang_id,ship,date,period,cargo_class,quantity"]
    day = dt.date(2026, 2, 2)
    for n in range(200):  # two gangs a day, 07-13 and 19-01
        gid, period = f"G{n:03d}", ("07-13", "19-01")[n % 2]
        gang += [f"{gid},{reg},stevedore,360,yes" for reg in CREW]
        tally.append(f"{gid},9123456,{day.isoformat()},{period},general,10")
        day += dt.timedelta(days=n % 2)
    assert day <= dt.date(2026, 6, 30)
    (tmp_path / "gang.csv").write_text("\n".join(gang) + "\n", encoding="utf-8")
    (tmp_path / "tally.csv").write_text("\n".join(tally) + "\n", encoding="utf-8")
    (tmp_path / "tariffs.csv").write_text("cargo_class,unit,labour_tariff,effective_from\n"
                                          "general,t,4.50,2026-01-01\n", encoding="utf-8")
    _ok(capsys, "production", "import", "--db", url, "--rulebook", "dl-2032-1940", "--gang",
        str(tmp_path / "gang.csv"), "--tally", str(tmp_path / "tally.csv"), "--tariffs",
        str(tmp_path / "tariffs.csv"))
    return url


def test_r8_divides_by_the_mean_of_the_month_end_head_counts_and_the_verdict_flips(tmp_path, capsys):
    url = _ledger(tmp_path, capsys)
    report = json.loads(_ok(capsys, "rotation", "hours", "--db", url, "--semester", "2026-1"))
    assert report["total_hours"] == "4800.00"
    assert report["average_hours"] == "1066.67" and report["verdict"] == "enlarge"  # today's count: 960, close
    assert [(m["month"], m["month_end"], m["registered"]) for m in report["months"]] == [
        ("2026-01", "2026-01-31", 4), ("2026-02", "2026-02-28", 5), ("2026-03", "2026-03-31", 5),
        ("2026-04", "2026-04-30", 4), ("2026-05", "2026-05-31", 4), ("2026-06", "2026-06-30", 5)]
    assert report["registered"] == "4.50"
    assert "enlarge_by" not in report  # the figure and the verdict, not a number of places
