"""Migration 0038 (unique ``workers.cpf`` and ``workers.pis``) on SQLite and PostgreSQL: a 0037 ledger
holding a CPF or PIS on two registrations is not upgraded (the refusal lists each number and its
registrations, in English and in pt-BR, and the ledger stays at 0037 as it was); once each number is
on one registration it upgrades, and the ledger then refuses a second holder itself (the race of two
forms at once); many workers without numbers are fine; the downgrade takes the indexes away."""

from __future__ import annotations

import datetime as dt

import pytest
from alembic import command
from sqlalchemy import inspect, text
from sqlalchemy.exc import DataError, IntegrityError

from central.db import make_engine
from central.ledger.migrate import alembic_config, upgrade
from central.web.service_texts import localize
from portgate.errors import StoreError

NOW = dt.datetime(2026, 12, 7, 20, 0, tzinfo=dt.UTC)


def _add(conn, reg: str, cpf: str | None, pis: str | None) -> None:
    conn.execute(text("INSERT INTO workers (registration, name, category, status, updated_at, cpf, pis) "
                      "VALUES (:r, 'Ana Lima', 'vigia', 'active', :t, :c, :p)"),
                 {"r": reg, "t": NOW, "c": cpf, "p": pis})


def _indexes(engine) -> set[str]:
    return {i["name"] for i in inspect(engine).get_indexes("workers")}


def test_numbers_on_two_registrations_refuse_the_upgrade_until_corrected(db_url):
    upgrade(db_url, "0037")
    engine = make_engine(db_url)
    try:
        with engine.begin() as c:
            _add(c, "V001", "00000000191", "00000000019")
            _add(c, "V921", "00000000191", "00000000019")
            _add(c, "V919", "52998224725", None)
            _add(c, "V920", "52998224725", None)
            _add(c, "V002", None, None)
            _add(c, "V003", None, None)  # NULLs repeat
        with pytest.raises(StoreError) as refused:
            upgrade(db_url, "0038")
        said = str(refused.value)
        assert said == ("migration 0038 refused: a CPF or PIS/NIS on two registrations (cpf 00000000191: V001/"
                        "V921, cpf 52998224725: V919/V920, pis 00000000019: V001/V921): leave each number on one "
                        "registration and migrate again")
        assert localize("pt", said) == (
            "migração 0038 recusada: um CPF ou PIS/NIS em duas matrículas (cpf 00000000191: V001/V921, cpf "
            "52998224725: V919/V920, pis 00000000019: V001/V921): deixe cada número numa só matrícula e migre "
            "de novo")
        with engine.connect() as c:
            assert c.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0037"
        assert not {"ux_workers_cpf", "ux_workers_pis"} & _indexes(engine)
        with engine.begin() as c:
            c.execute(text("UPDATE workers SET cpf = NULL, pis = NULL WHERE registration = 'V921'"))
            c.execute(text("UPDATE workers SET cpf = NULL WHERE registration = 'V920'"))
        assert upgrade(db_url, "0038") == "0038"
        assert {"ux_workers_cpf", "ux_workers_pis"} <= _indexes(engine)
        for cpf, pis in (("00000000191", None), (None, "00000000019")):
            with pytest.raises(IntegrityError), engine.begin() as c:
                _add(c, "V930", cpf, pis)
        with engine.begin() as c:
            _add(c, "V930", None, None)
        command.downgrade(alembic_config(db_url), "0037")
        assert not {"ux_workers_cpf", "ux_workers_pis"} & _indexes(engine)
        with engine.connect() as c:
            assert c.execute(text("SELECT COUNT(*) FROM workers")).scalar() == 7
    finally:
        engine.dispose()


def test_the_refusal_lists_twenty_repeated_numbers_and_counts_the_rest(db_url):
    upgrade(db_url, "0037")
    engine = make_engine(db_url)
    try:
        with engine.begin() as c:
            for n in range(23):  # 23 PIS on two registrations each
                _add(c, f"A{n:02d}", None, f"{n:011d}")
                _add(c, f"B{n:02d}", None, f"{n:011d}")
        with pytest.raises(StoreError) as refused:
            upgrade(db_url, "0038")
    finally:
        engine.dispose()
    said = str(refused.value)
    assert said.count("pis ") == 20 and "pis 00000000019: A19/B19, … +3)" in said, said


def test_a_number_written_around_its_digits_is_the_same_number(db_url):
    """A CPF formatted or padded with spaces (the registry writes bare digits since 0022; a hand edit
    of a SQLite ledger may not) is compared by its digits: a unique index of the text would let
    ``000.000.003-53`` and ``00000000353`` stand side by side. PostgreSQL's 11-character column
    refuses such a value itself."""
    upgrade(db_url, "0037")
    engine = make_engine(db_url)
    try:
        if engine.dialect.name == "postgresql":  # there the column (11 characters) keeps it out
            with pytest.raises(DataError), engine.begin() as c:
                _add(c, "V004", "000.000.003-53", None)
            return
        with engine.begin() as c:
            _add(c, "V003", "00000000353", None)
            _add(c, "V004", "000.000.003-53", None)
            _add(c, "V005", None, " 00000000019 ")
            _add(c, "V006", None, "00000000019")
        with pytest.raises(StoreError) as refused:
            upgrade(db_url, "0038")
        assert "cpf 00000000353: V003/V004, pis 00000000019: V005/V006)" in str(refused.value)
        with engine.connect() as c:
            assert c.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0037"
    finally:
        engine.dispose()
