"""Fixtures for the screen tests: a real gate process with two serial readers on ptys, its photos on
disk in the state directory, and the screen process; Debian's chromium under Playwright."""

from __future__ import annotations

import datetime as dt

import pytest

from edge.sync.photos import PhotoStore, sha256_hex
from testkit.browser import launch_chromium
from testkit.display import GateWithScreen, png
from wire.downlink import PhotoRef

PHOTOS = {"V001": png(1), "V002": png(2), "V003": png(3)}  # V004 has none: placeholder


def seed_photos(state_dir) -> None:
    store = PhotoStore(state_dir)
    refs = []
    for reg, data in PHOTOS.items():
        sha = sha256_hex(data)
        store.put(sha, data, "image/png")
        refs.append(PhotoRef(registration=reg, sha256=sha, size=len(data), media_type="image/png"))
    store.replace_index(1, refs, dt.datetime(2026, 3, 14, tzinfo=dt.UTC))
    store.close()


@pytest.fixture
def gate(tmp_path):
    g = GateWithScreen(tmp_path / "gate", idle_after_s=600)  # the tests read the decision at leisure
    seed_photos(g.state)
    g.start_gate()
    g.start_display()
    yield g
    g.stop()


@pytest.fixture(scope="module")
def browser():
    with launch_chromium() as b:
        yield b


@pytest.fixture
def page(browser):
    p = browser.new_page(viewport={"width": 1280, "height": 800})
    yield p
    p.close()
