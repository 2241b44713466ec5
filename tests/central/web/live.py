"""The office web application served by uvicorn on loopback in a thread of the test process,
over a migrated SQLite ledger holding the demo registry: what the browser tests of the office's
daily and monthly screens drive (no broker or gate needed for these screens).

The ledger each ``LiveOffice`` starts from (migrated, the demo registry imported, the clerk
``escritorio``) is made once per test process and copied (``sqlite3`` backup) into the office's
directory: each office still writes only its own file, and sixteen modules no longer migrate,
import and hash a password of their own (~3.5 s each at load 16; issue 32 item 1). While an office
serves, each (hash, password) pair is checked by argon2 once per process (``LiveOffice.start``)."""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import shutil
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from sqlalchemy.orm import Session

from app.demo.mosquitto import free_port
from central.config import WebSettings
from central.db import make_engine
from central.ledger.migrate import upgrade_engine
from central.registry.store import import_files
from central.web import users as users_module
from central.web.app import create_app
from central.web.users import add_user
from tests.central.web.conftest import _VerifyOnce

DEMO = Path(__file__).resolve().parents[3] / "config" / "demo"
PASSWORD = "office password 1"
SLIP_KEY = b"k" * 32


_TEMPLATE: list[Path] = []  # this process's starting ledger (made on first use)


def _template() -> Path:
    """The starting ledger of every ``LiveOffice`` of this process, made on first use in a
    directory of its own (removed when the process ends): migrated to head, the demo registry
    (``config/demo`` workers and cards), the clerk ``escritorio`` (role office, ``PASSWORD``)."""
    if not _TEMPLATE:
        folder = Path(tempfile.mkdtemp(prefix="live-office-ledger-"))
        atexit.register(shutil.rmtree, folder, True)
        engine = make_engine(f"sqlite:///{folder / 'ledger.db'}")
        try:
            upgrade_engine(engine)
            with Session(engine) as s, s.begin():
                import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="test",
                             now=dt.datetime.now(dt.UTC))
                add_user(s, "escritorio", role="office", password=PASSWORD, name="Escritório", actor="test")
        finally:
            engine.dispose()
        _TEMPLATE.append(folder / "ledger.db")
    return _TEMPLATE[0]


class LiveOffice:
    def __init__(self, root: Path, now=None) -> None:
        self.root = root
        self.url_db = f"sqlite:///{root / 'ledger.db'}"
        self.photos = root / "photos"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        with contextlib.closing(sqlite3.connect(_template())) as src, \
                contextlib.closing(sqlite3.connect(root / "ledger.db")) as dst:
            src.backup(dst)  # the process's migrated ledger with the registry and the clerk
        self.engine = make_engine(self.url_db)
        settings = WebSettings(photos_dir=str(self.photos))
        self.app = create_app(self.engine, settings, b"x" * 32, now=now, background=False, slip_key=SLIP_KEY)
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> LiveOffice:
        """Serve; until ``stop()`` the users module hashes each password and verifies each (hash,
        password) pair once per process (``_VerifyOnce``, tests/central/web/conftest.py): a login
        in the browser is ~0.23 s of argon2 CPU (four lanes), and a module logs in many times with
        the same password (issue 32 item 1). Answers are the real check's, wrong passwords too."""
        self.hasher = users_module._hasher
        if not isinstance(self.hasher, _VerifyOnce):
            users_module._hasher = _VerifyOnce(self.hasher)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise AssertionError("uvicorn did not start")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        with contextlib.suppress(Exception):
            self.thread.join(10)
        self.engine.dispose()
        if hasattr(self, "hasher"):
            users_module._hasher = self.hasher


def log_in(page, office: LiveOffice) -> None:
    page.goto(office.url + "/login")
    page.get_by_label("Usuário").fill("escritorio")
    page.get_by_label("Senha").fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(office.url + "/")
