"""A reader unplugged at the gangway is seen on the watchman's screen and at the office, in real
browsers (issue 33 item 2): a real gate (serial readers on ptys) with its screen, a private
mosquitto, ``portgate central run`` (ingest) and ``portgate office serve``. Closing the badge
reader's pty turns the screen to "LEITOR SEM SINAL" and the office's gate card to the reader fault
within 5 s, with a reader alarm in the alarm list; plugging it back ends both."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import time

import pytest
from sqlalchemy.orm import Session

from app.demo.mosquitto import Mosquitto, free_port
from central.db import make_engine
from central.ingest.keys import add_gate
from central.ledger.migrate import upgrade_engine
from central.registry.store import import_files
from central.web.users import add_user
from testkit.browser import launch_chromium
from testkit.display import GateWithScreen
from tests.central.web.port import DEMO, PASSWORD, PORTGATE, wait_until

GATE = "g-aurora"


class Office:
    """Broker, ingest and web over a fresh SQLite ledger with the demo registry."""

    def __init__(self, root) -> None:
        self.root = root
        self.url_db = f"sqlite:///{root / 'ledger.db'}"
        engine = make_engine(self.url_db)
        upgrade_engine(engine)
        with Session(engine) as s, s.begin():
            import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="test",
                         now=dt.datetime.now(dt.UTC))
            add_user(s, "escritorio", role="office", password=PASSWORD, name="Escritório", actor="test")
        engine.dispose()
        self.broker = Mosquitto(root / "broker")
        self.keys = root / "keys"
        self.keys.mkdir()
        self.key_file = add_gate(self.keys, GATE)
        self.web_port = free_port()
        self.url = f"http://127.0.0.1:{self.web_port}"
        self.procs: list[subprocess.Popen] = []

    def start(self) -> Office:
        self.broker.start()
        central = self.root / "central.toml"
        central.write_text(
            f'database_url = "{self.url_db}"\nport = "santos"\nkeys_dir = "{self.keys}"\nworkers = 1\n'
            f'log_json = true\n\n[mqtt]\nhost = "127.0.0.1"\nport = {self.broker.port}\nclient_id = "ledger-r"\n\n'
            '[ingest]\nbatch_time_s = 0.02\n\n[web]\npoll_s = 0.2\n')
        log = self.root / "central.log"
        self.procs.append(subprocess.Popen([*PORTGATE, "central", "run", "--config", str(central)],
                                           stdout=open(log, "ab"), stderr=subprocess.STDOUT))
        wait_until(lambda: "ingest.connected" in log.read_text(errors="replace"), 30, what="the ingest")
        self.procs.append(subprocess.Popen([*PORTGATE, "office", "serve", "--config", str(central), "--port",
                                            str(self.web_port)], stdout=open(self.root / "web.log", "ab"),
                                           stderr=subprocess.STDOUT))
        return self

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.broker.kill()


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    o = Office(tmp_path_factory.mktemp("office"))
    try:
        yield o.start()
    finally:
        o.stop()


@pytest.fixture(scope="module")
def gate(office, tmp_path_factory):
    g = GateWithScreen(tmp_path_factory.mktemp("gate") / "gate", gate_id=GATE, extra=(
        f'[mqtt]\nhost = "127.0.0.1"\nport = {office.broker.port}\nclient_id = "gate-{GATE}"\n'
        "reconnect_min_s = 0.2\nreconnect_max_s = 1\n"))  # [sync] status_every_s: the default 30 s
    shutil.copyfile(office.key_file, g.root / "gate.key")  # the key the office knows this gate by
    g.start_gate()
    g.start_display()
    yield g
    g.stop()


def _log_in(page, office: Office) -> None:
    page.goto(office.url + "/login")
    page.get_by_label("Usuário").fill("escritorio")
    page.get_by_label("Senha").fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(office.url + "/")


def test_an_unplugged_reader_is_seen_on_the_screen_and_at_the_office_and_ends_when_it_is_back(office, gate):
    wait_until(lambda: _answers(office.url + "/login"), 30, what="the office web application")
    with launch_chromium() as browser:
        desk = browser.new_page(viewport={"width": 1366, "height": 768})
        desk.set_default_timeout(20_000)
        _log_in(desk, office)
        card = desk.locator(f'article[data-gate="{GATE}"]')
        desk.locator(f'[data-gate="{GATE}"][data-state="online"][data-readers="ok"]').wait_for(timeout=30_000)
        assert "r-badge: ok" in card.inner_text() and "r-control: ok" in card.inner_text()
        screen = browser.new_page(viewport={"width": 800, "height": 480})
        screen.goto(gate.url)
        screen.wait_for_selector("#now[data-state='idle']")

        gate.ptys["badge"].unplug()  # the badge reader's pty closes
        unplugged = time.monotonic()
        screen.wait_for_selector("#now[data-state='reader-fault'] .reader[data-reader='r-badge']", timeout=60_000)
        desk.locator(f'[data-gate="{GATE}"][data-readers="fault"]').wait_for(
            timeout=max(100, 5_000 - (time.monotonic() - unplugged) * 1000))
        assert "r-badge: SEM SINAL desde" in card.inner_text()
        alarm = desk.locator(f'.reader-alarm[data-alarm-gate="{GATE}"][data-reader="r-badge"]')
        alarm.wait_for()
        assert alarm.inner_text().startswith(f"LEITOR SEM SINAL: Portaló {GATE} · Leitor r-badge (chapa)")

        gate.ptys["badge"].plug()  # back: the driver reopens it by itself
        screen.wait_for_selector("#now[data-state='idle']", timeout=60_000)
        desk.locator(f'[data-gate="{GATE}"][data-readers="ok"]').wait_for(timeout=60_000)
        alarm.wait_for(state="detached")
        desk.goto(office.url + "/alarms")
        row = desk.locator(f'#reader-alarm-list tr[data-gate="{GATE}"][data-reader="r-badge"]')
        assert row.count() == 1 and row.get_attribute("data-open") == "no"


def _answers(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False
