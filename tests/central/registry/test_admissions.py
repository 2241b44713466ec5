"""Admission conditions at registration, through ``portgate registry register`` on a real SQLite
file: each refusal names the row and the article (83.611 art. 15 a-e; DL 2.032 art. 5 §1 1-5, §2,
§3), nothing is written; the evidence and an audit row are kept; ``registry admissions`` reports the
foreigners' share of the stevedore registry."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from app.cli import main
from central import db
from central.registry.admission import Admission, Evidence, admission_problems, age_on
from central.registry.admission_store import admissions
from central.registry.schema import audit_log, workers
from tests.central.registry.conftest import WORKER_COLUMNS, write_csv

import datetime as dt

ADM_COLUMNS = ("registration", "birth_date", "nationality", "registered_on",
               "vision", "vision_on", "police_record", "police_record_on", "military", "military_on",
               "electoral", "electoral_on", "vaccination", "vaccination_on", "fitness", "fitness_on",
               "criminal_record", "criminal_record_on", "legal_stay", "legal_stay_on")
WATCH_DOCS = ("vision", "police_record", "military", "electoral")
STEVE_DOCS = ("vaccination", "fitness", "criminal_record", "military")


def wrow(reg, category):
    return dict(registration=reg, name=f"Nome {reg}", category=category, status="active",
                suspended_from="", suspended_until="", health_exam_date="2026-02-01",
                booklet_revalidated_year="2026", rotation_number="")


def arow(reg, docs, *, born="1990-05-01", nationality="BR", on="2026-03-01", doc_date="2026-02-10", drop=()):
    row = dict(registration=reg, birth_date=born, nationality=nationality, registered_on=on)
    for d in docs:
        if d not in drop:
            row[d], row[f"{d}_on"] = f"doc-{d}-{reg}", doc_date
    return row


def register(tmp_path, db_url, wrows, arows, capsys):
    w = write_csv(tmp_path / "workers.csv", WORKER_COLUMNS, wrows)
    a = write_csv(tmp_path / "admissions.csv", ADM_COLUMNS, arows)
    code = main(["registry", "register", "--db", db_url, "--actor", "secretaria", "--workers", str(w),
                 "--admissions", str(a)])
    out, err = capsys.readouterr()
    return code, out, err


def count(db_url, table):
    engine = db.make_engine(db_url)
    with engine.connect() as conn:
        n = conn.execute(select(func.count()).select_from(table)).scalar_one()
    engine.dispose()
    return n


def test_complete_registrations_are_kept_with_evidence_and_audit(tmp_path, db_url, capsys):
    code, out, _ = register(tmp_path, db_url, [wrow("V100", "vigia"), wrow("E100", "estivador")],
                            [arow("V100", WATCH_DOCS), arow("E100", STEVE_DOCS)], capsys)
    assert code == 0 and "2 worker(s) registered" in out
    engine = db.make_engine(db_url)
    with engine.connect() as conn:
        ev = conn.execute(select(admissions.c.evidence).where(admissions.c.registration == "V100")).scalar_one()
        actions = conn.execute(select(audit_log.c.action).where(audit_log.c.subject == "V100")).scalars().all()
    engine.dispose()
    assert ev["police_record"] == {"document": "doc-police_record-V100", "dated": "2026-02-10"}
    assert "worker.admission" in actions


@pytest.mark.parametrize(("born", "category", "docs", "ok"), [
    ("2005-03-02", "vigia", WATCH_DOCS, False),  # 20 on 2026-03-01: under 21
    ("2005-03-01", "vigia", WATCH_DOCS, True),   # 21 that day
    ("1984-03-02", "vigia", WATCH_DOCS, True),   # 41
    ("1984-03-01", "vigia", WATCH_DOCS, False),  # 42: not younger than 42
    ("2008-03-02", "estivador", STEVE_DOCS, False),  # 17
    ("2008-03-01", "estivador", STEVE_DOCS, True),   # 18
    ("1990-03-02", "estivador", STEVE_DOCS, True),   # 35
    ("1990-03-01", "estivador", STEVE_DOCS, False),  # 36
])
def test_age_limits(tmp_path, db_url, capsys, born, category, docs, ok):
    adm = Admission("X", dt.date.fromisoformat(born), "BR", dt.date(2026, 3, 1),
                    {d: Evidence("n", dt.date(2026, 1, 1)) for d in docs})
    problems = admission_problems(category, adm)
    age = age_on(adm.birth_date, adm.registered_on)
    assert (problems == []) is ok
    if not ok:
        article = "83.611 art. 15 a" if category == "vigia" else "DL 2.032 art. 5 §1 1"
        assert problems[0].startswith(f"{article}: age {age} on 2026-03-01")


@pytest.mark.parametrize(("category", "docs", "drop", "article"), [
    ("vigia", WATCH_DOCS, "vision", "83.611 art. 15 b"),
    ("vigia", WATCH_DOCS, "police_record", "83.611 art. 15 c"),
    ("vigia", WATCH_DOCS, "military", "83.611 art. 15 d"),
    ("vigia", WATCH_DOCS, "electoral", "83.611 art. 15 e"),
    ("estivador", STEVE_DOCS, "vaccination", "DL 2.032 art. 5 §1 2"),
    ("estivador", STEVE_DOCS, "fitness", "DL 2.032 art. 5 §1 3"),
    ("estivador", STEVE_DOCS, "criminal_record", "DL 2.032 art. 5 §1 4"),
    ("estivador", STEVE_DOCS, "military", "DL 2.032 art. 5 §1 5"),
])
def test_a_missing_condition_is_refused_with_its_article(tmp_path, db_url, capsys, category, docs, drop, article):
    code, out, err = register(tmp_path, db_url, [wrow("N1", category)], [arow("N1", docs, drop=(drop,))], capsys)
    assert code == 2 and out == ""
    assert f"admissions.csv:2: N1: {article}: " in err and f"({drop}) missing" in err
    assert count(db_url, workers) == 0 and count(db_url, admissions) == 0


def test_nationality_later_documents_and_missing_rows(tmp_path, db_url, capsys):
    code, _, err = register(
        tmp_path, db_url,
        [wrow("V1", "vigia"), wrow("E1", "estivador"), wrow("E2", "estivador"), wrow("V2", "vigia")],
        [arow("V1", WATCH_DOCS, nationality="PT"),
         arow("E1", ("vaccination", "fitness", "criminal_record"), nationality="PT"),  # no legal stay
         arow("E2", STEVE_DOCS, doc_date="2026-03-05")], capsys)
    assert code == 2
    assert "admissions.csv:2: V1: 83.611 art. 15 a: must be Brazilian (nationality PT)" in err
    assert "admissions.csv:3: E1: DL 2.032 art. 5 §2: " in err and "(legal_stay) missing" in err
    assert "E1: DL 2.032 art. 5 §1 5" not in err  # military discharge is asked of Brazilians only
    assert "admissions.csv:4: E2: DL 2.032 art. 5 §1 2: atestado de vacinação (vaccination) is dated 2026-03-05, after" in err
    assert "workers.csv:5: V2 has no row in admissions.csv" in err


def test_foreigners_at_most_one_third_of_the_stevedores(tmp_path, db_url, capsys):
    foreign = ("vaccination", "fitness", "criminal_record", "legal_stay")
    code, _, _ = register(tmp_path, db_url, [wrow("E1", "estivador"), wrow("E2", "estivador"), wrow("F1", "estivador")],
                          [arow("E1", STEVE_DOCS), arow("E2", STEVE_DOCS), arow("F1", foreign, nationality="AR")],
                          capsys)
    assert code == 0  # 1 foreigner of 3: exactly one third
    code, _, err = register(tmp_path, db_url, [wrow("F2", "estivador")],
                            [arow("F2", foreign, nationality="UY")], capsys)
    assert code == 2
    assert ("admissions.csv:2: DL 2.032 art. 5 §3: foreigners would be 2 of 4 stevedores; "
            "at most one third (1)") in err
    main(["registry", "admissions", "--db", db_url])
    report = json.loads(capsys.readouterr().out)
    assert report["foreign_share"] == {"stevedores": 3, "foreign": 1, "limit": 1, "within": True,
                                       "article": "DL 2.032 art. 5 §3", "no_admission_record": 0}
    # two Brazilians and F2 together: 2 foreigners of 6 stevedores, exactly one third
    code, _, err = register(tmp_path, db_url, [wrow("E3", "estivador"), wrow("E4", "estivador"), wrow("F2", "estivador")],
                            [arow("E3", STEVE_DOCS), arow("E4", STEVE_DOCS), arow("F2", foreign, nationality="UY")],
                            capsys)
    assert code == 0


def test_an_existing_registration_is_refused(tmp_path, db_url, capsys):
    register(tmp_path, db_url, [wrow("V1", "vigia")], [arow("V1", WATCH_DOCS)], capsys)
    code, _, err = register(tmp_path, db_url, [wrow("V1", "vigia")], [arow("V1", WATCH_DOCS)], capsys)
    assert code == 2 and "workers.csv:2: V1 is already registered" in err
