"""A private PostgreSQL ledger for the office web tests that stop or freeze its server for real
(tests/central/web/test_ledger_down.py, test_ledger_frozen.py): the session's ``pg_cluster`` is
shared by other tests, so each of these modules starts a cluster of its own.

Import the fixtures into the test module (``from .private_ledger import cluster, ledger``):

- ``cluster``: a started ``testkit.postgres.PostgresCluster`` (module scope, stopped after);
- ``ledger``: its migrated engine with one ``office`` user (password ``PASSWORD`` of conftest.py),
  the argon2 hasher answering each (hash, password) pair once (``_VerifyOnce``).

``stop_server(cluster)`` stops the server (``pg_ctl stop -m fast``) the way a lost primary goes;
``cluster.restart()`` starts it again on its port."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from central.db import make_engine
from central.ledger.migrate import upgrade_engine
from central.web import users as users_module
from central.web.users import add_user
from testkit.postgres import PostgresCluster

from .conftest import PASSWORD, _VerifyOnce

#: the 503 page's pt-BR words when the ledger is unreachable (message ``reconnecting``)
DOWN_PT = "O livro-razão (banco de dados) está indisponível agora"


@pytest.fixture(scope="module")
def cluster():
    pg = PostgresCluster()
    pg.start()
    yield pg
    pg.stop(remove_in_background=True)  # its files by a detached rm -rf (testkit/postgres.py)


@pytest.fixture(scope="module")
def ledger(cluster):
    mp = pytest.MonkeyPatch()
    mp.setattr(users_module, "_hasher", _VerifyOnce(users_module._hasher))
    engine = make_engine(cluster.url)
    upgrade_engine(engine)
    with Session(engine) as s, s.begin():
        add_user(s, "office", role="office", password=PASSWORD, name="office user", actor="test")
    yield engine
    engine.dispose()
    mp.undo()


def stop_server(cluster: PostgresCluster) -> None:
    """Stop ``cluster``'s server (fast shutdown, waiting for it): its connections are cut."""
    cluster._run("pg_ctl", "-D", str(cluster.datadir), "-m", "fast", "-w", "stop")
