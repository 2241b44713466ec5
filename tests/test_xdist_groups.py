"""How ``scripts/test.sh`` spreads the suite over two workers (``--dist loadgroup`` with
``testkit.xdist_groups.ModuleOrGroupScheduling``, chosen in ``tests/conftest.py``): every module that
uses ``demo_day`` runs on one worker, so the session's demo day is played once per run; every other
module runs whole on one worker. Checked on a planted suite run by a real ``pytest -n 2``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from testkit.xdist_groups import read_times

ROOT = Path(__file__).resolve().parents[1]
# The planted runs need neither hypothesis's plugin nor anyio's: hypothesis's import is ~0.8 s of CPU
# in each of a run's three processes (controller and two workers), most of a run's ~4 s.
LEAN = ("-p", "no:hypothesispytest", "-p", "no:anyio")

CONFTEST = '''
import os
import pytest
from tests.conftest import pytest_collection_modifyitems  # noqa: F401  (the demo_day group)

pytest_plugins = ["testkit.xdist_groups"]

def note(text):
    with open(os.environ["PLANT_LOG"], "a") as f:
        f.write(f"{text} {os.environ.get('PYTEST_XDIST_WORKER', '-')}\\n")

@pytest.fixture(scope="session")
def demo_day():
    note("demo_day")  # the real one plays a whole demo day (~90 s)
    yield "day"

@pytest.fixture(autouse=True)
def _where(request):
    note(request.node.nodeid)
'''
DEMO_DIRECT = "def test_one(demo_day):\n    pass\n\ndef test_two():\n    pass\n"
DEMO_THROUGH = ("import pytest\n\n@pytest.fixture(scope='module')\ndef office(demo_day):\n    return demo_day\n\n"
                "def test_reads(office):\n    pass\n\ndef test_other():\n    pass\n")
PLAIN = "\n".join(f"def test_{i}():\n    pass\n" for i in range(4))


SLOW = "import pytest\n\n@pytest.mark.slow\ndef test_long_fault_run():\n    pass\n"


def _run(tmp_path: Path, *args: str, times: str | None = None,
         **extra: str) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    """Run the planted suite (plus ``extra``: module name -> source; ``args``: more pytest arguments;
    ``times``: the module times file's text) on two workers; return where each test and the demo day
    ran, and every (test or "demo_day", worker) in the order they ran."""
    suite = tmp_path / "suite"
    (suite / "web").mkdir(parents=True)
    (suite / "conftest.py").write_text(CONFTEST)
    (suite / "test_demo_direct.py").write_text(DEMO_DIRECT)
    (suite / "web" / "test_demo_through.py").write_text(DEMO_THROUGH)
    for n in range(6):
        (suite / f"test_plain_{n}.py").write_text(PLAIN)
    for name, source in extra.items():
        (suite / f"{name}.py").write_text(source)
    log = tmp_path / "log"
    env = {**os.environ, "PLANT_LOG": str(log), "PYTHONPATH": str(ROOT),
           "PORTGATE_MODULE_TIMES": str(tmp_path / "module_times.json")}
    if times is not None:
        (tmp_path / "module_times.json").write_text(times)
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-q",
                           "-p", "no:cacheprovider", *LEAN, *args, str(suite)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = [tuple(line.rsplit(" ", 1)) for line in log.read_text().splitlines()]
    where: dict[str, list[str]] = defaultdict(list)
    for what, worker in lines:
        where[what].append(worker)
    return where, lines


def test_the_demo_day_is_played_once_and_every_module_stays_on_one_worker(tmp_path):
    where, lines = _run(tmp_path)
    assert len(where["demo_day"]) == 1  # one session fixture set-up in the whole run
    demo_worker = where["demo_day"][0]
    assert [what for what, worker in lines if worker == demo_worker][0] == "demo_day"  # the group first
    modules: dict[str, set[str]] = defaultdict(set)
    for nodeid, workers in where.items():
        if "::" in nodeid:
            assert len(workers) == 1, nodeid  # each test ran once
            modules[nodeid.split("::")[0]].update(workers)
    assert len(modules) == 8 and sum(len(w) for n, w in where.items() if "::" in n) == 4 + 24
    # both demo modules (their tests that do not use the demo too) on the demo's worker
    for name in ("test_demo_direct.py", "web/test_demo_through.py"):
        assert [w for m, w in modules.items() if m.endswith(name)] == [{demo_worker}], modules
    assert all(len(w) == 1 for w in modules.values()), modules  # no module split over workers


def test_a_module_with_a_slow_test_is_handed_out_before_the_larger_plain_modules(tmp_path):
    """A one-test module of a long fault run would otherwise come last (xdist hands out the modules
    with the most tests first) and keep one worker busy after the other has run out of work."""
    where, lines = _run(tmp_path, test_slow_one=SLOW)
    slow_id = next(n for n in where if n.endswith("test_slow_one.py::test_long_fault_run"))
    assert len(where[slow_id]) == 1
    worker = where[slow_id][0]
    assert worker != where["demo_day"][0]  # the demo group went to the other worker, first
    ran_there = [what for what, w in lines if w == worker and "::" in what]
    assert ran_there[0] == slow_id, ran_there  # before any plain module of 4 tests


LONG_FEW = "def test_a_whole_port():\n    pass\n"  # one test; its module's recorded time is long


def test_the_modules_go_out_longest_first_by_their_recorded_times(tmp_path):
    """A module of a few long tests (a port started, a browser) went out last under "most tests
    first" and kept one worker going after the others ended; with its time recorded it goes first
    after the groups, and the recorded times are what ``--module-times-out`` writes."""
    times = json.dumps({"suite/test_long_few.py": 300.0, "suite/test_plain_0.py": 0.1})
    where, lines = _run(tmp_path, "--module-times-out", str(tmp_path / "out.json"), times=times,
                        test_long_few=LONG_FEW)
    long_id = next(n for n in where if n.endswith("test_long_few.py::test_a_whole_port"))
    worker = where[long_id][0]
    assert worker != where["demo_day"][0]  # the group went first, to the other worker
    assert [what for what, w in lines if w == worker and "::" in what][0] == long_id
    plain_0 = [i for i, (what, _w) in enumerate(lines) if "test_plain_0.py::" in what]
    others = [i for i, (what, _w) in enumerate(lines) if "test_plain_" in what and "test_plain_0.py::" not in what]
    assert min(plain_0) > min(others)  # the shortest recorded module is not handed out first
    written = json.loads((tmp_path / "out.json").read_text())
    assert len(written) == 9 and all(isinstance(v, float) and v >= 0 for v in written.values()), written
    assert any(k.endswith("test_long_few.py") for k in written) and any(k.endswith("web/test_demo_through.py")
                                                                          for k in written), written


def test_a_missing_or_broken_times_file_leaves_the_order_to_the_test_counts(tmp_path):
    where, lines = _run(tmp_path, times="not json", test_slow_one=SLOW)
    slow_id = next(n for n in where if n.endswith("test_slow_one.py::test_long_fault_run"))
    worker = where[slow_id][0]
    assert [what for what, w in lines if w == worker and "::" in what][0] == slow_id  # as without a file
    assert read_times(tmp_path / "module_times.json") == {}
    assert read_times(tmp_path / "nowhere.json") == {}
    (tmp_path / "list.json").write_text("[1, 2]")
    assert read_times(tmp_path / "list.json") == {}


def test_the_run_ends_with_each_workers_seconds_and_when_it_was_done(tmp_path):
    """The controller's last line names every worker with its seconds of tests and the moment its
    last test ended (a worker done long before the others shows the scheduling's tail)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    for n in range(3):
        (suite / f"test_plain_{n}.py").write_text(PLAIN)
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-q",
                           "-p", "no:cacheprovider", *LEAN, "-p", "testkit.xdist_groups", str(suite)], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [line] = [x for x in done.stdout.splitlines() if x.startswith("workers: ")]
    assert re.fullmatch(r"workers: gw0 \d+ s of tests, done at \d+ s; gw1 \d+ s of tests, done at \d+ s", line), line
