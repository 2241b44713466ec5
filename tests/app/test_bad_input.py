"""Bad command-line and configuration input: one line naming the place (option, key, file), exit 2,
never a traceback: time zones, NUL characters and over-long names in paths and URLs, a rulebook that
is not TOML."""

from __future__ import annotations

import os

import pytest

from app.cli import main
from portgate.config import read_secret
from portgate.errors import ConfigError

GATE_TOML = """
port = "santos"
gate_id = "g1"
state_dir = "{state_dir}"
key_file = "{key_file}"
"""


def _run(capsys, *argv) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err
    return code, err


def _one_line(code, err, *needles):
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err


@pytest.mark.parametrize("tz", ["Mars/Olympus", "", "../../etc/passwd", "America/Sao_Paulo\x00"])
@pytest.mark.parametrize("command", ["pay", "import"])
def test_production_refuses_an_unknown_time_zone_naming_the_option(capsys, tmp_path, tz, command):
    extra = []
    if command == "import":  # into a ledger that exists (a missing one is refused: --db)
        assert main(["ledger", "migrate", "--db", f"sqlite:///{tmp_path / 'l.db'}"]) == 0
        capsys.readouterr()
        extra = ["--db", f"sqlite:///{tmp_path / 'l.db'}"]
    code, err = _run(capsys, "production", command, "--rulebook", "dl-2032-1940", "--gang", "g.csv",
                     "--tally", "t.csv", "--tariffs", "f.csv", "--tz", tz, *extra)
    _one_line(code, err, "--tz", "unknown time zone")


def test_a_secret_path_with_a_nul_or_too_long_is_a_config_error():
    with pytest.raises(ConfigError, match="NUL"):
        read_secret("/etc/portgate/a\x00b")
    with pytest.raises(ConfigError, match="cannot be opened"):
        read_secret("/tmp/" + "x" * 5000)


@pytest.mark.parametrize("key", ["state_dir", "key_file"])
def test_check_config_refuses_a_nul_in_a_gate_path_naming_the_key(capsys, tmp_path, key):
    key_file = tmp_path / "gate.key"
    key_file.write_text("00" * 32)
    os.chmod(key_file, 0o600)
    values = {"state_dir": str(tmp_path), "key_file": str(key_file)}
    values[key] += "\\u0000x"
    path = tmp_path / "gate.toml"
    path.write_text(GATE_TOML.format(**values))
    code, err = _run(capsys, "edge", "check-config", str(path))
    _one_line(code, err, f"$.{key}", "NUL")


def test_check_config_refuses_a_nul_in_the_database_url_naming_the_key(capsys, tmp_path):
    path = tmp_path / "central.toml"
    path.write_text(f'database_url = "sqlite:///{tmp_path}/l.db\\u0000"\nport = "santos"\nkeys_dir = "{tmp_path}"\n')
    code, err = _run(capsys, "central", "check-config", str(path))
    _one_line(code, err, "$.database_url", "NUL")


def test_check_config_names_the_key_of_an_over_long_path(capsys, tmp_path):
    path = tmp_path / "central.toml"
    path.write_text(f'database_url = "sqlite:///{tmp_path}/l.db"\nport = "santos"\nkeys_dir = "/{"k" * 5000}"\n')
    code, err = _run(capsys, "central", "check-config", str(path))
    _one_line(code, err, "$.keys_dir")


def _port_toml(tmp_path, rulebook: str):
    path = tmp_path / "port.toml"
    path.write_text(f'port_id = "BRSSZ"\nstate = "SP"\nrulebook = "{rulebook}"\n')
    return path


def test_pay_names_the_rulebook_key_of_a_non_toml_or_over_long_rulebook(capsys, tmp_path):
    not_toml = tmp_path / "book.toml"
    not_toml.write_text("this is = = not toml\n")
    for rulebook in (str(not_toml), "/" + "r" * 5000):
        code, err = _run(capsys, "pay", "--shifts", str(tmp_path / "s.csv"),
                         "--port-config", str(_port_toml(tmp_path, rulebook)))
        _one_line(code, err, "port.toml:rulebook")


def test_production_names_the_rulebook_option_of_a_non_toml_or_over_long_rulebook(capsys, tmp_path):
    not_toml = tmp_path / "book.toml"
    not_toml.write_text("[[[ nope\n")
    for rulebook in (str(not_toml), "r" * 5000):
        code, err = _run(capsys, "production", "pay", "--rulebook", rulebook, "--gang", "g.csv",
                         "--tally", "t.csv", "--tariffs", "f.csv")
        _one_line(code, err, "--rulebook")


@pytest.mark.parametrize("url, words", [
    ("mysql://x", "mysql is not supported"),
    ("mssql+pyodbc://u@h/db", "mssql is not supported"),
    ("postgresql+psycopg2://u@h/db", "the driver psycopg2 is not installed"),
])
@pytest.mark.parametrize("command", [
    ("pay", "close", "--from", "2026-03-01", "--to", "2026-03-31"),
    ("pay", "--from", "2026-03-01", "--to", "2026-03-31"),
    ("pay", "overdue"),
    ("evidence", "audit", "--keys-dir", "."),
    ("ledger", "shifts", "--from", "2026-03-01", "--to", "2026-03-31"),
])
def test_a_database_the_ledger_does_not_run_on_is_one_line_exit_2(capsys, url, words, command):
    """Where every command makes its engine (``central.db.make_engine``): a dialect other than
    SQLite/PostgreSQL, or a driver not installed, is bad configuration, not a traceback."""
    code, err = _run(capsys, *command, "--db", url)
    _one_line(code, err, f"database URL {url!r}", words, "sqlite:///path.db")


def test_a_database_url_error_hides_the_password(capsys):
    code, err = _run(capsys, "pay", "overdue", "--db", "mysql://clerk:s3cret@h/ledger")
    assert code == 2 and "mysql is not supported" in err and "s3cret" not in err, err


def test_check_config_refuses_a_serial_reader_with_an_empty_device_in_one_line(capsys, tmp_path):
    from testkit.gate_process import write_gate_config

    path = write_gate_config(tmp_path, serial_device=tmp_path / "ttyRFID")
    path.write_text(path.read_text().replace(f'device = "{tmp_path / "ttyRFID"}"', 'device = ""'))
    code, err = _run(capsys, "edge", "check-config", str(path))
    _one_line(code, err, "portgate: ", "$.readers[0]", "device is empty: a serial reader needs the serial port")


@pytest.mark.parametrize("state", ["empty", "blank", "a file"])
def test_check_config_and_run_refuse_a_state_dir_that_is_empty_or_a_file(capsys, tmp_path, state):
    """A ``state_dir`` that is empty would put store.db and journal.db beside gate.toml; one that is
    a file gave a confusing "File exists" about gate.lock at start (fresh tester 3)."""
    from testkit.gate_process import write_gate_config

    path = write_gate_config(tmp_path)
    text = path.read_text()
    old = next(line for line in text.splitlines() if line.startswith("state_dir"))
    if state == "a file":
        (tmp_path / "afile").write_text("x")
        value, needle = "afile", "exists and is not a directory"
    else:
        value, needle = "" if state == "empty" else "  ", "the value is empty"
    path.write_text(text.replace(old, f'state_dir = "{value}"'))
    for command in (("check-config", str(path)), ("run", "--config", str(path))):
        code, err = _run(capsys, "edge", *command)
        _one_line(code, err, "portgate: ", "state_dir", needle)
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".db") == []
