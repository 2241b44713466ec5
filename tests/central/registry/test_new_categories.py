"""``portgate registry import --new-category NAME`` as a fresh tester tried it (the real command, a
real SQLite file): a named category is read as the category cell is (``' Arrumador '`` opens
``arrumador``); a name no cell could hold (a formula lead, a comma, too long, too many names) is
refused before any row is read, pt-BR first; a refusal of many bad rows lists the allowed categories
once and bounded ("and N more"), whatever the rows and the names given."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from central.db import make_engine
from central.registry.schema import workers
from testkit.cli import run_here
from testkit.sqlite_copies import copy_made_once

ROOT = Path(__file__).resolve().parents[3]
HEAD = "registration,name,category,status,health_exam_date,rotation_number\n"


def _demo_imported(path: Path) -> None:
    done = run_here(["registry", "import", "--db", f"sqlite:///{path}", "--workers",
                     str(ROOT / "config" / "demo" / "workers.csv")])
    assert done.returncode == 0, done.stderr


@pytest.fixture
def demo_url(tmp_path) -> str:
    """A SQLite ledger of its own holding the demo's workers: a copy of the one the same ``registry
    import`` makes once per process (``testkit.sqlite_copies``)."""
    copy_made_once("demo-workers-imported", _demo_imported, tmp_path / "ledger.db")
    return f"sqlite:///{tmp_path / 'ledger.db'}"


def _categories(url: str) -> dict[str, str]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return dict(conn.execute(select(workers.c.registration, workers.c.category)).all())
    finally:
        engine.dispose()


def _import(url: str, path: Path, *names: str, lang: str = "pt"):
    args = ["registry", "import", "--db", url, "--workers", str(path)]
    for name in names:
        args += ["--new-category", name]
    return run_here(args, env={"PORTGATE_LANG": lang})


@pytest.mark.parametrize("named", ["Arrumador", " Arrumador ", "ARRUMADOR"])
def test_a_named_category_is_read_as_the_cell(demo_url, tmp_path, named):
    path = tmp_path / "d.csv"
    path.write_text(HEAD + "X300,Arrumador Um,Arrumador,active,2026-01-10,1\n", encoding="utf-8")
    done = _import(demo_url, path, named)
    assert done.returncode == 0, done.stderr
    assert _categories(demo_url)["X300"] == "arrumador"


def test_the_refusal_names_the_category_as_normalised(demo_url, tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(HEAD + "X300,Zé Um,astronaut,active,2026-01-10,1\n", encoding="utf-8")
    done = _import(demo_url, path, " Arrumador ", lang="en")
    assert done.returncode == 2
    assert "d.csv:2: category 'astronaut' is not one of arrumador, capatazia, estivador, vigia" in done.stderr, \
        done.stderr


@pytest.mark.parametrize("named, en, pt", [
    ("=cmd", "new category '=cmd' starts with '=': not a category (a spreadsheet would run it as a formula)",
     "a categoria nova '=cmd' começa com '=': não é categoria (uma planilha a executaria como fórmula)"),
    ("-1+2", "new category '-1+2' starts with '-'", "a categoria nova '-1+2' começa com '-'"),
    ("@x", "new category '@x' starts with '@'", "a categoria nova '@x' começa com '@'"),
    ("+x", "new category '+x' starts with '+'", "a categoria nova '+x' começa com '+'"),
    ("a,b", "new category 'a,b' contains a comma (one name per category)",
     "a categoria nova 'a,b' contém uma vírgula (um nome por categoria)"),
    ("x" * 2000, f"new category '{'x' * 64}' is longer than 64 characters",
     f"a categoria nova '{'x' * 64}' tem mais de 64 caracteres"),
    ("a\x01b", "contains a control character or line break", "caractere de controle"),
], ids=["equals", "minus", "at", "plus", "comma", "long", "control"])
def test_a_name_no_cell_could_hold_is_refused(demo_url, tmp_path, named, en, pt):
    before = _categories(demo_url)
    path = tmp_path / "d.csv"
    path.write_text(HEAD + "X300,Arrumador Um,arrumador,active,2026-01-10,1\n", encoding="utf-8")
    done = _import(demo_url, path, named, "arrumador", lang="en")
    assert done.returncode == 2 and en in done.stderr, done.stderr
    assert len(done.stderr) < 1000, done.stderr  # the 2,000 characters are not echoed
    said = _import(demo_url, path, named, "arrumador")
    assert said.returncode == 2 and pt in said.stderr, said.stderr
    assert _categories(demo_url) == before


def test_more_than_twenty_names_are_refused(demo_url, tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(HEAD + "X300,Arrumador Um,arrumador,active,2026-01-10,1\n", encoding="utf-8")
    assert _import(demo_url, path, *[f"c{i}" for i in range(20)], "arrumador").returncode == 2  # 21
    said = _import(demo_url, path, *[f"c{i}" for i in range(21)])
    assert said.returncode == 2 and "no máximo 20 categorias novas, não 21" in said.stderr, said.stderr
    assert _import(demo_url, path, *[f"c{i}" for i in range(19)], "arrumador").returncode == 0  # 20


def test_many_bad_rows_list_the_allowed_categories_once_and_bounded(demo_url, tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(HEAD + "".join(f"X{i},Zé {i},astronaut,active,2026-01-10,{i}\n" for i in range(1, 201)),
                    encoding="utf-8")
    names = [f"categoria{i:02}" + "x" * 50 for i in range(20)]
    done = _import(demo_url, path, *names, lang="en")
    assert done.returncode == 2
    lines = [ln for ln in done.stderr.splitlines() if "astronaut" in ln]
    assert len(lines) == 200, done.stderr[-2000:]
    assert lines[0].removeprefix("portgate: ").startswith("d.csv:2: category 'astronaut' is not one of capatazia, "
                                                          "categoria00")
    assert lines[0].endswith(" and 11 more"), lines[0]  # 23 allowed, 12 listed
    assert lines[1] == "d.csv:3: category 'astronaut' is not one of the categories listed at d.csv:2", lines[1]
    assert len(done.stderr) < 200 * 100 + 2000, len(done.stderr)
    said = _import(demo_url, path, *names)
    pt = said.stderr.splitlines()
    first = "d.csv:2: a categoria 'astronaut' não é um dos valores capatazia"
    assert any(ln.removeprefix("portgate: ").startswith(first) and ln.endswith(" e mais 11") for ln in pt), \
        said.stderr[:2000]
    assert "d.csv:3: a categoria 'astronaut' não é uma das categorias listadas em d.csv:2" in pt, said.stderr[:2000]
