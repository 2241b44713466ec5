"""A stop asked while the gate starts (``portgate edge run``): SIGTERM or SIGINT before the gate is
ready is a clean stop (docs/gate.md, "Start-up"): exit status 0, one log line, nothing journaled lost.

``catch(args)`` is called by ``app.cli`` before its own imports (Click, the catalogs, the gate's
modules: about a second of a loaded 2-core machine): for ``edge run`` it installs a handler that
only notes the signal (``STOP`` set, ``SIGNALS`` appended); ``edge.cli.run`` hands ``STOP`` to the
gate service, whose start-up ends at its next step when it is set, and the gate's loop installs its
own handlers once started. Before this module runs (the interpreter's own start, a few
hundredths of a second) a signal still ends the process as Python does by default. ``catch`` also
sets the process umask to 0o077 for ``edge run`` (the state directory 0700, the journal, the store
and SQLite's -wal/-shm 0600, whatever the umask it was started with: docs/operations.md). Only the
standard library is imported here."""

from __future__ import annotations

import os
import signal
import threading

#: Set by SIGTERM/SIGINT once ``catch`` found ``edge run`` (a ``threading.Event``: the start-up's waits poll it).
STOP = threading.Event()
#: The signals received, in order (their numbers).
SIGNALS: list[int] = []

#: The umask of a gate process: nothing of its state readable by group or others.
GATE_UMASK = 0o077


def is_gate_run(args: list[str]) -> bool:
    """``args`` (the command line after the program) name ``edge run``: "edge" then "run"."""
    return any(a == "edge" and b == "run" for a, b in zip(args, args[1:]))


def note(signum: int, _frame=None) -> None:
    """The handler: note the signal and set ``STOP`` (nothing raised: the start-up ends at its next step)."""
    SIGNALS.append(signum)
    STOP.set()


def install() -> None:
    """``note`` for SIGTERM and SIGINT, and the gate's umask (main thread only: ``ValueError`` else)."""
    os.umask(GATE_UMASK)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, note)


def catch(args: list[str]) -> bool:
    """``install`` when ``args`` run the gate and this is the main thread; True when installed."""
    if not is_gate_run(args) or threading.current_thread() is not threading.main_thread():
        return False
    install()
    return True
