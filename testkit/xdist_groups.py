"""The suite's pytest-xdist scheduling (a pytest plugin, ``pytest_plugins`` of ``tests/conftest.py``;
used with ``--dist loadgroup``, as ``scripts/test.sh`` runs the suite).

Each test module goes whole to one worker, as with ``--dist loadfile`` (module fixtures start once;
some modules' tests build on each other's state), except that the tests marked
``xdist_group("name")`` go together, whatever their module, to one worker, and the groups are handed
out first (they hold the longest set-up: the session's demo day, ``tests/conftest.py``), then the
modules with a test marked ``slow`` (long fault runs: one such module handed out last would keep one
worker busy while the other has nothing left to do), then the rest, most tests first.

pytest-xdist's own ``loadgroup`` tells the controller a test's group by appending ``@name`` to its
node id on the worker, which pytest 9 no longer allows (``Node.nodeid`` is read-only), and it
spreads every unmarked test one by one. Here each worker writes the groups of its collection and
its tests marked ``slow`` to a JSON file in a directory the controller gave it (``workerinput``),
before it reports its collection; the controller's scheduler reads them when it splits the
collection into work units.

Past the groups, the units go out longest first by the seconds a whole run recorded for each module
(``tests/module_times.json``, or the file ``PORTGATE_MODULE_TIMES`` names; written by
``--module-times-out PATH``, ``scripts/test.sh --module-times-out tests/module_times.json``): with
four workers the run ends when the last unit does, and a module of a few long tests (a whole port
started, a browser, a demo of its own) handed out last kept one worker going after the others had
run out of work (issue 32). A module the file does not know counts ``UNKNOWN_S`` per test, or
``SLOW_UNKNOWN_S`` with a test marked ``slow``, so a new module still goes out in a sensible place.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

KEY = "portgate_xdist_groups"  # workerinput: the directory of the groups files
GROUPS_DIR = pytest.StashKey[str]()  # the controller's copy of it
UNKNOWN_S = 0.5  # seconds per test of a module tests/module_times.json does not know
SLOW_UNKNOWN_S = 60.0  # ... of such a module with a test marked slow (a long fault run)


def group_of(item: pytest.Item) -> str | None:
    """The item's ``xdist_group`` name (several marks: their names sorted and joined by ``_``)."""
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    return "_".join(sorted(names)) or None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--module-times-out", default=None, metavar="PATH",
                     help="write each test module's seconds (set-up + call + teardown summed) to PATH as "
                          "JSON: the scheduler's tests/module_times.json (testkit/xdist_groups.py)")


def times_path(config: pytest.Config) -> Path:
    """The module times the scheduler reads: ``PORTGATE_MODULE_TIMES`` or ``tests/module_times.json``."""
    return Path(os.environ.get("PORTGATE_MODULE_TIMES") or config.rootpath / "tests" / "module_times.json")


def read_times(path: Path) -> dict[str, float]:
    """``{module path: seconds}`` from ``path``; empty when it is missing or not such a JSON object."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {str(k): float(v) for k, v in found.items() if isinstance(v, (int, float))}


class TimesRecorder:
    """``--module-times-out PATH`` on the controller (or a run without workers): each phase's seconds
    summed per module, written to PATH as JSON when the session ends."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.times: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        module = report.nodeid.split("::", 1)[0]
        self.times[module] = self.times.get(module, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        rounded = {k: round(v, 1) for k, v in sorted(self.times.items())}
        self.out.write_text(json.dumps(rounded, indent=0) + "\n", encoding="utf-8")


class WorkerSummary:
    """Controller: each worker's seconds of tests and when its last test ended, printed at the end
    of the run ("workers: gw0 612 s of tests, done at 701 s; ..."): a worker done long before the
    run ended shows the tail the scheduling left (issue 32 item 1)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.busy: dict[str, float] = {}
        self.done_at: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", None)
        if worker is not None:
            self.busy[worker] = self.busy.get(worker, 0.0) + report.duration
            self.done_at[worker] = time.monotonic() - self.started

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.busy:
            terminalreporter.write_line("workers: " + "; ".join(
                f"{w} {self.busy[w]:.0f} s of tests, done at {self.done_at[w]:.0f} s" for w in sorted(self.busy)))


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    out = config.getoption("module_times_out", None)
    if out:
        config.pluginmanager.register(TimesRecorder(Path(out)), "portgate-module-times")
    if config.getoption("numprocesses", None):
        config.pluginmanager.register(WorkerSummary(), "portgate-worker-summary")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """Controller: give each worker the groups directory (made once per run)."""
    stash = node.config.stash
    if GROUPS_DIR not in stash:
        stash[GROUPS_DIR] = tempfile.mkdtemp(prefix="portgate-xdist-groups-")
    node.workerinput[KEY] = stash[GROUPS_DIR]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Worker: write ``{"groups": {node id: group}, "slow": [node id, ...]}`` before pytest-xdist
    reports the collection."""
    where = getattr(session.config, "workerinput", {}).get(KEY)
    if where:
        groups = {item.nodeid: g for item in session.items if (g := group_of(item))}
        slow = [item.nodeid for item in session.items if item.get_closest_marker("slow")]
        path = Path(where) / f"{session.config.workerinput['workerid']}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"groups": groups, "slow": slow}), encoding="utf-8")
        os.replace(tmp, path)


def pytest_unconfigure(config: pytest.Config) -> None:
    if GROUPS_DIR in config.stash:
        shutil.rmtree(config.stash[GROUPS_DIR], ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.getvalue("dist") == "loadgroup":
        return ModuleOrGroupScheduling(config, log)
    return None


class ModuleOrGroupScheduling(LoadScopeScheduling):
    """A work unit is a group (every test marked ``xdist_group(name)``) or else a module."""

    def __init__(self, config: pytest.Config, log=None) -> None:
        super().__init__(config, log)
        self.groups_dir = config.stash.get(GROUPS_DIR, None)
        self.group: dict[str, str] | None = None
        self.slow: set[str] = set()
        self.times = read_times(times_path(config))
        self.ordered = False

    def _load_groups(self) -> dict[str, str]:
        if self.group is None:
            self.group = {}
            if self.groups_dir:
                for path in sorted(Path(self.groups_dir).glob("*.json")):
                    found = json.loads(path.read_text(encoding="utf-8"))
                    self.group.update(found["groups"])
                    self.slow.update(found["slow"])
        return self.group

    def _split_scope(self, nodeid: str) -> str:
        """A test's group name (``@`` + name: never a path) or its module's path."""
        group = self._load_groups().get(nodeid)
        return "@" + group if group else nodeid.split("::", 1)[0]

    def estimates(self) -> dict[str, float]:
        """Each queued work unit's expected seconds: each test's share of its module's recorded time,
        or ``UNKNOWN_S`` per test (``SLOW_UNKNOWN_S`` for the module, with a ``slow`` test) of a
        module the times file does not know."""
        count: dict[str, int] = {}
        for nodeid in self.collection or ():
            module = nodeid.split("::", 1)[0]
            count[module] = count.get(module, 0) + 1
        slow_modules = {nodeid.split("::", 1)[0] for nodeid in self.slow}
        out = {}
        for scope, tests in self.workqueue.items():
            total = 0.0
            for nodeid in tests:
                module = nodeid.split("::", 1)[0]
                if module in self.times:
                    total += self.times[module] / count.get(module, 1)
                elif module in slow_modules:
                    total += SLOW_UNKNOWN_S / count.get(module, 1)
                else:
                    total += UNKNOWN_S
            out[scope] = total
        return out

    def _assign_work_unit(self, node) -> None:
        """Hand out the groups first, then the rest longest first (``estimate``)."""
        self._load_groups()
        if not self.ordered:
            self.ordered = True
            seconds = self.estimates()
            units = sorted(self.workqueue, key=lambda s: (not s.startswith("@"), -seconds[s]))
            for scope in units:
                self.workqueue.move_to_end(scope)
        super()._assign_work_unit(node)
