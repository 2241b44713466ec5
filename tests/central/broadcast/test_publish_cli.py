"""``portgate central publish``: retained snapshots from CSV files, and a blocklist that keeps the
cards confiscated at the gates (real mosquitto, real SQLite ledger, the real command)."""

from __future__ import annotations

import subprocess
import sys
import threading

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from tests.central.ingest.conftest import PORT, now
from testkit.cli import run_here
from testkit.wait import wait_until
from wire import downlink as dl
from wire import topics
from wire.events import ConfiscationPayload
from wire.signed_downlink import body_of

CARDS = "uid,kind,registration,status\nAA000001,control,1001,active\nAA000002,control,1002,lost\n"


def portgate(*args) -> subprocess.CompletedProcess:
    """The installed command (a Python start): the first test's publish after a real office."""
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=60)


def portgate_here(*args, env=None) -> subprocess.CompletedProcess:
    """The same command through ``app.cli.main`` in this process (``testkit.cli.run_here``: no Python
    start): the refusals and the other publishes below."""
    return run_here(list(args), env=env)


def retained_blocklist(broker) -> dl.CardsSnapshot:
    got: list[bytes] = []
    ready = threading.Event()
    c = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    c.on_connect = lambda c, *_a: c.subscribe(topics.downlink(PORT, "cards", "snapshot"), 1)

    def on_message(_c, _u, msg):
        got.append(msg.payload)
        ready.set()

    c.on_message = on_message
    c.connect(broker.host, broker.port)
    c.loop_start()
    try:
        assert ready.wait(60), "no retained blocklist"
    finally:
        c.disconnect()
        c.loop_stop()
    return dl.decode_downlink(body_of(got[-1]), "cards", "snapshot", where="test")


def test_the_published_blocklist_keeps_the_cards_confiscated_at_the_gates(tmp_path, broker, office, make_gate):
    office.start(broker)
    gate = make_gate("g1")
    gate.start(broker)
    gate.journal.append(ConfiscationPayload(uid="AA000009", registration="1009", inspector_uid="FF000001",
                                            inspector_registration="F1", reason_flag="BORROWED_CARD",
                                            article="83.611 art. 20 j/l"), now=now(), priority=1)
    gate.sync.notify()
    wait_until(lambda: len(office.events("g1")) == 1, what="the confiscation in the ledger")
    office.stop_all()
    cards = tmp_path / "cards.csv"
    cards.write_text(CARDS)
    config = tmp_path / "central.toml"
    config.write_text(f'database_url = "{office.url}"\nport = "{PORT}"\nkeys_dir = "{office.keys_dir}"\n'
                      f'[mqtt]\nhost = "{broker.host}"\nport = {broker.port}\n')
    done = portgate("central", "publish", "--config", str(config), "--cards", str(cards))
    assert done.returncode == 0, done.stderr
    snap = retained_blocklist(broker)
    assert {(b.uid, b.reason) for b in snap.blocked} == {("AA000002", "lost"), ("AA000009", "confiscated")}


def test_a_blocklist_without_the_ledger_is_refused_unless_asked_for(tmp_path, broker):
    cards = tmp_path / "cards.csv"
    cards.write_text(CARDS)
    where = ["--host", broker.host, "--mqtt-port", str(broker.port), "--port", PORT, "--cards", str(cards)]
    refused = portgate_here("central", "publish", *where)
    assert refused.returncode == 2 and "--cards needs --config" in refused.stderr
    done = portgate_here("central", "publish", *where, "--no-ledger")
    assert done.returncode == 0, done.stderr
    assert [b.uid for b in retained_blocklist(broker).blocked] == ["AA000002"]


def _config(tmp_path, database_url, broker) -> str:
    config = tmp_path / "central.toml"
    config.write_text(f'database_url = "{database_url}"\nport = "{PORT}"\n'
                      f'keys_dir = "{tmp_path}"\n[mqtt]\nhost = "{broker.host}"\nport = {broker.port}\n')
    return str(config)


def test_a_missing_sqlite_ledger_is_a_clear_error_and_is_not_created(tmp_path, broker):
    cards = tmp_path / "cards.csv"
    cards.write_text(CARDS)
    missing = tmp_path / "ledger.db"
    failed = portgate_here("central", "publish", "--config", _config(tmp_path, f"sqlite:///{missing}", broker),
                      "--cards", str(cards))
    assert failed.returncode == 1, failed.stderr
    assert f"ledger database sqlite:///{missing}: file {missing} does not exist" in failed.stderr
    assert "portgate ledger migrate --db URL" in failed.stderr and "Traceback" not in failed.stderr
    assert len(failed.stderr.strip().splitlines()) == 1
    assert not missing.exists() and not list(tmp_path.glob("ledger.db*"))


def test_a_database_without_the_events_table_is_not_a_ledger(tmp_path, broker):
    import sqlite3

    cards = tmp_path / "cards.csv"
    cards.write_text(CARDS)
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY)")
    db.close()
    failed = portgate_here("central", "publish", "--config", _config(tmp_path, f"sqlite:///{other}", broker),
                      "--cards", str(cards))
    assert failed.returncode == 1, failed.stderr
    assert f"ledger database sqlite:///{other} has no events table" in failed.stderr
    assert "Traceback" not in failed.stderr and len(failed.stderr.strip().splitlines()) == 1


def test_an_unreachable_broker_exits_1_naming_it(tmp_path):
    from app.demo.mosquitto import free_port

    cards = tmp_path / "cards.csv"
    cards.write_text(CARDS)
    port = free_port()  # nothing listens there
    failed = portgate_here("central", "publish", "--host", "127.0.0.1", "--mqtt-port", str(port), "--port", PORT,
                      "--cards", str(cards), "--no-ledger")
    assert failed.returncode == 1, failed.stderr
    assert f"MQTT broker 127.0.0.1:{port} not reachable" in failed.stderr
    assert "Traceback" not in failed.stderr and len(failed.stderr.strip().splitlines()) == 1


def test_snapshots_the_broker_never_acknowledges_are_an_error(tmp_path):
    """A broker that takes the connection and answers nothing: exit 1, not "published"."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held = []
    threading.Thread(target=lambda: held.append(server.accept()), daemon=True).start()
    escala = tmp_path / "escala.csv"
    escala.write_text("date,period,ship,ship_name,voyage,berth,gate_id,post,function,registration\n")
    try:
        failed = portgate_here("central", "publish", "--host", "127.0.0.1", "--mqtt-port", str(server.getsockname()[1]),
                          "--port", PORT, "--escala", str(escala))
    finally:
        server.close()
    assert failed.returncode == 1 and "not acknowledged" in failed.stderr and "Traceback" not in failed.stderr


def test_snapshots_the_broker_refuses_are_an_error(tmp_path):
    """The broker's ACL lets the publisher read but not write: PUBACK "Not authorized", exit 1."""
    from app.demo.mosquitto import Mosquitto

    broker = Mosquitto(tmp_path / "acl", users={"office": "pw"}, acl="user office\ntopic read #\n").start()
    try:
        pw = tmp_path / "pw"
        pw.write_text("pw")
        pw.chmod(0o600)
        config = tmp_path / "central.toml"
        config.write_text(f'database_url = "sqlite:///{tmp_path}/l.db"\nport = "{PORT}"\nkeys_dir = "{tmp_path}"\n'
                          f'[mqtt]\nhost = "{broker.host}"\nport = {broker.port}\nusername = "office"\n'
                          f'password_file = "{pw}"\n')
        cards = tmp_path / "cards.csv"
        cards.write_text(CARDS)
        failed = portgate_here("central", "publish", "--config", str(config), "--cards", str(cards), "--no-ledger")
        assert failed.returncode == 1 and "refused" in failed.stderr, failed.stderr
    finally:
        broker.kill()


WORKERS = ("registration,name,category,status,suspended_from,suspended_until,health_exam_date,"
           "booklet_revalidated_year,rotation_number,cpf,pis\n"
           "1001,Ana Lima,vigia,active,,,2025-06-01,,1,000.000.001-91,000.00000.01-9\n")


def _files(tmp_path, inspectors: str) -> list[str]:
    (tmp_path / "workers.csv").write_text(WORKERS)
    (tmp_path / "cards.csv").write_text(CARDS)
    (tmp_path / "inspectors.csv").write_text("registration,name\n" + inspectors)
    return ["--workers", str(tmp_path / "workers.csv"), "--cards", str(tmp_path / "cards.csv"), "--no-ledger"]


@pytest.mark.parametrize("inspectors, said", [
    ("F001,Helena Duarte Rocha\nF001,Outra Pessoa\n", "inspectors.csv:3: matrícula F001 repete a linha 2"),
    ("F001,=cmd\n", "inspectors.csv:2: o nome '=cmd' começa com '='"),
])
def test_bad_inspectors_are_refused_before_the_broker_is_reached(tmp_path, inspectors, said):
    """A repeated registration (one name would be dropped unseen) or a formula lead in a name: exit 2
    in pt-BR with the usual prefix, though no broker listens (the files are checked first)."""
    from app.demo.mosquitto import free_port

    failed = portgate_here("central", "publish", "--host", "127.0.0.1", "--mqtt-port", str(free_port()),
                           "--port", PORT, *_files(tmp_path, inspectors), env={"PORTGATE_LANG": "pt"})
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert failed.stderr.startswith("portgate: ") and said in failed.stderr, failed.stderr
    assert "MQTT" not in failed.stderr


def test_an_unreachable_broker_has_the_usual_prefix(tmp_path):
    from app.demo.mosquitto import free_port

    failed = portgate_here("central", "publish", "--host", "127.0.0.1", "--mqtt-port", str(free_port()),
                           "--port", PORT, *_files(tmp_path, "F001,Helena\n"), env={"PORTGATE_LANG": "pt"})
    assert failed.returncode == 1, failed.stderr
    assert failed.stderr.startswith("portgate: broker MQTT 127.0.0.1:"), failed.stderr


def test_the_published_versions_speak_the_command_lines_language(tmp_path, broker):
    where = ["--host", broker.host, "--mqtt-port", str(broker.port), "--port", PORT, "--version", "7"]
    done = portgate_here("central", "publish", *where, *_files(tmp_path, "F001,Helena\n"), env={"PORTGATE_LANG": "pt"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["roster: versão 7", "cards: versão 7"], done.stdout
    done = portgate_here("central", "publish", *where, *_files(tmp_path, "F001,Helena\n"), env={"PORTGATE_LANG": "en"})
    assert done.stdout.splitlines() == ["roster: version 7", "cards: version 7"], done.stdout
