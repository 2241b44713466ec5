"""Workers' photos from the office to a gate through a real mosquitto: content-addressed files,
hash and size checked on arrival, deltas when a photo changes (``central.broadcast.photos``,
``edge.sync.photos``)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid

import pytest

from central.broadcast.photos import MANIFEST, publish_photos, scan
from edge.journal import Journal
from edge.store import Store
from edge.sync import Sync, SyncSettings
from edge.sync.photos import PhotoStore
from portgate.errors import BadInput
from testkit.display import png
from app.demo.mosquitto import Mosquitto
from testkit.wait import wait_until
from wire import connection, topics
from wire.connection import MqttConfig
from wire.downlink import PhotoFile, encode

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
    photos = PhotoStore(state, max_bytes=4096)
    sync = Sync(MqttConfig(host=broker.host, port=broker.port, reconnect_min_s=0.2, reconnect_max_s=1),
                journal, store, port=PORT, gate_id="g1", settings=SyncSettings(check_every_s=0.2),
                photos=photos).start()
    wait_until(sync.connected.is_set, what="gate connected")
    yield sync, photos, state
    sync.stop()
    journal.close()
    store.close()
    photos.close()


@pytest.fixture
def office(broker):
    cfg = MqttConfig(host=broker.host, port=broker.port)
    client = connection.make_client(cfg, "publisher-test")
    client.connect(cfg.host, cfg.port)
    client.loop_start()
    yield client
    client.disconnect()
    client.loop_stop()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_photos_reach_the_gate_as_files_named_by_their_hash_and_a_change_goes_as_a_delta(tmp_path, gate, office):
    sync, photos, state = gate
    src = tmp_path / "photos"
    src.mkdir()
    (src / "V001.png").write_bytes(png(1))
    (src / "V002.png").write_bytes(png(2))
    first = publish_photos(office, PORT, src)
    assert first["files"] == 2 and first["delta"] == 0
    wait_until(lambda: photos.path("V001") and photos.path("V002"), what="photos on the gate")
    assert photos.path("V001").read_bytes() == png(1)
    assert photos.path("V001").name == _sha(png(1))
    assert photos.version() == first["version"]
    # V001 gets a new photo, V002's is withdrawn, V003 is new: one delta, two files
    (src / "V001.png").write_bytes(png(11))
    (src / "V002.png").unlink()
    (src / "V003.png").write_bytes(png(3))
    second = publish_photos(office, PORT, src)
    assert second["delta"] == 1 and second["files"] == 2 and second["removed"] == 1
    wait_until(lambda: photos.path("V003") is not None and photos.version() == second["version"]
               and photos.path("V001") is not None and photos.path("V001").read_bytes() == png(11),
               what="delta applied")
    assert photos.path("V002") is None
    assert not (state / "photos" / _sha(png(1))).exists()  # the replaced file is gone
    assert not (state / "photos" / _sha(png(2))).exists()
    assert sorted(p.name for p in (state / "photos").iterdir()) == sorted([_sha(png(11)), _sha(png(3))])
    assert publish_photos(office, PORT, src)["files"] == 0  # nothing changed: nothing sent
    assert json.loads((src / MANIFEST).read_text())["version"] == second["version"]


def test_a_file_whose_hash_is_not_its_name_or_over_the_cap_is_refused(tmp_path, gate, office):
    sync, photos, state = gate
    src = tmp_path / "photos"
    src.mkdir()
    (src / "V001.png").write_bytes(png(1))
    publish_photos(office, PORT, src)
    wait_until(lambda: photos.path("V001"), what="photo on the gate")
    before = sync.stats["bad_downlink"]
    file_topic = topics.downlink(PORT, "photos", "file")
    at = dt.datetime.now(dt.UTC)
    # 1. the bytes of another picture under V001's name
    office.publish(file_topic, encode(PhotoFile(sha256=_sha(png(1)), media_type="image/png", data=png(9), at=at)),
                   qos=1).wait_for_publish(10)
    # 2. a file over the gate's cap (4096 bytes), correctly named, and indexed by a delta
    big = png(5, pad=5000)
    assert len(big) > 4096
    (src / "V002.png").write_bytes(big)
    publish_photos(office, PORT, src, max_bytes=1 << 20)
    wait_until(lambda: sync.stats["bad_downlink"] >= before + 2, what="both files refused")
    assert photos.path("V001").read_bytes() == png(1)  # unchanged
    assert photos.path("V002") is None and not (state / "photos" / _sha(big)).exists()
    assert photos.missing() == [_sha(big)]  # indexed, not on disk: the screen shows a placeholder
    # 3. a file no index row names
    office.publish(file_topic, encode(PhotoFile(sha256=_sha(png(7)), media_type="image/png", data=png(7), at=at)),
                   qos=1).wait_for_publish(10)
    wait_until(lambda: sync.stats["bad_downlink"] >= before + 3, what="stray file refused")
    assert not (state / "photos" / _sha(png(7))).exists()


def test_a_delta_on_another_version_asks_for_a_snapshot(tmp_path, gate, office, broker):
    sync, photos, state = gate
    got = []
    cfg = MqttConfig(host=broker.host, port=broker.port)
    listener = connection.make_client(cfg, "office-requests")
    listener.on_message = lambda _c, _u, m: got.append(m.payload)
    listener.connect(cfg.host, cfg.port)
    listener.subscribe(topics.all_gate_requests(PORT), qos=1)
    listener.loop_start()
    try:
        src = tmp_path / "photos"
        src.mkdir()
        (src / "V001.png").write_bytes(png(1))
        publish_photos(office, PORT, src)
        wait_until(lambda: photos.path("V001"), what="photo on the gate")
        manifest = json.loads((src / MANIFEST).read_text())
        manifest["version"] -= 5  # the office believes the gates are at another version
        (src / MANIFEST).write_text(json.dumps(manifest))
        (src / "V001.png").write_bytes(png(12))
        publish_photos(office, PORT, src)
        wait_until(lambda: any(b'"kind":"photos"' in p for p in got), what="snapshot request")
    finally:
        listener.disconnect()
        listener.loop_stop()


def test_the_office_refuses_a_photo_directory_with_bad_files(tmp_path):
    src = tmp_path / "photos"
    src.mkdir()
    (src / "V001.png").write_bytes(png(1))
    (src / "V002.gif").write_bytes(b"GIF89a")
    (src / "V003.png").write_bytes(b"")
    (src / "V004.png").write_bytes(png(4, pad=9000))
    with pytest.raises(BadInput) as err:
        scan(src, max_bytes=8192)
    text = str(err.value)
    assert "V002.gif" in text and "V003.png: 0 bytes" in text and "V004.png" in text and "V001" not in text


def test_the_office_refuses_symlinks_wrong_content_and_names_that_are_not_registrations(tmp_path):
    secret = tmp_path / "gate.key"
    secret.write_bytes(b"\x89PNG\r\n\x1a\n a secret that looks like a PNG")
    src = tmp_path / "photos"
    src.mkdir()
    (src / "V001.png").write_bytes(png(1))
    (src / "V005.png").symlink_to(secret)  # would publish another file's bytes to every gate
    (src / "V006.jpg").write_bytes(png(6))  # a PNG named .jpg
    (src / "V007.webp").write_bytes(b"%PDF-1.4 not an image")
    (src / "bad name!.png").write_bytes(png(8))
    with pytest.raises(BadInput) as err:
        scan(src)
    text = str(err.value)
    assert "V005.png: a symbolic link" in text
    assert "V006.jpg: the content is not a JPEG image" in text
    assert "V007.webp: the content is not a WEBP image" in text
    assert "bad name!.png: the name is not <registration>.<ext>" in text
    assert "V001" not in text and len(text.splitlines()) == 1
    for name in ("V005.png", "V006.jpg", "V007.webp", "bad name!.png"):
        (src / name).unlink()
    assert list(scan(src)) == ["V001"]


def test_central_publish_photos_on_the_command_line(tmp_path, broker, gate):
    import subprocess
    import sys

    sync, photos, state = gate
    src = tmp_path / "photos"
    src.mkdir()
    (src / "V001.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg but bytes")
    cmd = [sys.executable, "-m", "app.cli", "central", "publish", "--host", broker.host,
           "--mqtt-port", str(broker.port), "--port", PORT, "--photos", str(src)]
    ok = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert "photos: version" in ok.stdout and "1 file(s) sent" in ok.stderr
    wait_until(lambda: photos.path("V001"), what="photo on the gate")
    (src / "V002.bmp").write_bytes(b"BM")
    bad = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "V002.bmp" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_the_gate_photo_store_refuses_bad_names_types_and_sizes(tmp_path):
    store = PhotoStore(tmp_path, max_bytes=2048)
    data = png(1)
    for name, body, media, why in [
        ("../../etc/passwd", data, "image/png", "not a SHA-256"),
        (_sha(data).upper(), data, "image/png", "not a SHA-256"),
        (_sha(data), data, "image/gif", "media type"),
        (_sha(png(2, pad=4000)), png(2, pad=4000), "image/png", "over the cap"),
        (_sha(data), png(3), "image/png", "content hash"),
    ]:
        with pytest.raises(BadInput, match=why):
            store.put(name, body, media)
    assert list((tmp_path / "photos").iterdir()) == []  # nothing written, not even a temporary file
    assert store.put(_sha(data), data, "image/png").read_bytes() == data
    store.close()


def test_an_unreadable_manifest_asks_for_a_full_publish(tmp_path, office):
    src = tmp_path / "photos"
    src.mkdir()
    (src / "V001.png").write_bytes(png(1))
    (src / MANIFEST).write_text("{not json")
    with pytest.raises(BadInput, match="--full"):
        publish_photos(office, PORT, src)
    assert publish_photos(office, PORT, src, full=True)["files"] == 1
    assert json.loads((src / MANIFEST).read_text())["photos"] == {"V001": _sha(png(1))}
