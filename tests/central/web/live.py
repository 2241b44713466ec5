"""The office web application served by uvicorn on loopback in a thread of the test process,
over a migrated SQLite ledger holding the demo registry: what the browser tests of the office's
daily and monthly screens drive (no broker or gate needed for these screens)."""

from __future__ import annotations

import contextlib
import datetime as dt
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
from central.web.app import create_app
from central.web.users import add_user

DEMO = Path(__file__).resolve().parents[3] / "config" / "demo"
PASSWORD = "office password 1"
SLIP_KEY = b"k" * 32


class LiveOffice:
    def __init__(self, root: Path, now=None) -> None:
        self.root = root
        self.url_db = f"sqlite:///{root / 'ledger.db'}"
        self.photos = root / "photos"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.engine = make_engine(self.url_db)
        upgrade_engine(self.engine)
        with Session(self.engine) as s, s.begin():
            import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="test",
                         now=dt.datetime.now(dt.UTC))
            add_user(s, "escritorio", role="office", password=PASSWORD, name="Escritório", actor="test")
        settings = WebSettings(photos_dir=str(self.photos))
        self.app = create_app(self.engine, settings, b"x" * 32, now=now, background=False, slip_key=SLIP_KEY)
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> LiveOffice:
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


def log_in(page, office: LiveOffice) -> None:
    page.goto(office.url + "/login")
    page.get_by_label("Usuário").fill("escritorio")
    page.get_by_label("Senha").fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(office.url + "/")
