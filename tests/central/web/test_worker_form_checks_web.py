"""The add-worker form over the real app (SQLite and PostgreSQL) refuses what a fresh tester got
through, beside the field in pt-BR with every typed value kept and nothing written: a name holding a
right-to-left override (U+202E) or a zero-width space (U+200B), shown by code point and position (a
line separator U+2028 too, without the doubled backslash it showed), and an admission document dated
before the birth (a police record of 01/01/1900 for a man born in 1995)."""

from __future__ import annotations

import html

import pytest
from sqlalchemy import select

from central.registry.schema import workers
from tests.central.web.conftest import engine_of, logged_in
from tests.central.web.test_clerk_forms import VIGIA, _field_error


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    yield from engine_of(request, tmp_path, ledgers, "demo_registry" if "registry" in request.fixturenames else None)


@pytest.fixture
def registry(engine, users, clock):
    return engine


def _none_added(engine) -> bool:
    with engine.connect() as c:
        return c.execute(select(workers.c.registration).where(workers.c.registration == "V900")).first() is None


@pytest.mark.parametrize("name, said", [
    ("Ana\u202eLima", "nome 'Ana<U+202E>Lima' contém um caractere de formatação invisível (U+202E no 4º "
                      "caractere): marca de direção ou caractere de largura zero não faz parte de nome"),
    ("Ana Li\u200bma", "nome 'Ana Li<U+200B>ma' contém um caractere de formatação invisível (U+200B no 7º "
                       "caractere)"),
    ("Ana\u2028Lima", "nome 'Ana<U+2028>Lima' contém um caractere de controle ou quebra de linha (U+2028 no "
                      "4º caractere)"),
], ids=["rtl-override", "zero-width-space", "line-separator"])
def test_a_name_with_an_unseen_character_is_refused_by_code_point_and_position(app, registry, name, said):
    c, token = logged_in(app, "office")
    r = c.post("/workers/new", data=VIGIA | {"name": name, "csrf_token": token})
    assert r.status_code == 400
    shown = html.unescape(_field_error(r.text, "name"))
    assert said in shown, shown
    assert "\\" not in shown
    assert _none_added(registry)


def test_a_document_dated_before_the_birth_is_refused_beside_its_date(app, registry):
    c, token = logged_in(app, "office")
    r = c.post("/workers/new", data=VIGIA | {"police_record_on": "01/01/1900", "csrf_token": token})
    assert r.status_code == 400
    shown = html.unescape(_field_error(r.text, "police_record_on"))
    assert "tem data 01/01/1900, anterior ao nascimento em 15/05/1995" in shown, shown
    assert _none_added(registry)
    r = c.post("/workers/new", data=VIGIA | {"police_record_on": "15/05/1995", "csrf_token": token})
    assert r.status_code == 303  # dated on the birth day: possible (a birth certificate is)
