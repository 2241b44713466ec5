"""The benchmarks' command line and signals, shared by every ``bench/*.py``.

- ``count``: an ``argparse`` type for a size or a number of rounds: an integer >= 1. A 0 or a
  negative value is refused with argparse's one-line error (exit status 2); it never falls back to
  the default size (``args.workers or 5000`` made ``--workers 0`` the full 5,000-worker run).
- ``at_least_zero``: an integer >= 0 (cards flagged at boot, failovers: 0 means none).
- ``cpu_fraction``: ``--cpu-quota``: 0 (skip) or 0.001 <= q <= the number of CPUs (NaN, negative and a
  quota the kernel cannot express refused: ``_cpuquota.MIN_FRACTION``, 1 ms per period of at most 1 s).
- ``SMOKE_CAVEAT``, ``smoke_caveat(smoke)``: the words after a verdict at smoke (or other below-full)
  sizes, "(smoke sizes: the verdicts say nothing of the targets)": ``run_all``'s foot and every bench
  that prints "met"/"not met" when run alone (month_close, card_block, office_web, gate_decision).
- ``description(doc)``: the module docstring's first sentence, for ``--help`` (its first line
  stopped mid-sentence: "... -> shifts rebuilt ->").
- ``exit_on_signals()``: SIGTERM and SIGINT raise ``SystemExit(128 + signal)`` in the main thread, so
  the benchmark's ``finally`` blocks and context managers stop its components (PostgreSQL,
  mosquitto, etcd, patroni, gates) and remove its temporary directories; a second signal during that
  clean-up is ignored (``bench/run_all.py`` sends SIGKILL to the process group if the clean-up
  outlasts its grace).
"""

from __future__ import annotations

import argparse
import os
import signal


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def count(text: str) -> int:
    """An integer >= 1; ``argparse.ArgumentTypeError`` otherwise (argparse: exit 2, one line)."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def at_least_zero(text: str) -> int:
    """An integer >= 0; ``argparse.ArgumentTypeError`` otherwise."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


def cpu_fraction(text: str) -> float:
    """A CPU quota as a fraction of one core: 0 (no quota run) or ``_cpuquota.MIN_FRACTION`` (0.001:
    the kernel's 1 ms minimum quota in its 1 s longest period) <= q <= the CPUs of this machine
    (``os.cpu_count()``); a negative, NaN, infinite, smaller or larger value is refused."""
    from _cpuquota import MIN_FRACTION  # bench/ is sys.path[0] for a bench script

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    cpus = os.cpu_count() or 1
    if value != 0 and not MIN_FRACTION <= value <= cpus:  # NaN fails both comparisons
        raise argparse.ArgumentTypeError(f"must be 0 (no quota run) or from {MIN_FRACTION:g} (the smallest quota "
                                         f"the kernel can set: 1 ms per 1 s) to {cpus} (the CPUs here), got {text}")
    return value


#: What a verdict at smoke sizes is worth: the foot of ``run_all``'s table, and ``smoke_caveat``.
SMOKE_CAVEAT = " (smoke sizes: the verdicts say nothing of the targets)"


def smoke_caveat(smoke: bool) -> str:
    """``SMOKE_CAVEAT`` after a verdict printed by a bench run with ``--smoke``, else ``""``."""
    return SMOKE_CAVEAT if smoke else ""


def description(doc: str | None) -> str:
    """The first sentence of ``doc``'s first paragraph, on one line (``""`` for no docstring)."""
    text = " ".join((doc or "").strip().split("\n\n", 1)[0].split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def _ignore(signum, frame) -> None:  # a Python handler, not SIG_IGN: children do not inherit it
    return None


def _exit(signum, frame) -> None:
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _ignore)
    raise SystemExit(128 + signum)


def exit_on_signals() -> None:
    """SIGTERM/SIGINT -> ``SystemExit(128 + signum)`` once (the clean-up runs), then ignored."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _exit)
