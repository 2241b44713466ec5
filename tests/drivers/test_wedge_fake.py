"""Keyboard-wedge state machine (pure), the wedge device loop, and the scripted fake reader.

/dev/uinput is not available on this machine, so no real input device can be created: the device
path is tested with a missing device (real) and with a device that vanishes mid-read (mocked:
the fault a real component cannot produce here)."""

from __future__ import annotations

import errno
import os

import pytest
from evdev import ecodes

from drivers.base import CardRead, FaultKind, ReaderState
from drivers.fake import FakeReader
from drivers.wedge import Dropped, KeyBurst, WedgeReader
from portgate.errors import BadInput
from portgate.records import ReaderKind

MS = 1_000_000
DIGIT = {str(d): getattr(ecodes, f"KEY_{d}") for d in range(10)}
KP = {str(d): getattr(ecodes, f"KEY_KP{d}") for d in range(10)}


def type_keys(burst: KeyBurst, codes: list[int], t0: int = 0, step: int = 2 * MS) -> list:
    out = []
    for i, code in enumerate(codes):
        out.append(burst.feed(code, 1, t0 + i * step))
        out.append(burst.feed(code, 0, t0 + i * step + MS))
    return [o for o in out if o is not None]


def test_digits_then_enter_give_the_number():
    assert type_keys(KeyBurst(), [DIGIT[c] for c in "0439041101"] + [ecodes.KEY_ENTER]) == ["0439041101"]


def test_keypad_digits_and_keypad_enter_count():
    assert type_keys(KeyBurst(), [KP[c] for c in "123"] + [ecodes.KEY_KPENTER]) == ["123"]


def test_modifiers_and_key_repeat_are_ignored():
    burst = KeyBurst()
    assert burst.feed(ecodes.KEY_LEFTSHIFT, 1, 0) is None
    assert burst.feed(DIGIT["1"], 1, MS) is None
    assert burst.feed(DIGIT["1"], 2, 2 * MS) is None  # autorepeat
    assert burst.feed(ecodes.KEY_ENTER, 1, 3 * MS) == "1"


def test_incomplete_burst_is_dropped_after_the_timeout():
    burst = KeyBurst(timeout_ns=100 * MS)
    type_keys(burst, [DIGIT["1"], DIGIT["2"]])
    assert burst.expire(500 * MS) == Dropped("timeout", "12")
    assert type_keys(burst, [DIGIT["3"], ecodes.KEY_ENTER], t0=600 * MS) == ["3"]


def test_stale_digits_do_not_prefix_the_next_number():
    burst = KeyBurst(timeout_ns=100 * MS)
    out = type_keys(burst, [DIGIT["9"]]) + type_keys(burst, [DIGIT["1"], ecodes.KEY_ENTER], t0=1000 * MS)
    assert out == [Dropped("timeout", "9"), "1"]


def test_unknown_key_spoils_the_burst():
    burst = KeyBurst()
    assert type_keys(burst, [DIGIT["1"], ecodes.KEY_Z, ecodes.KEY_ENTER]) == [Dropped("bad_key", "1")]


def test_missing_input_device_is_absent_and_close_returns(tmp_path, run_reader):
    running = run_reader(
        lambda cb: WedgeReader("kbd", "badge", str(tmp_path / "event-kbd"), uid_format="decimal10", on_status=cb)
    )
    status = running.wait_status(lambda s: True)
    assert (status.state, status.fault) == (ReaderState.ABSENT, FaultKind.OPEN_FAILED)
    running.stop()


class _Event:
    def __init__(self, code: int, value: int) -> None:
        self.type, self.code, self.value = ecodes.EV_KEY, code, value


class _VanishingDevice:
    """Stands in for evdev.InputDevice: types one number, then fails like an unplugged device."""

    opened = 0

    def __init__(self, path: str) -> None:
        type(self).opened += 1
        self._r, self._w = os.pipe()
        os.write(self._w, b"x")
        self._calls = 0

    def grab(self) -> None:
        pass

    def capabilities(self) -> dict:
        return {ecodes.EV_KEY: [*DIGIT.values(), ecodes.KEY_ENTER]}

    def fileno(self) -> int:
        return self._r

    def read(self):  # type: ignore[no-untyped-def]
        self._calls += 1
        if self._calls > 1:
            raise OSError(errno.ENODEV, "No such device")
        os.write(self._w, b"x")
        keys = [DIGIT[c] for c in "0439041101"] + [ecodes.KEY_ENTER]
        return [_Event(code, value) for code in keys for value in (1, 0)]

    def close(self) -> None:
        os.close(self._r)
        os.close(self._w)


def test_device_unplugged_is_reported_and_reopened(mocker, run_reader):
    import evdev

    _VanishingDevice.opened = 0
    mocker.patch.object(evdev, "InputDevice", _VanishingDevice)
    running = run_reader(
        lambda cb: WedgeReader("kbd2", "badge", "/dev/input/event-x", uid_format="decimal10", on_status=cb)
    )
    assert running.next_read().uid == "decimal10:1A2B3C4D"
    status = running.wait_status(lambda s: s.fault is FaultKind.DEVICE_LOST)
    assert status.state is ReaderState.FAULT
    running.wait_status(lambda s: s.state is ReaderState.READY)
    assert _VanishingDevice.opened >= 2


class _ZeroThenGoodDevice(_VanishingDevice):
    """Types an all-zero number (a misread), then a real one, then fails like an unplugged device;
    reopened, it types nothing more (the count must see that one misread only)."""

    typed = False

    def read(self):  # type: ignore[no-untyped-def]
        self._calls += 1
        if self._calls > 1 or type(self).typed:
            raise OSError(errno.ENODEV, "No such device")
        type(self).typed = True
        os.write(self._w, b"x")
        keys = [DIGIT[c] for c in "0000000000"] + [ecodes.KEY_ENTER] + [DIGIT[c] for c in "0439041101"] + [ecodes.KEY_ENTER]
        return [_Event(code, value) for code in keys for value in (1, 0)]


def test_an_all_zero_number_is_counted_as_bad_and_not_read(mocker, run_reader):
    import evdev

    from prometheus_client import REGISTRY

    def bad_numbers() -> float:
        labels = {"reader_id": "kbd0", "kind": FaultKind.BAD_NUMBER.value}
        return REGISTRY.get_sample_value("portgate_reader_faults_total", labels) or 0.0

    mocker.patch.object(evdev, "InputDevice", _ZeroThenGoodDevice)
    _ZeroThenGoodDevice.typed = False
    before = bad_numbers()
    running = run_reader(
        lambda cb: WedgeReader("kbd0", "badge", "/dev/input/event-x", uid_format="decimal10", on_status=cb)
    )
    assert running.next_read().uid == "decimal10:1A2B3C4D"  # the zero number before it never reads
    assert bad_numbers() == before + 1


# -- fake reader ---------------------------------------------------------------------------------
def test_fake_reader_yields_its_script_then_ends():
    with FakeReader("f", ReaderKind.CONTROL, ["1a2b3c4d", "04:A1:B2:C3"], close_when_done=True) as reader:
        reads = list(reader.reads())
    assert [r.uid for r in reads] == ["1A2B3C4D", "04A1B2C3"]
    assert all(isinstance(r, CardRead) and r.kind is ReaderKind.CONTROL for r in reads)


def test_fake_reader_push_and_close(run_reader):
    running = run_reader(lambda cb: FakeReader("f2", ReaderKind.BADGE, on_status=cb))
    running.reader.push("AABBCCDD")
    assert running.next_read().uid == "AABBCCDD"
    running.stop()


def test_fake_reader_refuses_a_bad_uid():
    with pytest.raises(BadInput):
        FakeReader("f3", ReaderKind.BADGE, ["not-a-uid"])


def test_fake_reader_scripts_faults_through_the_callback():
    seen = []
    reader = FakeReader("f4", ReaderKind.BADGE, on_status=seen.append)
    reader.status(ReaderState.FAULT, "simulado", FaultKind.DEVICE_LOST)
    assert [s.state for s in seen] == [ReaderState.READY, ReaderState.FAULT]
    assert seen[-1].fault is FaultKind.DEVICE_LOST
