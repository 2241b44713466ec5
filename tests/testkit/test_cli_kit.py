"""``testkit.cli.run_here``: a ``portgate`` command run in the test's process reports what the
installed command reports (exit status, stdout, stderr), and leaves nothing of the process changed
for the next test (environment, working directory, language, logging, signal handlers, hooks)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading

import click
import structlog

from app import cli as app_cli
from portgate import logs
from portgate.clitext import cli_lang, use_lang
from testkit.cli import run_here

PROBE = "kit-probe"


@click.command(PROBE)
@click.option("--status", type=int, default=0)
def probe(status: int) -> None:
    """Changes everything process-wide a command may change, prints on both streams, exits STATUS."""
    os.environ["PORTGATE_KIT_PROBE"] = "set"
    os.environ.pop("PORTGATE_LANG", None)
    os.chdir("/")
    use_lang("pt")
    logs.configure_logging(json=True, level="debug", fields={"service": "probe"})
    signal.signal(signal.SIGTERM, lambda *_: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    click.echo("out line")
    click.echo("err line", err=True)
    sys.exit(status)


def _state() -> tuple:
    root = logging.getLogger()
    return (dict(os.environ), os.getcwd(), cli_lang(), list(root.handlers), root.level,
            structlog.get_config(), dict(logs._PROCESS), signal.getsignal(signal.SIGTERM),
            signal.getsignal(signal.SIGINT), sys.excepthook, threading.excepthook)


def test_a_refusal_reads_as_the_installed_commands_does():
    args = ["pay", "close", "--db", "sqlite:///x.db"]
    here = run_here(args)
    there = subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=120)
    assert (here.returncode, here.stdout, here.stderr) == (there.returncode, there.stdout, there.stderr) == (
        2, "", "portgate: pay close: Missing option '--from' (see --help)\n")


def test_a_command_that_changes_the_process_leaves_it_as_it_was(monkeypatch, tmp_path):
    monkeypatch.setitem(app_cli.COMMANDS, PROBE, (f"{__name__}:probe", "test probe"))
    monkeypatch.chdir(tmp_path)
    before = _state()
    done = run_here([PROBE, "--status", "3"])
    assert (done.returncode, done.stdout, done.stderr) == (3, "out line\n", "err line\n")
    assert _state() == before
    assert "PORTGATE_KIT_PROBE" not in os.environ and os.environ["PORTGATE_LANG"] == "en"


def test_env_and_input_hold_for_the_run_only():
    done = run_here(["pay", "--no-such-option"], env={"PORTGATE_LANG": "pt"}, input="ignored\n")
    assert done.returncode == 2
    assert done.stderr == "portgate: pay: A opção '--no-such-option' não existe (veja --help)\n"
    assert os.environ["PORTGATE_LANG"] == "en" and run_here(["pay", "--no-such-option"]).stderr.startswith(
        "portgate: pay: No such option")
