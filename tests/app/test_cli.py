"""The ``portgate`` command's boundary: user errors are one line and exit 2, never a traceback."""

import subprocess
import sys
from pathlib import Path

from testkit.cli import run_here

DEMO = Path(__file__).resolve().parents[2] / "config" / "demo"


def portgate(*args):
    """The installed command (a Python start): ``--help`` and the demo's refusal below."""
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True,
                          timeout=120)


def portgate_here(*args):
    """The same entry point (``app.cli.main``) in this process (``testkit.cli.run_here``)."""
    return run_here(list(args))


def test_a_directory_given_as_a_file_is_one_line_exit_2(tmp_path):
    done = portgate_here("replay", "--workers", str(DEMO / "workers.csv"), "--cards", str(DEMO / "cards.csv"),
                         "--escala", str(DEMO / "escala.csv"), "--taps", str(tmp_path))
    assert done.returncode == 2
    assert "Is a directory" in done.stderr and "Traceback" not in done.stderr


def test_a_database_url_that_is_not_one_is_one_line_exit_2():
    done = portgate_here("pay", "--db", "notaurl", "--from", "2026-03-01", "--to", "2026-03-02")
    assert done.returncode == 2
    assert "notaurl" in done.stderr or "URL" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_demo_refuses_a_run_directory_that_is_not_empty(tmp_path):
    (tmp_path / "ledger.db").write_text("old")
    done = portgate("demo", "--run-dir", str(tmp_path))
    assert done.returncode == 2 and "não está vazio" in done.stderr  # the demo speaks its --lang (pt-BR)
    assert done.stderr.startswith("portgate: ") and done.stderr.count("\n") == 1  # one line, as README says


def test_help_lists_every_command():
    done = portgate("--help")
    assert done.returncode == 0
    for name in ("demo", "edge", "replay", "central", "pay", "production", "registry", "rotation", "crew"):
        assert name in done.stdout


USAGE_ERRORS = [  # (argv, the one line printed)
    (("evidence", "audit", "--after-id", "-1"),
     "portgate: evidence audit: Invalid value for '--after-id': -1 is not in the range 0<=x<=9223372036854775807"
     " (see --help)"),
    (("pay", "close", "--db", "sqlite:///x.db"), "portgate: pay close: Missing option '--from' (see --help)"),
    (("ledger", "shifts", "--bogus"), "portgate: ledger shifts: No such option '--bogus' (see --help)"),
    (("nosuch",), "portgate: No such command 'nosuch' (see --help)"),
    (("evidence", "audit"), "portgate: evidence audit: give --config, or --db and --keys-dir (see --help)"),
]


def test_a_usage_error_is_one_line_naming_the_command_and_the_option_exit_2():
    for argv, line in USAGE_ERRORS:
        done = portgate_here(*argv)
        assert (done.returncode, done.stderr.splitlines(), done.stdout) == (2, [line], ""), argv


def test_help_and_a_group_without_its_command_still_show_the_usage():
    done = portgate_here("evidence", "audit", "--help")
    assert done.returncode == 0 and done.stdout.startswith("Usage: portgate evidence audit [OPTIONS]")
    done = portgate_here("evidence")
    assert done.returncode == 2 and done.stderr.startswith("Usage: portgate evidence [OPTIONS] COMMAND")
