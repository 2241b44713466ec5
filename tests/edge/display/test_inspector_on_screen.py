"""The union inspector's own card is known on the watchman's screen (issue 33 item 4): the roster
downlink carries the inspectors (registration, name; ``inspectors.csv`` beside ``cards.csv`` at
the office), the gate keeps them for the screen (``edge.sync.inspectors``), and his photo comes
through the photo downlink by his registration. In a real browser at 800x480 against a real gate
(serial readers on ptys) fed by a real mosquitto: name and photo shown, the countdown on one
line, nothing cut off, axe-core finds nothing."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest

from app.demo.mosquitto import Mosquitto
from central.broadcast.csv_source import inspectors_csv, publish_snapshot, roster_snapshot
from central.broadcast.photos import publish_photos
from edge.store import Store
from edge.sync.apply_downlink import Downlink
from edge.sync.inspectors import InspectorFile, read_inspectors
from portgate.errors import BadInput
from testkit.axe import axe_violations, describe
from testkit.display import DEMO, GateWithScreen, png
from testkit.wait import wait_until
from wire import connection
from wire.connection import MqttConfig
from wire.downlink import InspectorRow, RosterDelta, RosterSnapshot

NAME = "Helena Duarte Rocha"  # config/demo/inspectors.csv
AT = dt.datetime(2026, 3, 15, 4, tzinfo=dt.UTC)


def test_the_demo_office_names_its_inspector_from_inspectors_csv():
    assert inspectors_csv(DEMO / "cards.csv") == [InspectorRow(registration="F001", name=NAME)]
    snap = roster_snapshot(DEMO / "workers.csv", DEMO / "cards.csv", at=AT)
    assert [(r.registration, r.name) for r in snap.inspectors] == [("F001", NAME)]


def test_a_bad_inspectors_csv_row_is_refused_naming_its_line(tmp_path):
    (tmp_path / "cards.csv").write_text("uid,kind,registration,status\n")
    (tmp_path / "inspectors.csv").write_text("registration,name\nF001,Ana\nF 2,Bia\n")
    with pytest.raises(BadInput, match=r"inspectors\.csv:3"):
        inspectors_csv(tmp_path / "cards.csv")
    (tmp_path / "inspectors.csv").unlink()
    assert inspectors_csv(tmp_path / "cards.csv") == []  # optional


def test_the_gate_keeps_the_roster_inspectors_and_a_delta_renames_one(tmp_path):
    store = Store(tmp_path / "store.db", gate_id="g1")
    down = Downlink(store, "g1", InspectorFile(tmp_path))
    snap = RosterSnapshot(version=1, at=AT, workers=[], cards=[],
                          inspectors=[InspectorRow(registration="F001", name="Ana"),
                                      InspectorRow(registration="F002", name="Bia")])
    assert down.apply("roster", "snapshot", snap, AT) is None
    assert read_inspectors(tmp_path) == {"F001": "Ana", "F002": "Bia"}
    delta = RosterDelta(from_version=1, to_version=2, at=AT, inspectors_upsert=[InspectorRow(registration="F002", name="Bia Souza")])
    assert down.apply("roster", "delta", delta, AT) is None
    assert read_inspectors(tmp_path) == {"F001": "Ana", "F002": "Bia Souza"}
    gap = RosterDelta(from_version=5, to_version=6, at=AT, inspectors_upsert=[InspectorRow(registration="F001", name="X")])
    assert down.apply("roster", "delta", gap, AT) is not None  # a snapshot is asked for; nothing applied
    assert read_inspectors(tmp_path)["F001"] == "Ana"
    store.close()


def test_a_damaged_inspectors_file_reads_as_no_names(tmp_path):
    (tmp_path / "inspectors.json").write_text('{"inspectors": ["not", "a", "map"]}')
    assert read_inspectors(tmp_path) == {}
    (tmp_path / "inspectors.json").write_bytes(b"\xff\x00")
    assert read_inspectors(tmp_path) == {}


@pytest.fixture
def broker(tmp_path):
    m = Mosquitto(tmp_path / "broker")
    m.start()
    yield m
    m.kill()


@pytest.fixture
def gate(tmp_path, broker):
    g = GateWithScreen(tmp_path / "gate", idle_after_s=600,
                       extra=f'\n[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\nclient_id = "gate-g-aurora"\n')
    g.start_gate()
    g.start_display()
    yield g
    g.stop()


def test_at_800x480_the_inspectors_own_card_shows_his_name_and_photo(tmp_path, broker, gate, browser):
    cfg = MqttConfig(host=broker.host, port=broker.port)
    office = connection.make_client(cfg, f"office-{uuid.uuid4().hex[:8]}")
    office.connect(cfg.host, cfg.port)
    office.loop_start()
    photos = tmp_path / "office-photos"
    photos.mkdir()
    (photos / "F001.png").write_bytes(png(77, size=96))
    try:
        publish_snapshot(office, "santos", "roster",
                         roster_snapshot(DEMO / "workers.csv", DEMO / "cards.csv", version=10**12, at=AT))
        publish_photos(office, "santos", photos)
    finally:
        office.disconnect()
        office.loop_stop()
    wait_until(lambda: read_inspectors(gate.state).get("F001") == NAME, 20, what="the inspectors at the gate")
    wait_until(lambda: (gate.state / "photos.db").exists() and any((gate.state / "photos").glob("*")), 20,
               what="his photo at the gate")
    page = browser.new_page(viewport={"width": 800, "height": 480})
    try:
        page.goto(gate.url)
        page.wait_for_selector("#now[data-state='idle']")
        gate.tap("0F1F5CA001", "control")  # F001's inspector card
        tap = gate.wait_taps(1)[-1]
        assert (tap.payload.decision, tap.payload.registration) == ("inspector", "F001")
        page.wait_for_selector(f"#now[data-seq='{tap.seq}']")
        person = page.locator("#now .person")
        assert person.locator(".name").inner_text() == NAME
        assert person.locator(".label").inner_text().lower() == "fiscal do sindicato"
        assert person.locator("img.photo").get_attribute("src").startswith("/photo/")
        page.wait_for_function("() => { const i = document.querySelector('#now img.photo'); "
                               "return i.complete && i.naturalWidth > 0 }")
        countdown = page.locator("#inspector-countdown")
        countdown.wait_for()
        line = countdown.evaluate("e => parseFloat(getComputedStyle(e).lineHeight) || "
                                  "parseFloat(getComputedStyle(e).fontSize) * 1.3")
        assert countdown.bounding_box()["height"] < 1.6 * line  # one line, never wrapped
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 800
        status_top = page.locator("#status").bounding_box()["y"]
        name_box = person.locator(".name").bounding_box()
        assert name_box["y"] + name_box["height"] <= status_top + 1  # not under the status bar
        assert page.locator(f"#history tr.read[data-seq='{tap.seq}']").inner_text().count(NAME) == 1
        assert axe_violations(page) == [], describe(axe_violations(page))
    finally:
        page.close()
