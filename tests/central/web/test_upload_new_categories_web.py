"""The upload's "Novas categorias" field over the real app (TestClient, the conftest's ledgers) as a
fresh tester tried it: a name no category cell could hold (``=cmd|calc``, too long, too many) is
refused in pt-BR before any row is read, without echoing the field in every error line; a named
category is read as the cell is (``' Arrumador '``); every refusal keeps what was typed."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.registry.schema import workers
from central.registry.store import import_files
from tests.central.web.conftest import logged_in

DEMO = Path(__file__).resolve().parents[3] / "config" / "demo"
HEAD = ("registration,name,category,status,suspended_from,suspended_until,health_exam_date,"
        "booklet_revalidated_year,rotation_number\n")


@pytest.fixture
def registry(engine, users, clock):
    with Session(engine) as s, s.begin():
        import_files(s, workers_csv=DEMO / "workers.csv", actor="t", now=clock())
    return engine


def _field(text: str) -> str:
    found = text.split('id="u-new-categories"', 1)[1].split('value="', 1)[1]
    return html.unescape(found.split('"', 1)[0])


def _category(engine, reg: str):
    with engine.connect() as c:
        return c.execute(select(workers.c.category).where(workers.c.registration == reg)).scalar()


@pytest.mark.parametrize("typed, said", [
    ("=cmd|calc", "a categoria nova '=cmd|calc' começa com '=': não é categoria"),
    ("arrumador, -1+2", "a categoria nova '-1+2' começa com '-'"),
    ("x" * 200_000, "a categoria nova '" + "x" * 64 + "' tem mais de 64 caracteres"),
    (",".join(f"c{i}" for i in range(21)), "no máximo 20 categorias novas, não 21"),
], ids=["formula", "minus", "long", "many"])
def test_a_name_no_cell_could_hold_is_refused_and_kept(app, registry, typed, said):
    c, token = logged_in(app, "office")
    rows = HEAD + "N100,Arrumador Um,arrumador,active,,,2026-01-10,,300\n"
    r = c.post("/workers/upload", data={"csrf_token": token, "new_categories": typed},
               files={"workers": ("w.csv", rows.encode())})
    assert r.status_code == 400 and said in html.unescape(r.text), r.text[-3000:]
    assert len(r.text) < 2 * len(typed) + 60_000  # the field once (kept), not in every error line
    assert _field(r.text) == typed
    assert _category(registry, "N100") is None


def test_a_named_category_is_read_as_the_cell_and_refusals_keep_the_field(app, registry):
    c, token = logged_in(app, "office")
    r = c.post("/workers/upload", data={"csrf_token": token, "new_categories": " Arrumador , x"}, files={})
    assert r.status_code == 400 and _field(r.text) == " Arrumador , x"  # "choose at least one CSV file"
    rows = HEAD + "N100,Arrumador Um,Arrumador,active,,,2026-01-10,,300\n"
    r = c.post("/workers/upload", data={"csrf_token": token, "new_categories": " Arrumador "},
               files={"workers": ("w.csv", rows.encode())})
    assert r.status_code == 200 and 'id="upload-done"' in r.text, r.text[-3000:]
    assert _category(registry, "N100") == "arrumador"
