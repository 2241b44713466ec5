"""Backups of the ledger with pgBackRest (issue 37 item 3; Debian ``pgbackrest``): WAL archived as it
is written (``archive_command``), a full backup, and a restore to a point in time tested on a real
PostgreSQL: the registry imported, then an operator's mistaken statement that makes every card lost --
the ledger restored to a moment between the two has the registry with its cards active again.

The restore runs as the operator would (docs/operations.md "Backups"): stop the server, ``pgbackrest
restore --delta --type=time --target=T --target-action=promote``, start it."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from central.db import make_engine
from central.ledger.migrate import upgrade
from central.registry.schema import cards, workers
from central.registry.store import import_files
from testkit.postgres import PostgresCluster
from testkit.wait import wait_until

pytestmark = pytest.mark.postgres

DEMO = Path(__file__).resolve().parents[2] / "config" / "demo"
STANZA = "portgate"


class Backrest:
    """``pgbackrest`` with a configuration of its own (repository, logs and locks in one directory),
    run as the server's user."""

    def __init__(self, pg: PostgresCluster) -> None:
        self.pg = pg
        self.dir = pg.tmp / "backrest"
        for sub in ("repo", "log", "lock", "spool"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self.conf = self.dir / "pgbackrest.conf"
        self.conf.write_text(
            "[global]\n"
            f"repo1-path={self.dir / 'repo'}\nlog-path={self.dir / 'log'}\nlock-path={self.dir / 'lock'}\n"
            f"spool-path={self.dir / 'spool'}\nstart-fast=y\nlog-level-console=warn\n"
            f"[{STANZA}]\npg1-path={pg.datadir}\npg1-port={pg.port}\npg1-socket-path={pg.tmp}\npg1-user=postgres\n")
        if pg.user:
            shutil.chown(self.dir, pg.user, pg.user)
            for path in self.dir.rglob("*"):
                shutil.chown(path, pg.user, pg.user)

    def bare(self, *args: str) -> list[str]:
        """The command as the server runs it (``archive_command``: already the server's user)."""
        return ["pgbackrest", f"--config={self.conf}", f"--stanza={STANZA}", *args]

    def command(self, *args: str) -> list[str]:
        cmd = self.bare(*args)
        return ["runuser", "-u", self.pg.user, "--", *cmd] if self.pg.user else cmd

    def run(self, *args: str) -> str:
        done = subprocess.run(self.command(*args), capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, f"pgbackrest {' '.join(args)}: {done.stdout}{done.stderr}"
        return done.stdout


@pytest.fixture
def archived_pg(tmp_path):
    assert shutil.which("pgbackrest"), "pgbackrest is not installed: scripts/setup.sh installs it (as root)"
    pg = PostgresCluster(options="-c wal_level=replica -c archive_mode=on -c full_page_writes=on -c max_wal_senders=3")
    pg.start()
    backrest = Backrest(pg)
    pg.options += f" -c archive_command='{' '.join(backrest.bare('archive-push', '%p'))}'"
    pg._run("pg_ctl", "-D", str(pg.datadir), "-m", "fast", "-w", "stop")
    pg.restart()  # archive_command takes effect on start
    yield pg, backrest
    pg.stop()


def counts(url: str) -> tuple[int, int]:
    engine = make_engine(url)
    try:
        with engine.connect() as c:
            return (c.execute(select(func.count()).select_from(workers)).scalar_one(),
                    c.execute(select(func.count()).select_from(cards).where(cards.c.status == "active")).scalar_one())
    finally:
        engine.dispose()


def server_time(engine) -> str:
    with engine.connect() as c:
        return str(c.execute(text("SELECT clock_timestamp()")).scalar_one())


def test_restore_to_a_point_in_time_before_a_mistake(archived_pg):
    pg, backrest = archived_pg
    upgrade(pg.url)
    backrest.run("stanza-create")
    backrest.run("check", "--archive-timeout=20")  # the archive_command reaches the repository
    backrest.run("backup", "--type=full")
    engine = make_engine(pg.url)
    with Session(engine) as s, s.begin():
        import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="clerk")
    good = counts(pg.url)
    assert good[0] > 0 and good[1] > 0
    time.sleep(1.0)
    target = server_time(engine)  # the point to return to
    time.sleep(1.0)
    with engine.begin() as c:  # an operator's mistaken statement in psql: every card lost
        c.execute(cards.update().values(status="lost"))
    assert counts(pg.url)[1] == 0  # no active card left: nobody boards
    with engine.begin() as c:  # the WAL with the mistake in it is archived too
        segment = c.execute(text("SELECT pg_walfile_name(pg_switch_wal())")).scalar_one()

    def archived() -> bool:
        with engine.connect() as c:
            last = c.execute(text("SELECT last_archived_wal FROM pg_stat_archiver")).scalar_one()
        return last is not None and last >= segment

    wait_until(archived, timeout=30, interval=0.2, what=f"WAL segment {segment} archived")
    engine.dispose()

    pg._run("pg_ctl", "-D", str(pg.datadir), "-m", "fast", "-w", "stop")
    backrest.run("restore", "--delta", "--type=time", f"--target={target}", "--target-action=promote")
    pg.restart()
    wait_until(lambda: _writable(pg.url), timeout=60, what="the restored server promoted")
    assert counts(pg.url) == good  # the registry as it was, every card active again


def _writable(url: str) -> bool:
    engine = make_engine(url)
    try:
        with engine.connect() as c:
            return not c.execute(text("SELECT pg_is_in_recovery()")).scalar_one()
    except Exception:  # noqa: BLE001 - still starting
        return False
    finally:
        engine.dispose()
