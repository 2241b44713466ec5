"""Per-reader settings in gate.toml: the confirm-by-repeat window and the form a reader produces."""

from __future__ import annotations

import pytest

from edge.config import load_gate_config
from edge.readers import open_reader
from portgate.errors import ConfigError
from testkit.gate_process import write_gate_config


def _config(tmp_path, extra: str, driver: str = "serial"):
    cfg = write_gate_config(tmp_path, serial_device=tmp_path / "ttyRFID" if driver == "serial" else None)
    cfg.write_text(cfg.read_text().replace('kind = "control"\n', f'kind = "control"\n{extra}\n', 1))
    return cfg


def test_confirm_ms_reaches_the_serial_driver(tmp_path):
    cfg = load_gate_config(_config(tmp_path, "confirm_ms = 200"))
    reader = open_reader(cfg.readers[0], lambda s: None)
    assert reader.confirm_ms == 200
    default = open_reader(load_gate_config(_config(tmp_path, "")).readers[0], lambda s: None)
    assert default.confirm_ms == 150  # on by default for serial EM readers


@pytest.mark.parametrize("value", ["-1", "5000", '"fast"', "1.5"])
def test_a_bad_confirm_window_is_refused_naming_the_key(tmp_path, value):
    with pytest.raises(ConfigError) as err:
        load_gate_config(_config(tmp_path, f"confirm_ms = {value}"))
    assert "readers[0].confirm_ms" in str(err.value)


def test_confirm_ms_on_a_reader_that_is_not_serial_is_refused(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_gate_config(_config(tmp_path, "confirm_ms = 150", driver="fifo"))
    assert "readers[0]" in str(err.value) and "confirm_ms applies to serial readers only" in str(err.value)


@pytest.mark.parametrize("form", ["decimal10", "decimal10_le", "dez8", "wiegand26"])
def test_a_reader_declares_the_form_it_produces(tmp_path, form):
    extra = f'uid_format = "{form}"\noptions = {{ protocol = "line" }}'  # a number-reading reader
    assert load_gate_config(_config(tmp_path, extra)).readers[0].uid_format == form


@pytest.mark.parametrize("extra, says", [
    ('options = { protocol = "Line" }', "options.protocol: 'Line' is not one of em4100, line"),
    ('options = { baudrat = 9600 }', "options.baudrat: not an option of driver 'serial'"),
    ('options = { baudrate = "fast" }', "options.baudrate: 'fast' has the wrong type"),
    ('uid_format = "dez8"', "uid_format: 'dez8' applies only to a number-reading reader"),
])
def test_reader_option_typos_are_refused_per_driver_naming_the_key(tmp_path, extra, says):
    with pytest.raises(ConfigError) as err:
        load_gate_config(_config(tmp_path, extra))
    assert "readers[0]" in str(err.value) and says in str(err.value)


def test_reader_options_of_another_driver_are_refused(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_gate_config(_config(tmp_path, "options = { grab = false }", driver="fifo"))
    assert "options.grab: not an option of driver 'fifo'" in str(err.value)


def test_an_unknown_form_is_refused_naming_the_key(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_gate_config(_config(tmp_path, 'uid_format = "dez10"'))
    assert "readers[0].uid_format" in str(err.value)


@pytest.mark.parametrize("driver, says", [("serial", "a serial reader needs the serial port"),
                                          ("wedge", "a wedge reader needs the input device"),
                                          ("fifo", "a fifo reader needs the FIFO's path")])
@pytest.mark.parametrize("device", ['""', '"   "'])
def test_a_reader_that_opens_a_path_with_an_empty_device_is_refused(tmp_path, driver, says, device):
    cfg = _config(tmp_path, "", driver=driver)
    text = cfg.read_text()
    start = text.index('driver = "')
    rest = text[text.index("\n", text.index("device = ", start)) + 1:]
    cfg.write_text(text[:start] + f'driver = "{driver}"\ndevice = {device}\n' + rest)
    with pytest.raises(ConfigError) as err:
        load_gate_config(cfg)
    assert "readers[0]" in str(err.value) and f"device is empty: {says}" in str(err.value)
