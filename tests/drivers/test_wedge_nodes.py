"""A wedge reader pointed at an input node without digit keys (a keyboard reader's "consumer
control" node, a power button, a mouse) is refused at open, naming the nodes that type digits.

/dev/uinput is absent on this machine (no uinput in the kernel), so no real input node can be
made: ``evdev.InputDevice`` and ``evdev.list_devices`` are replaced (pytest-mock) only to give the
capabilities answer a real node would give; everything else is the real driver."""

from __future__ import annotations

import os

import pytest
from evdev import ecodes

from drivers.base import FaultKind, ReaderState
from drivers.wedge import WedgeReader, types_numbers
from edge.config import ReaderConfig
from edge.readers import open_reader
from portgate.errors import ConfigError

DIGITS = [getattr(ecodes, f"KEY_{d}") for d in range(10)]
KEYPAD = [getattr(ecodes, f"KEY_KP{d}") for d in range(10)]
KEYBOARD = {ecodes.EV_KEY: [*DIGITS, ecodes.KEY_ENTER, ecodes.KEY_A], ecodes.EV_MSC: [ecodes.MSC_SCAN]}
CONSUMER = {ecodes.EV_KEY: [ecodes.KEY_VOLUMEUP, ecodes.KEY_VOLUMEDOWN, ecodes.KEY_MUTE]}
NODES = {
    "/dev/input/event3": ("Sycreader RFID Technology Co., Ltd SYC ID&IC USB Reader Consumer Control", CONSUMER),
    "/dev/input/event4": ("Sycreader RFID Technology Co., Ltd SYC ID&IC USB Reader", KEYBOARD),
    "/dev/input/event9": ("Power Button", {ecodes.EV_KEY: [ecodes.KEY_POWER]}),
}


class _Node:
    """Stands in for ``evdev.InputDevice``: the name and capabilities of the node at ``path``."""

    def __init__(self, path: str) -> None:
        if path not in NODES:
            raise FileNotFoundError(2, "No such file or directory", path)
        self.path = path
        self.name, self._caps = NODES[path]
        self._r, self._w = os.pipe()

    def capabilities(self) -> dict:
        return self._caps

    def grab(self) -> None:
        pass

    def fileno(self) -> int:
        return self._r

    def read(self):  # type: ignore[no-untyped-def]
        return []

    def close(self) -> None:
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass


@pytest.fixture
def input_nodes(mocker):
    import evdev

    mocker.patch.object(evdev, "InputDevice", _Node)
    mocker.patch.object(evdev, "list_devices", lambda input_device_dir="/dev/input": sorted(NODES))


def test_only_a_node_with_the_ten_digits_and_enter_types_card_numbers():
    assert types_numbers(KEYBOARD)
    assert types_numbers({ecodes.EV_KEY: [*KEYPAD, ecodes.KEY_KPENTER]})
    assert not types_numbers(CONSUMER)
    assert not types_numbers({ecodes.EV_KEY: DIGITS})  # no Enter: a number would never end
    assert not types_numbers({ecodes.EV_KEY: [*DIGITS[:9], ecodes.KEY_ENTER]})
    assert not types_numbers({})


def test_a_node_without_digit_keys_is_never_ready_and_names_the_node_to_use(input_nodes, run_reader):
    running = run_reader(lambda cb: WedgeReader("kbd", "control", "/dev/input/event3",
                                                uid_format="decimal10", on_status=cb))
    status = running.wait_status(lambda s: True)
    assert (status.state, status.fault) == (ReaderState.FAULT, FaultKind.NO_DIGIT_KEYS)
    assert "/dev/input/event3 não tem teclas de dígitos" in status.detail
    assert "use /dev/input/event4 (Sycreader RFID Technology Co., Ltd SYC ID&IC USB Reader)" in status.detail
    assert "Power Button" not in status.detail and "Consumer Control" not in status.detail
    assert running.no_read(0.5)
    running.stop()
    assert all(s.state is not ReaderState.READY for s in running.all_statuses)
    assert len(running.all_statuses) == 1  # reported once, not on every retry


def test_the_right_node_is_ready(input_nodes, run_reader):
    running = run_reader(lambda cb: WedgeReader("kbd", "control", "/dev/input/event4",
                                                uid_format="decimal10", on_status=cb))
    assert running.wait_status(lambda s: True).state is ReaderState.READY
    running.stop()


def test_the_gate_refuses_to_start_on_a_node_without_digit_keys(input_nodes):
    cfg = ReaderConfig(id="w1", kind="control", driver="wedge", device="/dev/input/event9",
                       uid_format="wiegand26")
    with pytest.raises(ConfigError) as err:
        open_reader(cfg, lambda s: None)
    text = str(err.value)
    assert "readers.w1.device" in text and "/dev/input/event9 has no digit keys" in text
    assert "use /dev/input/event4 (Sycreader" in text
    ok = ReaderConfig(id="w2", kind="control", driver="wedge", device="/dev/input/event4")
    assert open_reader(ok, lambda s: None).device == "/dev/input/event4"


def test_an_absent_node_is_waited_for_not_refused(tmp_path):
    reader = WedgeReader("kbd", "control", str(tmp_path / "event-kbd"), uid_format="hex")
    assert reader.check_device() is None  # real: the path does not exist; reads() waits for it
