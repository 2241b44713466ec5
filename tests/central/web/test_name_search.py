"""The worker list's text search through the registry's substring index (issue 34, 50,000 workers;
``central.registry.name_search``, migrations 0027 and 0030), on SQLite (FTS5 trigram) and
PostgreSQL (pg_trgm GIN), each on a migrated ledger:

- the rows found are the rows the search finds by its conditions alone (no index), for texts
  with accents, capitals, LIKE's own characters (``%``, ``_``, ``\\``), a double quote, texts of
  one and two characters, registrations and their starts, a card UID;
- a name is found without regard to accents or case, the same on both databases (the folded name,
  0030: ``joao``, ``JOAO`` and ``joão`` find João, João and joao; ``conceicao`` finds Conceição);
- the index drives the search (SQLite's plan reads ``worker_name_fts``; PostgreSQL's uses
  ``ix_workers_name_folded_trgm`` once a sequential scan is ruled out);
- it stays current through inserts, a renamed worker (the registry's edit), a changed
  registration and a delete, whoever writes (triggers);
- a ledger adopted without it (its SQLite triggers gone) searches as before, with the same rows."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from central.registry import name_search
from central.registry.schema import cards, workers
from central.registry.store import get_worker, save_worker
from central.web.registrymodel import ListQuery, list_conditions, worker_list
from portgate.textfold import fold

NOW = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)
TODAY = dt.date(2026, 3, 1)
NAMES = {
    "V001": "João da Silva", "V002": "JOÃO SILVA", "V003": "joao silva", "V004": "Ana_Maria Souza",
    "V005": "Ana Maria Souza", "V006": "Vigia 100% Lima", "V007": 'Pedro "Pé" Dias', "V008": "Barra \\ Costa",
    "V009": "Ângela Conceição", "V010": "ÂNGELA CONCEIÇÃO", "V011": "Çá Ôô", "V012": "Marta Ribeiro",
    "ÁB01": "Helena Rocha", "áb02": "Igor Rocha", "X-9": "Xavier Nove",
}
TEXTS = ("silva", "SILVA", "Silva", "joão", "JOÃO", "joao", "ão s", "ana_", "ana%", "100%", "% l", '"pé"', "\\ c",
         "ângela", "ÂNGELA", "angela", "ção", "ÇÃO", "çá", "ÇÁ", "a", "ão", "v00", "V00", "V001", "ÁB0", "áb0",
         "ÁB01", "x-9", "rocha", "ocha ", "nobody here", "ribeiro", "0A04A10001", "10001")


@pytest.fixture
def ledger(engine):
    with engine.begin() as conn:
        conn.execute(workers.insert(), [dict(registration=reg, name=name, category="vigia", status="active",
                                             updated_at=NOW) for reg, name in NAMES.items()])
        conn.execute(cards.insert(), [dict(uid="0A04A10001", kind="control", registration="V012", status="active",
                                           updated_at=NOW)])
    return engine


def _found(engine, text: str, name_index: str | None) -> list[str]:
    conds = list_conditions(ListQuery(q=text), TODAY, name_index=name_index)
    with engine.connect() as conn:
        return list(conn.execute(select(workers.c.registration).where(*conds).order_by(workers.c.registration))
                    .scalars())


def test_the_index_finds_exactly_what_the_search_without_it_finds(ledger):
    dialect = ledger.dialect.name
    with ledger.connect() as conn:
        assert name_search.available(conn)
    narrowed = 0
    for text in TEXTS:
        before = _found(ledger, text, None)
        assert _found(ledger, text, dialect) == before, text
        narrowed += len(text.lower()) >= name_search.MIN_CHARS
    assert narrowed >= 25
    # accents and case make no difference to a name, on both databases (0030)
    for text in ("joao", "JOAO", "joão", "JOÃO", "João"):
        assert _found(ledger, text, dialect) == ["V001", "V002", "V003"], text
    for text in ("angela", "ÂNGELA", "conceicao", "CONCEICAO", "ângela conceição"):
        assert _found(ledger, text, dialect) == ["V009", "V010"], text
    assert _found(ledger, "ca oo", dialect) == _found(ledger, "ÇÁ ÔÔ", dialect) == ["V011"]
    assert _found(ledger, "ÇÁ", dialect) == ["V009", "V010", "V011"]  # conceiÇÃo
    assert _found(ledger, "ana_", dialect) == ["V004"] and _found(ledger, "100%", dialect) == ["V006"]
    assert _found(ledger, "0A04A10001", dialect) == ["V012"] and _found(ledger, "pe", dialect) == ["V007"]
    with Session(ledger) as s:  # the page's own path, index chosen by the database
        rows = worker_list(s, ListQuery(q="silva"), today=TODAY, page_size=100).rows
    assert sorted(r.worker.registration for r in rows) == _found(ledger, "silva", None) == ["V001", "V002", "V003"]


def test_the_index_drives_the_search(ledger):
    """Over 5,000 workers (analysed), the page's query for a piece of a name reads the index
    (SQLite: the FTS table; PostgreSQL: the GIN index on ``lower(name)``)."""
    with ledger.begin() as conn:
        conn.execute(workers.insert(), [dict(registration=f"F{i:05d}", name=f"Fulano {i} de Tal", category="vigia",
                                             status="active", updated_at=NOW) for i in range(5000)])
        if ledger.dialect.name == "sqlite":
            conn.exec_driver_sql("ANALYZE")
    if ledger.dialect.name == "postgresql":  # as autovacuum does: GIN's pending list merged, statistics
        with ledger.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE workers")
    with ledger.connect() as conn:  # the page's own choice: SQLite narrows, PostgreSQL's planner picks the GIN
        narrow = name_search.selective(conn, "silva")
    assert narrow == (ledger.dialect.name == "sqlite")
    conds = list_conditions(ListQuery(q="silva"), TODAY, name_index=ledger.dialect.name if narrow else None)
    stmt = select(workers.c.registration).where(*conds).order_by(workers.c.name, workers.c.registration).limit(51)
    with ledger.connect() as conn:
        sql = str(stmt.compile(conn, compile_kwargs={"literal_binds": True}))
        if ledger.dialect.name == "sqlite":
            plan = " ".join(str(r[-1]) for r in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql))
            assert "worker_name_fts VIRTUAL TABLE INDEX" in plan, plan
        else:
            plan = " ".join(r[0] for r in conn.exec_driver_sql("EXPLAIN " + sql))
            assert "Bitmap Index Scan on ix_workers_name_folded_trgm" in plan, plan
    assert _found(ledger, "silva", ledger.dialect.name) == ["V001", "V002", "V003"]


def test_the_index_follows_every_write(ledger):
    """Every write through the registry (``save_worker``: an edit, an import) and any insert of the
    table (the column's default) keeps the folded name; the index follows it (triggers)."""
    dialect = ledger.dialect.name
    with Session(ledger) as s, s.begin():
        marta = dataclasses.replace(get_worker(s, "V012"), name="Marta Quixadá")
        save_worker(s, marta, actor="t", now=NOW, action="worker.edit")
    with ledger.begin() as conn:
        conn.execute(update(workers).where(workers.c.registration == "V011").values(registration="V099"))
        conn.execute(delete(workers).where(workers.c.registration == "V003"))
        conn.execute(workers.insert().values(registration="V100", name="Novo Quixadá", category="vigia",
                                             status="active", updated_at=NOW))
    for text, expected in (("quixadá", ["V012", "V100"]), ("QUIXADA", ["V012", "V100"]), ("ribeiro", []),
                           ("V09", ["V099"]), ("V01", ["V010", "V012"]), ("silva", ["V001", "V002"])):
        assert _found(ledger, text, dialect) == _found(ledger, text, None) == expected, text
    if dialect == "sqlite":
        with ledger.connect() as conn:
            indexed = conn.exec_driver_sql(
                "SELECT k.registration, f.name_folded FROM worker_name_fts f JOIN worker_name_keys k "
                "ON k.id = f.rowid ORDER BY k.registration").all()
            stored = conn.execute(select(workers.c.registration, workers.c.name)
                                  .order_by(workers.c.registration)).all()
        assert [tuple(r) for r in indexed] == [(reg, fold(name)) for reg, name in stored]


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)  # the triggers are SQLite's; PostgreSQL's GIN has none
def test_a_ledger_without_the_triggers_searches_as_before(ledger):
    """A ledger adopted by ``create_all`` over an older one, or a later migration that recreated
    ``workers`` and lost its triggers: ``available`` says no (the FTS table alone is not enough) and
    the page searches without the index, the same rows."""
    with ledger.begin() as conn:
        conn.exec_driver_sql("DROP TRIGGER workers_name_search_update")
    name_search._KNOWN.clear()
    with ledger.connect() as conn:
        assert not name_search.available(conn)
    with ledger.begin() as conn:
        conn.execute(update(workers).where(workers.c.registration == "V012").values(
            name="Marta Quixadá", name_folded="marta quixada"))
    with Session(ledger) as s:
        rows = worker_list(s, ListQuery(q="quixadá"), today=TODAY).rows
    assert [r.worker.registration for r in rows] == ["V012"]
    with ledger.begin() as conn:
        name_search.create(conn)  # made again: filled from workers as they are
    with ledger.connect() as conn:
        assert name_search.available(conn)
    assert _found(ledger, "quixadá", "sqlite") == ["V012"]


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)  # PostgreSQL's planner weighs its GIN index itself
def test_a_text_in_too_many_names_walks_the_name_index_instead(ledger, monkeypatch):
    """SQLite: a text the trigram table finds in more than ``MAX_CANDIDATES`` names is searched
    along the list's name index (a page fills within its first names), not through the index; a
    rarer one through it; the same rows either way."""
    from sqlalchemy import event

    seen: list[str] = []
    event.listen(ledger, "before_cursor_execute", lambda *a: seen.append(a[2]))
    monkeypatch.setattr(name_search, "MAX_CANDIDATES", 2)
    with Session(ledger) as s:
        common = [r.worker.registration for r in worker_list(s, ListQuery(q="silva"), today=TODAY).rows]  # 3 names
        page = [q for q in seen if "ORDER BY" in q]
        seen.clear()
        rare = [r.worker.registration for r in worker_list(s, ListQuery(q="rocha"), today=TODAY).rows]  # 2 names
        rare_page = [q for q in seen if "ORDER BY" in q]
    assert sorted(common) == ["V001", "V002", "V003"] and len(rare) == 2
    assert sorted(common) == _found(ledger, "silva", None) and sorted(rare) == _found(ledger, "rocha", None)
    assert len(page) == 1 and "MATCH" not in page[0]
    assert len(rare_page) == 1 and "worker_name_fts MATCH" in rare_page[0]


def test_migration_0030_folds_the_names_already_registered(db_url):
    """A ledger at 0028 holding workers (names raw, indexed raw by 0027) upgraded to head: each
    worker's folded name written, the index over it (SQLite: the FTS table's rows; PostgreSQL: the
    GIN index on ``name_folded`` instead of ``lower(name)``), and ``joao`` finds João through the
    page's own path on both databases; a worker added afterwards is indexed by the new triggers."""
    from sqlalchemy import table, column

    from central.db import make_engine
    from alembic.script import ScriptDirectory

    from central.ledger.migrate import alembic_config, upgrade_engine

    engine = make_engine(db_url)
    try:
        assert upgrade_engine(engine, "0028") == "0028"
        raw = table("workers", *(column(c) for c in ("registration", "name", "category", "status", "updated_at")))
        with engine.begin() as conn:  # as the registry wrote them before 0030: no folded name
            conn.execute(raw.insert(), [dict(registration=reg, name=name, category="vigia", status="active",
                                             updated_at=NOW) for reg, name in NAMES.items()])
        head = ScriptDirectory.from_config(alembic_config(db_url)).get_current_head()
        assert upgrade_engine(engine) == head  # the newest migration, whichever it is
        name_search._KNOWN.clear()
        with engine.connect() as conn:
            stored = dict(conn.execute(select(workers.c.registration, workers.c.name_folded)).all())
            assert stored == {reg: fold(name) for reg, name in NAMES.items()}
            assert stored["V010"] == "angela conceicao"
            if engine.dialect.name == "sqlite":
                indexed = conn.exec_driver_sql(f"SELECT name_folded FROM {name_search.FTS}").scalars().all()
                assert sorted(indexed) == sorted(stored.values())
            else:
                names = set(conn.exec_driver_sql(
                    "SELECT indexname FROM pg_indexes WHERE tablename = 'workers'").scalars())
                assert "ix_workers_name_folded_trgm" in names and "ix_workers_name_trgm" not in names
        with engine.begin() as conn:
            conn.execute(workers.insert().values(registration="V200", name="João Novo", category="vigia",
                                                 status="active", updated_at=NOW))
        with Session(engine) as s:
            for text in ("joao", "JOAO", "conceicao"):
                narrow = name_search.available(s.connection()) and name_search.selective(s.connection(), text)
                assert narrow == (engine.dialect.name == "sqlite"), text
                found = sorted(r.worker.registration for r in worker_list(s, ListQuery(q=text), today=TODAY).rows)
                assert found == (["V001", "V002", "V003", "V200"] if text != "conceicao" else ["V009", "V010"]), text
    finally:
        engine.dispose()
