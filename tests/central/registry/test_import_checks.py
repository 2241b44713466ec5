"""``portgate registry import --workers`` refuses what a fresh tester got through (the real command,
a real SQLite file): a CPF or PIS another worker holds, in the registry or on an earlier line of the
file (one person, one CPF; one PIS/NIS per worker); a category neither known nor registered
(``astronaut`` silently opened a new rotation list), the refusal listing the allowed ones; a name
starting with a formula character (``=cmd|calc`` is no person's name). Each refusal names the
``file:line``, in English and in pt-BR, and nothing is imported (all or nothing)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.db import make_engine
from central.registry.schema import audit_log, workers
from central.registry.store import save_worker
from portgate.records import Worker, WorkerStatus
from testkit.cli import run_here
from testkit.sqlite_copies import copy_made_once

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "config" / "demo"
HEAD = "registration,name,category,status,health_exam_date,rotation_number,cpf,pis\n"
GOOD = "X100,Novo Bom,vigia,active,2026-01-10,100,,\n"


def _demo_imported(path: Path) -> None:
    done = run_here(["registry", "import", "--db", f"sqlite:///{path}", "--workers", str(DEMO / "workers.csv")])
    assert done.returncode == 0, done.stderr


@pytest.fixture
def demo_url(tmp_path) -> str:
    """A SQLite ledger of its own holding the demo's workers: a copy of the one the same ``registry
    import`` makes once per process (``testkit.sqlite_copies``), not a migration and import per test."""
    copy_made_once("demo-workers-imported", _demo_imported, tmp_path / "ledger.db")
    return f"sqlite:///{tmp_path / 'ledger.db'}"


def _registrations(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return set(conn.execute(select(workers.c.registration)).scalars())
    finally:
        engine.dispose()


def _import(url: str, path: Path, lang: str = "en"):
    return run_here(["registry", "import", "--db", url, "--workers", str(path)], env={"PORTGATE_LANG": lang})


@pytest.mark.parametrize("rows, en, pt", [
    ("X101,Novo Um,vigia,active,2026-01-10,101,000.000.001-91,\n",
     "workers.csv:3: cpf 00000000191 is already held by V001",
     "workers.csv:3: o CPF 00000000191 já é da matrícula V001"),
    ("X101,Novo Um,vigia,active,2026-01-10,101,,000.00000.01-9\n",
     "workers.csv:3: pis 00000000019 is already held by V001",
     "workers.csv:3: o PIS 00000000019 já é da matrícula V001"),
    ("X101,Novo Um,vigia,active,2026-01-10,101,529.982.247-25,\n"
     "X102,Novo Dois,vigia,active,2026-01-10,102,529.982.247-25,\n",
     "workers.csv:4: cpf 52998224725 is already held by X101",
     "workers.csv:4: o CPF 52998224725 já é da matrícula X101"),
    ("X101,Novo Um,astronaut,active,2026-01-10,101,,\n",
     "workers.csv:3: category 'astronaut' is not one of capatazia, estivador, vigia",
     "workers.csv:3: categoria (category) 'astronaut' não é um dos valores capatazia, estivador, vigia"),
    ("X101,=cmd|calc,vigia,active,2026-01-10,101,,\n",
     "workers.csv:3: name '=cmd|calc' starts with '=': not a person's name (a spreadsheet would run it as a formula)",
     "workers.csv:3: o nome '=cmd|calc' começa com '=': não é nome de pessoa (uma planilha o executaria como fórmula)"),
    ("X101,@SUM(A1),vigia,active,2026-01-10,101,,\n",
     "workers.csv:3: name '@SUM(A1)' starts with '@'", "workers.csv:3: o nome '@SUM(A1)' começa com '@'"),
    ('"=HYPERLINK(""x"")",Novo Um,vigia,active,2026-01-10,101,,\n',
     "workers.csv:3: registration '=HYPERLINK(\"x\")' starts with '=': not a registration (a spreadsheet would "
     "run it as a formula)",
     "workers.csv:3: a matrícula '=HYPERLINK(\"x\")' começa com '=': não é matrícula (uma planilha a executaria "
     "como fórmula)"),
    ("@SUM(1),Novo Um,vigia,active,2026-01-10,101,,\n",
     "workers.csv:3: registration '@SUM(1)' starts with '@'", "workers.csv:3: a matrícula '@SUM(1)' começa com '@'"),
    ("-2+3,Novo Um,vigia,active,2026-01-10,101,,\n",
     "workers.csv:3: registration '-2+3' starts with '-'", "workers.csv:3: a matrícula '-2+3' começa com '-'"),
    ("+1,Novo Um,vigia,active,2026-01-10,101,,\n",
     "workers.csv:3: registration '+1' starts with '+'", "workers.csv:3: a matrícula '+1' começa com '+'"),
    ("V9 04,Novo Um,vigia,active,2026-01-10,101,,\n",
     "workers.csv:3: registration 'V9 04' holds ' ': a registration is letters and digits, with - . / between them",
     "workers.csv:3: a matrícula 'V9 04' contém ' ': uma matrícula tem letras e algarismos, com - . / entre eles"),
    ("V9#04,Novo Um,vigia,active,2026-01-10,101,,\n",
     "workers.csv:3: registration 'V9#04' holds '#'", "workers.csv:3: a matrícula 'V9#04' contém '#'"),
    ("V9\x0704,Novo Um,vigia,active,2026-01-10,101,,\n",
     "workers.csv:3: registration 'V9<U+0007>04' contains a control character or line break (U+0007 at character "
     "3)",  # portgate.cells.text, before
     "workers.csv:3: matrícula (registration) 'V9<U+0007>04' contém um caractere de controle ou quebra de linha "
     "(U+0007 no 3º caractere)"),
    ("X101,Ana\u202eLima,vigia,active,2026-01-10,101,,\n",
     "workers.csv:3: name 'Ana<U+202E>Lima' contains an invisible format character (U+202E at character 4)",
     "workers.csv:3: nome (name) 'Ana<U+202E>Lima' contém um caractere de formatação invisível (U+202E no 4º "
     "caractere)"),
    ("v001,Ana Lima,vigia,active,2025-06-01,101,,\n",
     "workers.csv:3: registration v001 differs only in letter case from the registered V001",
     "workers.csv:3: a matrícula v001 difere da matrícula cadastrada V001 só em maiúsculas/minúsculas"),
    ("x100,Novo Cem,vigia,active,2026-01-10,101,,\n",
     "workers.csv:3: registration x100 differs only in letter case from X100 at line 2",
     "workers.csv:3: a matrícula x100 difere da matrícula X100 da linha 2 só em maiúsculas/minúsculas"),
], ids=["cpf-of-V001", "pis-of-V001", "cpf-twice-in-the-file", "astronaut", "formula-name", "at-name",
        "hyperlink-registration", "at-registration", "minus-registration", "plus-registration", "inner-space",
        "hash-registration", "control-registration", "rtl-override-name", "case-of-registered", "case-of-earlier-line"])
def test_the_row_is_refused_by_line_and_nothing_is_imported(demo_url, tmp_path, rows, en, pt):
    before = _registrations(demo_url)
    path = tmp_path / "workers.csv"
    path.write_text(HEAD + GOOD + rows, encoding="utf-8")
    done = _import(demo_url, path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert en in done.stderr, done.stderr
    said = _import(demo_url, path, "pt")
    assert said.returncode == 2 and pt in said.stderr, said.stderr
    assert _registrations(demo_url) == before  # all or nothing: X100's good row is not imported either


def test_a_worker_moving_his_cpf_to_a_new_row_and_a_registered_category_pass(demo_url, tmp_path):
    """Not refused: V001 restating his own CPF, a registered category that is not a default one
    (a port's ``arrumador`` once registered), and V001 taking a new CPF while X101 takes his old one
    in the same file."""
    path = tmp_path / "workers.csv"
    path.write_text(HEAD + "V001,Ana Lima,vigia,active,2025-06-01,1,000.000.001-91,\n"
                    "X200,Primeiro Arrumador,arrumador,active,2026-01-10,1,,\n", encoding="utf-8")
    assert _import(demo_url, path).returncode == 2  # arrumador is not registered yet
    engine = make_engine(demo_url)
    with Session(engine) as session, session.begin():  # a port's own category, registered before
        save_worker(session, Worker("A001", "Arrumador Antigo", "arrumador", WorkerStatus.ACTIVE), actor="t", action="worker.add",
                    now=dt.datetime(2026, 12, 6, tzinfo=dt.UTC))
    engine.dispose()
    done = _import(demo_url, path)
    assert done.returncode == 0, done.stderr
    path.write_text(HEAD + "V001,Ana Lima,vigia,active,2025-06-01,1,529.982.247-25,\n"
                    "X101,Novo Um,vigia,active,2026-01-10,101,000.000.001-91,\n", encoding="utf-8")
    done = _import(demo_url, path)
    assert done.returncode == 0, done.stderr
    assert {"X200", "X101"} <= _registrations(demo_url)


def test_two_workers_swapping_their_cpfs_in_one_file_pass_audited(demo_url, tmp_path):
    """V001 and V002 exchanging CPFs (a typo corrected) in one file: the import's check lets each
    row free its old number, and the ledger's unique index (0038) does not stop the move half way
    (``ids.release``); each change is audited from the number he held."""
    path = tmp_path / "workers.csv"
    path.write_text(HEAD + "V001,Ana Lima,vigia,active,2025-06-01,1,000.000.002-72,\n"
                    "V002,Bruno Santos,vigia,active,2025-06-01,2,000.000.001-91,\n", encoding="utf-8")
    done = _import(demo_url, path)
    assert done.returncode == 0, done.stderr
    engine = make_engine(demo_url)
    try:
        with engine.connect() as c:
            assert dict(c.execute(select(workers.c.registration, workers.c.cpf).where(
                workers.c.registration.in_(["V001", "V002"]))).all()) == {"V001": "00000000272", "V002": "00000000191"}
            changed = {subject: detail["changed"] for subject, detail in c.execute(
                select(audit_log.c.subject, audit_log.c.detail).where(audit_log.c.action == "worker.ids"))
                if subject in ("V001", "V002")}
    finally:
        engine.dispose()
    assert changed == {"V001": {"cpf": ["00000000191", "00000000272"]}, "V002": {"cpf": ["00000000272", "00000000191"]}}


def test_a_new_category_opens_only_when_the_import_names_it(demo_url, tmp_path):
    """``--new-category arrumador``: a port's own list is opened on purpose, not by a typo; the
    other rows' categories are still checked (``astronaut`` stays refused)."""
    path = tmp_path / "workers.csv"
    path.write_text(HEAD + "X300,Arrumador Um,arrumador,active,2026-01-10,1,,\n", encoding="utf-8")
    done = run_here(["registry", "import", "--db", demo_url, "--workers", str(path), "--new-category", "zelador"],
                    env={"PORTGATE_LANG": "en"})
    assert done.returncode == 2 and "category 'arrumador' is not one of arrumador" not in done.stderr
    assert "is not one of capatazia, estivador, vigia, zelador" in done.stderr, done.stderr
    done = run_here(["registry", "import", "--db", demo_url, "--workers", str(path), "--new-category", "arrumador"])
    assert done.returncode == 0, done.stderr
    assert "X300" in _registrations(demo_url)


def test_registrations_of_the_projects_shapes_pass(demo_url, tmp_path):
    """What the data, demos and tests use (``V017``, ``1001``, ``PRV001``, ``W00001``) and an OGMO's
    dotted or slashed number pass ``REGISTRATION``; a row restating V001 exactly is no case twin."""
    path = tmp_path / "workers.csv"
    path.write_text(HEAD + "V001,Ana Lima,vigia,active,2025-06-01,1,,\n" + "".join(
        f"{reg},Novo {n},vigia,active,2026-01-10,{500 + n},,\n"
        for n, reg in enumerate(("1001", "PRV001", "W00001", "123.456-7", "12/3", "r"))), encoding="utf-8")
    done = _import(demo_url, path)
    assert done.returncode == 0, done.stderr
    assert {"1001", "PRV001", "W00001", "123.456-7", "12/3", "r"} <= _registrations(demo_url)
