"""Ctrl-C (SIGINT) and SIGTERM for a command that writes the ledger (``portgate pay``, ``pay close``).

``Interrupts()`` as a context manager (main thread only): inside it SIGTERM is raised as
``Terminated``, a ``KeyboardInterrupt``, so a stop asked by ``kill`` or systemd rolls the open
transaction back and ends with the same one line as Ctrl-C (``app.cli.main``: ``cli.aborted``,
exit 143 instead of Ctrl-C's 130). ``hold()``, called once the command's work is committed, keeps
the next SIGINT or SIGTERM instead of raising it (``got``: its signal number), so that what is
stored is reported, not called aborted; a second one raises as before (the user insists). Leaving
the ``with`` puts the handlers found on entry back. Off the main thread (a command run in-process
by another thread) it changes nothing: Python sets signal handlers on the main thread only."""

from __future__ import annotations

import signal
import threading


class Terminated(KeyboardInterrupt):
    """SIGTERM raised as an interrupt: the same roll-back and line as Ctrl-C; exit status 143."""

    exit_code = 143


def interrupt_for(signum: int) -> KeyboardInterrupt:
    """The interrupt to raise for ``signum``: ``Terminated`` for SIGTERM, else ``KeyboardInterrupt``."""
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def exit_status(exc: BaseException | None) -> int:
    """The exit status of a command stopped by ``exc`` (an interrupt, or what Click made of one:
    its ``__cause__``): 143 for ``Terminated`` (SIGTERM), else 130 (Ctrl-C)."""
    cause = exc.__cause__ if exc is not None and exc.__cause__ is not None else exc
    return Terminated.exit_code if isinstance(cause, Terminated) else 130


def interrupt_in(exc: BaseException | None) -> KeyboardInterrupt | None:
    """The interrupt (``KeyboardInterrupt``, ``Terminated``) in ``exc``'s chain of causes and
    contexts, ``exc`` included (``None``: none): what a failure raised while it was unwinding (a
    rollback on a connection it left mid-command) hides."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        exc = todo.pop()
        if exc is None or id(exc) in seen:
            continue
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        todo += (exc.__context__, exc.__cause__)
    return None


class Interrupts:
    """SIGTERM as ``Terminated`` inside the ``with``; ``hold()``: keep the next signal (module docstring)."""

    def __init__(self) -> None:
        self.got: int | None = None
        self.holding = False
        self.committed = False  # the caller's: its work is committed (what a late interrupt reports)
        self._saved: dict[int, object] = {}

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is not threading.main_thread():  # no handlers there: as before
            return self
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._saved[signum] = signal.getsignal(signum)
        signal.signal(signal.SIGTERM, self._raise)
        return self

    def __exit__(self, *_exc) -> None:
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)

    def hold(self) -> None:
        """From now on keep the first SIGINT or SIGTERM (``got``) instead of raising it."""
        self.holding = True
        if not self._saved:  # not entered on the main thread: signals stay as they are
            return
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._keep)

    def _raise(self, signum, _frame) -> None:
        raise interrupt_for(signum)

    def _keep(self, signum, _frame) -> None:
        if self.got is not None:  # the second one: stop now
            raise interrupt_for(signum)
        self.got = signum
