

def test_a_database_made_by_create_all_is_adopted_not_recreated(tmp_path):
    """The ingest of an early build created tables without Alembic: migrating stamps it, then the
    pay command's migration does not fail with 'table already exists'."""
    from central.db import load_all_tables, make_engine
    from central.ledger.migrate import current, head, upgrade

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = make_engine(url)
    load_all_tables().create_all(engine)
    engine.dispose()
    assert current(url) is None
    assert upgrade(url) == head()
    assert upgrade(url) == head()
