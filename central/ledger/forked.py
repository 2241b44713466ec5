"""A pure computation in a forked child process beside the caller (issue 32: the month's first
close on PostgreSQL uses the machine's second core for its input digests; a thread would share
the GIL with the close's own Python).

``Forked(fn, *args)`` forks (``os.fork``: the child sees the caller's memory as it is, nothing is
pickled on the way in) a child that runs ``fn(*args)``, writes its pickled result to an unlinked
temporary file and ends with ``os._exit`` (no finalizer, ``atexit`` hook or buffered stream of
the caller runs in it: it never touches the caller's database connections or open files).
``result()`` waits for the child and returns that result; when the child failed (``fn`` raised,
the child was killed, its result cannot be read) it runs ``fn(*args)`` in the caller instead, so
the caller gets what the inline computation gives, its exception included (``failed`` says the
child's result was not used; a fork that fails, ``EAGAIN`` or ``ENOMEM``, is a failed child).
``close()`` (and leaving the ``with`` block) kills a child still running (SIGKILL) and reaps it:
no child outlives its ``Forked``.

In the child SIGINT and SIGTERM get their default actions first thing (Ctrl-C at a terminal
signals the whole process group: the child ends at once, silently, and the caller, which gets
the interrupt itself, reaps it), and on Linux it is killed when the thread that forked it ends
(``PR_SET_PDEATHSIG``: a parent killed with SIGKILL leaves no child behind). ``fn`` must be pure:
no I/O, no lock another thread may hold, no import (the child of a process with threads holds
only the forking thread). ``fn`` and ``args`` are read by the child as they were at the fork.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import tempfile
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
_PR_SET_PDEATHSIG = 1
try:
    _LIBC = ctypes.CDLL(None, use_errno=True)  # loaded before any fork: nothing to load in a child
    _PRCTL = _LIBC.prctl
except (OSError, AttributeError):  # not Linux: the child is still killed by close()
    _PRCTL = None


class Forked(Generic[T]):
    """``fn(*args)`` in a forked child (module docstring). ``pid``: the child's process id
    (``None``: the fork failed)."""

    def __init__(self, fn: Callable[..., T], *args) -> None:
        self._fn, self._args = fn, args
        self._out = tempfile.TemporaryFile()
        self._status: int | None = None  # the child's wait status, once reaped
        self.failed = False
        parent = os.getpid()
        try:
            self.pid: int | None = os.fork()
        except OSError:  # no process to be had (EAGAIN, ENOMEM): computed by the caller
            self.pid, self._status = None, -1
            return
        if self.pid == 0:  # the child: never returns
            _child(parent, self._out.fileno(), fn, args)

    def __enter__(self) -> Forked[T]:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def result(self) -> T:
        """``fn(*args)``: the child's result once it has ended, or computed here when the child
        failed (module docstring). Raises what ``fn`` raises (here)."""
        self._reap()
        if self._status == 0:
            try:
                size = os.fstat(self._out.fileno()).st_size
                return pickle.loads(os.pread(self._out.fileno(), size, 0))
            except (OSError, pickle.UnpicklingError, EOFError, ValueError):
                pass
        self.failed = True
        return self._fn(*self._args)

    def close(self) -> None:
        """Kill the child if it is still running, reap it, drop its result file."""
        if self._status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:  # ended already, not reaped yet
                pass
            self._reap()
        self._out.close()

    def _reap(self) -> None:
        if self._status is None:
            _pid, status = os.waitpid(self.pid, 0)
            self._status = os.waitstatus_to_exitcode(status)


def _child(parent: int, fd: int, fn: Callable, args: tuple) -> None:
    """The child's whole life: default signal actions, die with the forking thread, ``fn(*args)``
    pickled into ``fd``; exit status 0 when written, 1 otherwise. Never returns."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if _PRCTL is not None:
            _PRCTL(ctypes.c_int(_PR_SET_PDEATHSIG), ctypes.c_ulong(int(signal.SIGKILL)))
        if os.getppid() == parent:  # else the parent is gone already: nobody to compute for
            data = pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)
            view = memoryview(data)
            while view:
                view = view[os.pwrite(fd, view, len(data) - len(view)):]
            code = 0
    except BaseException:  # noqa: BLE001 (the parent computes it again and sees the error itself)
        code = 1
    finally:
        os._exit(code)
