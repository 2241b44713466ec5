"""A photo uploaded on the worker's page reaches a gate through a real mosquitto and the photo
downlink (``central.web.photo_publish``), a replacement too; with the broker unreachable the photo
is kept and the page says it was not sent, and the next publish takes it."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import uuid

import pytest
from PIL import Image
from sqlalchemy.orm import Session
from starlette.testclient import TestClient

from app.demo.mosquitto import Mosquitto, free_port
from central.config import WebSettings
from central.db import make_engine
from central.ledger.migrate import upgrade_engine
from central.registry.store import import_files
from central.web.app import create_app
from central.web.photo_publish import photo_publisher
from central.web.users import add_user
from edge.journal import Journal
from edge.store import Store
from edge.sync import Sync, SyncSettings
from edge.sync.photos import PhotoStore
from testkit.wait import wait_until
from tests.central.web.conftest import PASSWORD, SECRET, csrf_of, login
from tests.central.web.live import DEMO
from wire.connection import MqttConfig

PORT = "santos"


@pytest.fixture
def broker(tmp_path):
    m = Mosquitto(tmp_path / "broker")
    m.start()
    yield m
    m.kill()


@pytest.fixture
def gate(tmp_path, broker):
    state = tmp_path / "gate-state"
    journal = Journal(state / "journal.db", port=PORT, gate_id="g1", key=b"k" * 16, boot_id=str(uuid.uuid4()))
    store = Store(state / "store.db", gate_id="g1")
    photos = PhotoStore(state)
    sync = Sync(MqttConfig(host=broker.host, port=broker.port, reconnect_min_s=0.2, reconnect_max_s=1),
                journal, store, port=PORT, gate_id="g1", settings=SyncSettings(check_every_s=0.2),
                photos=photos).start()
    wait_until(sync.connected.is_set, what="gate connected")
    yield photos
    sync.stop()
    journal.close()
    store.close()
    photos.close()


def _office(tmp_path, mqtt: MqttConfig):
    engine = make_engine(f"sqlite:///{tmp_path / 'ledger.db'}")
    upgrade_engine(engine)
    with Session(engine) as s, s.begin():
        import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="test",
                     now=dt.datetime.now(dt.UTC))
        add_user(s, "office", role="office", password=PASSWORD, name="Office", actor="test")
    photos_dir = tmp_path / "photos"
    app = create_app(engine, WebSettings(photos_dir=str(photos_dir)), SECRET, background=False,
                     publish_photos=photo_publisher(mqtt, PORT))
    client = TestClient(app, base_url="http://testserver", follow_redirects=False)
    assert login(client, "office").status_code == 303
    return client, photos_dir, engine


def _jpeg(colour) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (300, 400), colour).save(out, "JPEG")
    return out.getvalue()


def _upload(client, reg: str, data: bytes):
    csrf = csrf_of(client.get(f"/workers/{reg}").text)
    return client.post(f"/workers/{reg}/photo", data={"csrf_token": csrf},
                       files={"photo": ("foto.jpg", data, "image/jpeg")})


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_uploaded_photo_and_its_replacement_reach_the_gate(tmp_path, broker, gate):
    client, photos_dir, engine = _office(tmp_path, MqttConfig(host=broker.host, port=broker.port))
    r = _upload(client, "V001", _jpeg((200, 30, 30)))
    assert r.status_code == 303 and "photo=sent-" in r.headers["location"]
    first = _sha(photos_dir / "V001.jpg")
    wait_until(lambda: gate.path("V001") is not None and gate.path("V001").name == first, what="photo at the gate")
    assert gate.path("V001").read_bytes() == (photos_dir / "V001.jpg").read_bytes()
    page = client.get(r.headers["location"]).text
    assert 'id="photo-sent" data-state="sent"' in page and "Foto enviada aos portalós" in page

    r = _upload(client, "V001", _jpeg((30, 30, 200)))  # a replacement: a delta with the new file
    second = _sha(photos_dir / "V001.jpg")
    assert second != first and "photo=sent-" in r.headers["location"]
    wait_until(lambda: gate.path("V001") is not None and gate.path("V001").name == second,
               what="replaced photo at the gate")
    r = _upload(client, "V003", _jpeg((30, 200, 30)))  # another worker's: V001's stays
    wait_until(lambda: gate.path("V003") is not None, what="second worker's photo at the gate")
    assert gate.path("V001").name == second
    engine.dispose()


def test_with_the_broker_unreachable_the_photo_is_kept_and_goes_with_the_next_publish(tmp_path, broker, gate):
    down = MqttConfig(host="127.0.0.1", port=free_port())
    client, photos_dir, engine = _office(tmp_path, down)
    r = _upload(client, "V001", _jpeg((200, 30, 30)))
    assert r.status_code == 303 and r.headers["location"].endswith("photo=unsent")
    assert (photos_dir / "V001.jpg").is_file()
    page = client.get(r.headers["location"]).text
    assert 'data-state="unsent"' in page and "NÃO enviada aos portalós" in page
    # the broker is back (this server's publisher now reaches it): the next upload sends both
    up = photo_publisher(MqttConfig(host=broker.host, port=broker.port), PORT)
    client.app.state.web.publish_photos = up
    _upload(client, "V003", _jpeg((30, 200, 30)))
    wait_until(lambda: gate.path("V001") is not None and gate.path("V003") is not None, what="both photos at the gate")
    assert gate.path("V001").name == _sha(photos_dir / "V001.jpg")
    engine.dispose()


def test_a_server_without_a_broker_says_the_photo_waits_for_central_publish(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'ledger.db'}")
    upgrade_engine(engine)
    with Session(engine) as s, s.begin():
        import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="test",
                     now=dt.datetime.now(dt.UTC))
        add_user(s, "office", role="office", password=PASSWORD, name="Office", actor="test")
    app = create_app(engine, WebSettings(photos_dir=str(tmp_path / "photos")), SECRET, background=False)
    client = TestClient(app, base_url="http://testserver", follow_redirects=False)
    login(client, "office")
    r = _upload(client, "V001", _jpeg((1, 2, 3)))
    assert r.headers["location"].endswith("photo=off")
    assert "portgate central publish --photos" in client.get(r.headers["location"]).text
    engine.dispose()


def test_a_photo_uploaded_while_the_gate_is_offline_reaches_it_when_it_reconnects(tmp_path, broker):
    """The gate's MQTT session is persistent (``clean_start=False``, session expiry): the broker
    keeps the QoS 1 photo messages for it while it is away and delivers them when it is back."""
    state = tmp_path / "gate-state"

    def start_gate():
        journal = Journal(state / "journal.db", port=PORT, gate_id="g1", key=b"k" * 16, boot_id=str(uuid.uuid4()))
        store = Store(state / "store.db", gate_id="g1")
        photos = PhotoStore(state)
        sync = Sync(MqttConfig(host=broker.host, port=broker.port, reconnect_min_s=0.2, reconnect_max_s=1),
                    journal, store, port=PORT, gate_id="g1", settings=SyncSettings(check_every_s=0.2),
                    photos=photos).start()
        wait_until(sync.connected.is_set, what="gate connected")
        return sync, journal, store, photos

    def stop_gate(parts):
        sync, journal, store, photos = parts
        sync.stop()
        journal.close()
        store.close()
        photos.close()

    client, photos_dir, engine = _office(tmp_path, MqttConfig(host=broker.host, port=broker.port))
    parts = start_gate()
    _upload(client, "V001", _jpeg((200, 30, 30)))
    wait_until(lambda: parts[3].path("V001") is not None, what="first photo at the gate")
    stop_gate(parts)
    r = _upload(client, "V003", _jpeg((30, 200, 30)))  # the gate is away
    assert "photo=sent-" in r.headers["location"]
    parts = start_gate()
    try:
        wait_until(lambda: parts[3].path("V003") is not None, what="photo sent while offline at the gate")
        assert parts[3].path("V003").name == _sha(photos_dir / "V003.jpg")
        assert parts[3].path("V001") is not None
    finally:
        stop_gate(parts)
        engine.dispose()
