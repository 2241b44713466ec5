"""Run a ``portgate`` command in the test's own process: the console script's code (``app.cli.main``:
its one-line refusals and exit statuses) without the 1-2 s of CPU of a Python start with the office's
imports, which is most of what a test of a command's output or refusal waited on (issue 32).

A test of the installed entry point itself (the console script, ``python -m app.cli``, a service that
runs until signalled) still starts a process; each command keeps at least one such test.

``run_here`` leaves the process as it found it: the environment, the working directory, the command
line's language (``portgate.clitext.use_lang``), the stdlib root logger and ``warnings`` capture,
structlog's configuration and the process fields of ``portgate.logs``, the uncaught-exception hooks
and the handlers of the usual signals. An exception the command does not turn into a message is not
caught: the test fails on it, as a traceback on a subprocess's stderr failed its assertions."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence

from click.testing import CliRunner

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)


def run_here(args: Sequence[str], *, env: Mapping[str, str | None] | None = None,
             input: str | bytes | None = None) -> subprocess.CompletedProcess:
    """``portgate ARGS`` through ``app.cli.main`` in this process, as ``subprocess.run([portgate,
    *args], capture_output=True, text=True)`` would report it: a ``CompletedProcess`` with the exit
    status, stdout and stderr (text). ``env``: variables set for the run (``None`` removes one);
    ``input``: the standard input. Everything process-wide the command may change is put back."""
    import structlog

    from app.cli import main
    from portgate import logs
    from portgate.clitext import use_lang

    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_signals = {s: signal.getsignal(s) for s in _SIGNALS}
    root = logging.getLogger()
    saved_root = (list(root.handlers), root.level, logging._warnings_showwarning)  # type: ignore[attr-defined]
    saved_structlog = structlog.get_config()
    saved_fields = dict(logs._PROCESS)
    saved_hooks = (sys.excepthook, threading.excepthook)
    status: int
    try:
        with CliRunner().isolation(input=input, env=env) as (out, err, _mixed):
            try:
                status = main(list(args))
            except SystemExit as exc:  # a command's own sys.exit(): the status it names
                code = exc.code
                status = code if isinstance(code, int) else (0 if code is None else 1)
                if code is not None and not isinstance(code, int):
                    print(code, file=sys.stderr)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
            stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        for s, handler in saved_signals.items():
            if handler is not None:
                signal.signal(s, handler)
        root.handlers[:] = saved_root[0]
        root.setLevel(saved_root[1])
        if saved_root[2] is None:
            logging.captureWarnings(False)
        structlog.configure(**saved_structlog)
        logs._PROCESS.clear()
        logs._PROCESS.update(saved_fields)
        sys.excepthook, threading.excepthook = saved_hooks
        use_lang(None)
    return subprocess.CompletedProcess(["portgate", *args], status, stdout.replace("\r\n", "\n"),
                                       stderr.replace("\r\n", "\n"))


def in_pt_and_en(args: Sequence[str]) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """``portgate ARGS`` twice through ``run_here``: with no ``PORTGATE_LANG`` (pt-BR, the default)
    and with ``portgate --lang en ARGS``; the pt-BR run first."""
    return (run_here(args, env={"PORTGATE_LANG": None}),
            run_here(["--lang", "en", *args], env={"PORTGATE_LANG": None}))


def refused_in_pt_and_en(args: Sequence[str], pt_text: str, en_text: str, status: int = 2, *,
                         absent: Sequence[str] = ()) -> None:
    """Assert ``portgate ARGS`` exits ``status`` in both languages (``in_pt_and_en``), its pt-BR
    stderr holding ``pt_text`` and its English one ``en_text``, and neither holding a text of
    ``absent`` (e.g. Python's ``None`` in a sentence)."""
    pt, en = in_pt_and_en(args)
    assert pt.returncode == en.returncode == status, (pt.stderr, en.stderr)
    assert pt_text in pt.stderr, pt.stderr
    assert en_text in en.stderr, en.stderr
    for text in absent:
        assert text not in pt.stderr + en.stderr


def migrated_ledger(directory) -> str:
    """The URL of a SQLite ledger ``l.db`` in ``directory`` made by ``portgate ledger migrate``."""
    url = f"sqlite:///{directory / 'l.db'}"
    assert run_here(["ledger", "migrate", "--db", url]).returncode == 0
    return url


__all__ = ["in_pt_and_en", "migrated_ledger", "refused_in_pt_and_en", "run_here"]
