"""Ctrl-C (SIGINT) and SIGTERM for a command that writes the ledger (``portgate pay``, ``pay close``).

``Interrupts()`` as a context manager (main thread only): inside it SIGTERM is raised as
``Terminated``, a ``KeyboardInterrupt``, so a stop asked by ``kill`` or systemd rolls the open
transaction back and ends with the same one line as Ctrl-C (``app.cli.main``: ``cli.aborted``,
exit 143 instead of Ctrl-C's 130). ``hold()``, called once the command's work is committed, keeps
the next SIGINT or SIGTERM instead of raising it (``got``: its signal number), so that what is
stored is reported, not called aborted; a second one raises as before (the user insists). Leaving
the ``with`` puts the handlers found on entry back, except in the command line's own process
(``keep_held_to_the_end``, called by ``app.cli.main`` when it runs as the ``portgate`` program)
once the work was held: there SIGINT and SIGTERM are ignored (``SIG_IGN``) from the ``with``'s end
to the process's (the counts printed, the interpreter's finalization, the heap freed: on a large
close a few hundred ms; a Python handler would be reset to the default by the finalization), so a
close that finished is never reported as interrupted (exit 0; it was 130 "aborted" or a silent
143, a fresh tester's 16 of 16 signals 20-200 ms after the counts); SIGKILL still ends it. Off the main thread (a command run in-process
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


_TO_THE_END = {"on": False}  # the portgate program's own process (keep_held_to_the_end)


def keep_held_to_the_end() -> None:
    """In the ``portgate`` program's own process only (``app.cli.main`` run as the program, never a
    command run in-process by a test or another program): a command whose work is held
    (``Interrupts.hold``) keeps SIGINT and SIGTERM held after its ``with`` until the process ends."""
    _TO_THE_END["on"] = True


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
        after = self.holding and _TO_THE_END["on"]  # held work in the program's process: ignored to its end
        for signum, handler in self._saved.items():  # SIG_IGN, not a Python handler: the interpreter's
            signal.signal(signum, signal.SIG_IGN if after else handler)  # finalization keeps it (not SIG_DFL)

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
