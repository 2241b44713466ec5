"""Confirm-by-repeat for serial EM readers: an isolated frame whose checksum passes is line noise,
not a card; a held card (the RDM6300 repeats every ~65 ms) is read once, on its first repeat."""

from __future__ import annotations

import time

import pytest

from drivers.debounce import RepeatConfirm
from drivers.serial_rfid import Em4100SerialReader, LineSerialReader
from portgate.records import ReaderKind

MS = 1_000_000


def test_a_sighting_is_confirmed_only_by_the_same_uid_inside_the_window():
    confirm = RepeatConfirm(150 * MS)
    assert confirm.seen("0102030405", 0) is False  # first frame: wait for the repeat
    assert confirm.seen("0102030405", 65 * MS) is True
    assert confirm.seen("AABBCCDDEE", 130 * MS) is False  # another card starts over
    assert confirm.seen("0102030405", 195 * MS) is False
    assert confirm.seen("0102030405", 400 * MS) is False  # 205 ms later: too late
    assert confirm.seen("0102030405", 400 * MS + 150 * MS) is True  # exactly the window still counts


def test_a_sighting_never_confirmed_is_handed_out_once_to_be_counted():
    """Issue 37: a card whose repeats came too far apart (a starved writer) was dropped as noise
    without a trace; ``unconfirmed`` names every sighting that lapsed, once."""
    confirm = RepeatConfirm(150 * MS)
    confirm.seen("0102030405", 0)
    assert confirm.unconfirmed(100 * MS) == []  # still inside its window
    assert confirm.unconfirmed(151 * MS) == ["0102030405"]
    assert confirm.unconfirmed(300 * MS) == []  # once
    confirm.seen("0102030405", 400 * MS)
    confirm.seen("AABBCCDDEE", 450 * MS)  # another card before the repeat: the first lapsed
    assert confirm.seen("AABBCCDDEE", 500 * MS) is True
    assert confirm.unconfirmed(10_000 * MS) == ["0102030405"]  # the confirmed one is not named
    confirm.seen("0102030405", 11_000 * MS)
    confirm.reset()  # a reopen forgets the sighting (the driver counts the port's drop itself)
    assert confirm.unconfirmed(20_000 * MS) == []


def test_a_monotonic_clock_going_back_never_confirms_and_zero_is_off():
    confirm = RepeatConfirm(150 * MS)
    confirm.seen("0102030405", 500 * MS)
    assert confirm.seen("0102030405", 400 * MS) is False
    assert RepeatConfirm(0).seen("0102030405", 0) is True
    with pytest.raises(ValueError):
        RepeatConfirm(-1)


def _em(device, reader_id, **kw):  # type: ignore[no-untyped-def]
    return lambda cb: Em4100SerialReader(reader_id, ReaderKind.CONTROL, str(device.path), on_status=cb, **kw)


def _ready(running):  # type: ignore[no-untyped-def]
    from drivers.base import ReaderState

    running.wait_status(lambda s: s.state is ReaderState.READY)


def test_an_isolated_valid_frame_is_not_a_read(pty_device, run_reader):
    running = run_reader(_em(pty_device, "confirm-noise"))
    _ready(running)
    pty_device.frame("62E3086CD5")  # checksum passes, no repeat follows
    assert running.no_read(0.5)
    pty_device.frame("AABBCCDDEE")  # another isolated one right after: no repeat either
    pty_device.frame("1122334455")
    assert running.no_read(0.5)


def test_a_held_card_is_read_once_on_its_first_repeat(pty_device, run_reader):
    running = run_reader(_em(pty_device, "confirm-held"))
    _ready(running)
    t0 = time.monotonic_ns()
    sent = pty_device.hold("62E3086CD5", seconds=0.6)
    read = running.next_read()
    assert sent >= 5 and read.uid == "62E3086CD5"
    assert read.mono_ns - t0 >= 60 * MS  # the second frame, ~65 ms after the first, confirmed it
    assert running.no_read(0.3)


def test_frames_further_apart_than_the_window_are_not_confirmed(pty_device, run_reader):
    running = run_reader(_em(pty_device, "confirm-slow", confirm_ms=100))
    _ready(running)
    for _ in range(3):
        pty_device.frame("62E3086CD5")
        time.sleep(0.25)
    assert running.no_read(0.3)


def test_confirm_ms_zero_reads_the_first_frame(pty_device, run_reader):
    running = run_reader(_em(pty_device, "confirm-off", confirm_ms=0))
    _ready(running)
    pty_device.frame("62E3086CD5")
    assert running.next_read().uid == "62E3086CD5"


def test_line_readers_do_not_wait_for_a_repeat_unless_asked(tmp_path):
    line = LineSerialReader("l", "control", str(tmp_path / "x"), uid_format="hex")
    assert (line.confirm_ms, Em4100SerialReader("e", "control", str(tmp_path / "y")).confirm_ms) == (0, 150)


@pytest.mark.parametrize("bad", [-1, 1.5, "150", True])
def test_a_bad_confirm_window_is_refused(tmp_path, bad):
    with pytest.raises(ValueError, match="confirm_ms"):
        Em4100SerialReader("e", "control", str(tmp_path / "y"), confirm_ms=bad)
