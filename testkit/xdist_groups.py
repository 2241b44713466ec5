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
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

KEY = "portgate_xdist_groups"  # workerinput: the directory of the groups files
GROUPS_DIR = pytest.StashKey[str]()  # the controller's copy of it


def group_of(item: pytest.Item) -> str | None:
    """The item's ``xdist_group`` name (several marks: their names sorted and joined by ``_``)."""
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    return "_".join(sorted(names)) or None


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

    def _assign_work_unit(self, node) -> None:
        """Hand out the groups first, then the units with a ``slow`` test, then the rest (the queue
        is otherwise largest first)."""
        self._load_groups()
        slow = [s for s, tests in self.workqueue.items() if not s.startswith("@") and self.slow.intersection(tests)]
        for scope in reversed(slow):
            self.workqueue.move_to_end(scope, last=False)
        for scope in [s for s in self.workqueue if s.startswith("@")]:
            self.workqueue.move_to_end(scope, last=False)
        super()._assign_work_unit(node)
