"""The benchmarks' command line and clean-up (bench/_cli.py, bench/run_all.py): a size or count of
0 or less is refused with argparse's one-line error before anything starts (it used to mean the
full default size), ``--cpu-quota`` outside 0 < q <= the CPUs is refused, ``month_close`` with no
database is refused, ``--help`` says the whole first sentence, and a SIGTERM runs a benchmark's
clean-up: its PostgreSQL stopped and its temporary directories removed; ``run_all`` ends a
benchmark's whole process group on its ``--timeout``."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from testkit.wait import wait_until

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def _run(script: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=600)  # a guard: a refusal takes a second


@pytest.mark.parametrize(("script", "args"), [
    ("month_close.py", ["--workers", "0"]), ("month_close.py", ["--rounds", "0"]),
    ("month_close.py", ["--workers", "-5"]), ("month_close.py", ["--no-postgres", "--no-sqlite"]),
    ("month_close.py", ["--smoke", "--no-sqlite"]), ("gate_decision.py", ["--workers", "0"]),
    ("gate_decision.py", ["--cpu-quota", "-1"]), ("gate_decision.py", ["--cpu-quota", "nan"]),
    ("gate_decision.py", ["--cpu-quota", str((os.cpu_count() or 1) + 1)]),
    ("gate_decision.py", ["--cpu-quota", "0.0001"]), ("gate_decision.py", ["--cpu-quota", "0.00099"]),
    ("gate_display.py", ["--workers", "0"]), ("pay_month.py", ["--workers", "0"]),
    ("payslips.py", ["--workers", "0"]), ("run_all.py", ["--only"]),
])
def test_a_size_of_zero_or_less_is_refused_before_anything_starts(script, args, tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"))
    out = _run(script, *args, env=env)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stdout[-1000:] + out.stderr[-2000:]
    assert out.stderr.strip().splitlines()[-1].startswith(f"{script}: error: "), out.stderr
    assert list(tmp_path.iterdir()) == []  # nothing made, no record written


def test_no_bench_reads_a_zero_as_its_default_size():
    """``args.x or default`` made 0 the default size; every count option is typed ``_cli.count``."""
    for path in sorted(BENCH.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"args\.\w+ or \(", text), path.name
        for opt in re.findall(r'add_argument\("(--[a-z-]+)", type=int\b', text):
            assert opt == "--seed", f"{path.name} {opt}: type=int takes 0 and negatives"


def test_month_close_help_says_its_whole_first_sentence():
    out = _run("month_close.py", "--help")
    text = " ".join(out.stdout.split())
    assert out.returncode == 0 and "-> stored, next to reading the month's event rows in the same run" in text
    assert "(DESIGN.md target: <= 5x)." in text


def test_every_bench_description_is_a_whole_sentence():
    sys.path.insert(0, str(BENCH))
    try:
        from _cli import description
    finally:
        sys.path.remove(str(BENCH))
    for path in sorted(BENCH.glob("*.py")):
        if "description(__doc__)" in path.read_text(encoding="utf-8"):
            said = description(ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False))
            assert said.endswith("."), (path.name, said)


def _processes_under(root: Path) -> dict[int, str]:
    """pid -> command line of the processes naming ``root`` (PostgreSQL: ``-D root/.../data``)."""
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            args = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(root) in args and proc.name.isdigit() and int(proc.name) != os.getpid():
            found[int(proc.name)] = args
    return found


def test_a_sigterm_stops_the_bench_s_postgresql_and_removes_its_temporary_directories():
    """month_close on PostgreSQL at a tiny size, SIGTERMed once its server runs: exit 143, no
    process left naming its temporary root, the root empty (it left 1.2 GB in /tmp/tmp* before)."""
    root = Path(tempfile.mkdtemp(prefix="portgate-test-sigterm-"))
    os.chmod(root, 0o755)  # the server runs as an unprivileged user under root
    proc = subprocess.Popen([sys.executable, str(BENCH / "month_close.py"), "--no-sqlite", "--workers", "50",
                             "--rounds", "1", "--reclose-rounds", "1"], cwd=ROOT, text=True,
                            env=dict(os.environ, TMPDIR=str(root)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_until(lambda: any("/bin/postgres -D" in a for a in _processes_under(root).values())
                   or proc.poll() is not None,
                   180, what="the bench's PostgreSQL running")
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
        assert _processes_under(root) == {} and list(root.iterdir()) == []
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        for pid in _processes_under(root):  # never leave a server behind, even on a failure
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(root, ignore_errors=True)


def _run_all():
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_all", BENCH / "run_all.py")
    run_all = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_all)
    return run_all


FAKE = """
import os, signal, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
open(sys.argv[1] + ".tmp", "w").write(str(child.pid))
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
if sys.argv[2] == "deaf":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("started", flush=True)
time.sleep(3600)
"""


@pytest.mark.parametrize("mode", ["default", "deaf"])
def test_run_all_ends_the_bench_s_whole_process_group(tmp_path, mode):
    """``stop_group``: SIGTERM to the bench, then its group; a bench that ignores SIGTERM is
    SIGKILLed with its group. The bench's own child (same group) is gone either way."""
    run_all = _run_all()
    pidfile = tmp_path / "child.pid"
    proc = subprocess.Popen([sys.executable, "-c", FAKE, str(pidfile), mode], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_until(pidfile.exists, 120, what="the fake bench's child")
        child = int(pidfile.read_text())
        started = time.monotonic()
        out, _ = run_all.stop_group(proc, grace=1.0 if mode == "deaf" else 600.0)
        assert proc.returncode is not None and out == "started\n"
        if mode == "default":  # ended at its SIGTERM: not held for the grace by its child's open pipe
            assert time.monotonic() - started < 300
        with pytest.raises(ProcessLookupError):
            os.killpg(proc.pid, 0)
        assert not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def test_run_all_times_a_bench_out_with_its_group(tmp_path, monkeypatch):
    """``run_one`` on ``--timeout``: the bench stopped with its process group, "timeout" said."""
    run_all = _run_all()
    script = tmp_path / "sleeper.py"
    pidfile = tmp_path / "child.pid"
    script.write_text(FAKE.replace("sys.argv[1]", repr(str(pidfile))).replace("sys.argv[2]", "'default'"))
    got = run_all.run_one(script, smoke=False, timeout=0.5)
    assert got["error"] == "exit -1"
    assert "timeout after 0.5 s" in got["tail"]
    if pidfile.exists():  # the child was started before the timeout: it is gone with the group
        assert not Path(f"/proc/{int(pidfile.read_text())}").exists()


def test_the_gate_bench_takes_no_reference_from_a_run_with_another_seed(tmp_path):
    """A smoke run with ``--seed 2`` next to a recorded default smoke run: "no previous run" at its
    own key (sizes + ``seed=2``), the default run's record left as it was; ``reference`` in the JSON
    line names the key it was judged at. (It took the default run as its reference before.)"""
    import json

    sys.path.insert(0, str(BENCH))
    try:
        import _lastrun
    finally:
        sys.path.remove(str(BENCH))
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path))
    default = "workers=500 events=2000 reads=200 flagged=100 rounds=4 burst=50"
    record = tmp_path / "portgate" / "bench" / "last_runs.json"
    record.parent.mkdir(parents=True)
    seeded = {"at": "2026-12-07T01:00:00+00:00", "commit": "abc1234", "ratio": {"p50": 1.0, "p99": 1.0,
                                                                                "sustained": 1.0}}
    record.write_text(json.dumps({_lastrun.machine_key(): {f"gate_decision {default}": seeded}}))
    out = _run("gate_decision.py", "--smoke", "--seed", "2", "--cpu-quota", "0", env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    last = json.loads(out.stdout.strip().splitlines()[-1])
    assert last["previous"] is None and last["reference"] == default + " seed=2"
    assert f"last run on this machine at {default} seed=2: none" in out.stdout
    kept = json.loads(record.read_text())[_lastrun.machine_key()]
    assert kept[f"gate_decision {default}"] == seeded and set(kept) == {f"gate_decision {default}",
                                                                        f"gate_decision {default} seed=2"}


def test_the_docs_say_what_the_code_does():
    """docs/performance.md opens with how to read the table and states the quota's period as
    ``bench/_cpuquota.PERIOD_US`` (it said 100,000 us); ``.ci/run`` promises no bench step it lacks."""
    from bench._cpuquota import PERIOD_US

    perf = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert perf.splitlines()[2] == "## How to read these figures" and "(issue 23)" not in perf.splitlines()[0]
    assert f"`cpu.cfs_period_us` {PERIOD_US:,}" in perf and "`cpu.cfs_period_us` 100,000" not in perf
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line for line in ci.splitlines() if line and not line.startswith("#")]
    assert commands[-1] == "bash scripts/test.sh" and "then a smoke run" not in ci


QUICK = """
import json, pathlib, sys
pathlib.Path(sys.argv[0]).with_suffix(".ran").write_text("ran")
print(json.dumps({"bench": "a_quick", "figures": {"x": 1}, "baseline": {"y": 1}, "ratio": 1.0,
                  "target": "x >= y", "met": True}))
"""
SLOW = """
import pathlib, sys, time
pathlib.Path(sys.argv[0]).with_suffix(".started").write_text("started")
print("b_slow started", flush=True)
time.sleep(3600)
"""


def _fake_run_all(tmp_path: Path, *args: str) -> subprocess.Popen:
    """``bench/run_all.py``'s ``main`` in its own process over two fake benches in ``tmp_path/benches``
    (``a_quick``: its JSON line at once; ``b_slow``: sleeps an hour), stdout/stderr piped."""
    benches = tmp_path / "benches"
    benches.mkdir()
    (benches / "a_quick.py").write_text(QUICK)
    (benches / "b_slow.py").write_text(SLOW)
    code = (f"import sys, pathlib; sys.path.insert(0, {str(BENCH)!r}); import run_all; "
            f"run_all.HERE = pathlib.Path({str(benches)!r}); sys.exit(run_all.main(sys.argv[1:]))")
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_run_all_stopped_during_a_bench_writes_the_table_of_what_finished(tmp_path, sig):
    """SIGINT/SIGTERM while the 2nd benchmark runs: that bench stopped with its group and marked
    INTERRUPTED, the 1st's row printed and written to --out, exit 130/143 (it exited 130 with no
    table before)."""
    out = tmp_path / "table.md"
    proc = _fake_run_all(tmp_path, "--out", str(out))
    try:
        wait_until((tmp_path / "benches" / "b_slow.started").exists, 180, what="the second bench running")
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 128 + sig, stderr[-2000:]
    name = signal.Signals(sig).name
    md = out.read_text()
    assert md in stdout and "Traceback" not in stderr
    assert f"# Benchmarks (full run, stopped by {name})" in md
    assert "| a_quick | x >= y |" in md and "| yes |" in md
    assert f"| b_slow | INTERRUPTED (interrupted by {name}: stopped with its process group): b_slow started" in md
    assert f"Run stopped by {name}: the benchmarks after it did not run." in md
    assert json.loads(stdout.strip().splitlines()[-1])["stopped"] == name


@pytest.mark.parametrize("where", ["a directory", "a missing parent"])
def test_run_all_refuses_an_out_it_cannot_write_before_anything_runs(tmp_path, where):
    """``--out /tmp`` ran every bench then lost the table to a traceback; ``--out /missing/dir/x.md``
    made the directories. Now: one line, exit 2, no bench run, nothing made."""
    target = tmp_path if where == "a directory" else tmp_path / "missing" / "dir" / "x.md"
    proc = _fake_run_all(tmp_path, "--out", str(target), "--only", "a_quick")
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 2, stdout[-2000:] + stderr[-2000:]
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("-c: error: argument --out: "), stderr
    assert ("is a directory" if where == "a directory" else "does not exist (it is not made)") in lines[0]
    assert not (tmp_path / "benches" / "a_quick.ran").exists() and not (tmp_path / "missing").exists()


def test_run_all_whose_out_fails_at_the_write_still_prints_the_table(tmp_path):
    """``--out /dev/full`` passes the check made before the run (a writable file) and fails at the
    write (no space left): the table was lost to a traceback, exit 1. Now: printed first, then one
    line naming the file and the kernel's words, exit 2."""
    proc = _fake_run_all(tmp_path, "--out", "/dev/full", "--only", "a_quick")
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 2, stdout[-2000:] + stderr[-2000:]
    assert "| a_quick | x >= y |" in stdout and "Traceback" not in stderr
    [line] = [ln for ln in stderr.strip().splitlines() if "error" in ln]  # beside the progress line
    assert line.startswith("-c: error: argument --out: /dev/full: ") and "No space left on device" in line
    assert json.loads(stdout.strip().splitlines()[-1])["bench"] == "run_all"


def test_a_bench_run_alone_at_small_sizes_says_its_verdicts_say_nothing(tmp_path):
    """month_close run alone with fewer workers than the full run (or ``--smoke``) prints "met"/"not
    met" followed by run_all's words for smoke sizes (``_cli.SMOKE_CAVEAT``); it printed a bare "not
    met" before. The full-size verdicts carry no caveat (``verdicts`` without it)."""
    sys.path.insert(0, str(BENCH))
    try:
        from _cli import SMOKE_CAVEAT
        import month_close
    finally:
        sys.path.remove(str(BENCH))
    env = dict(os.environ, TMPDIR=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"))
    out = _run("month_close.py", "--workers", "2", "--rounds", "1", "--reclose-rounds", "1", "--no-postgres",
               env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    said = [x for x in out.stdout.splitlines() if "(target <= " in x and x.startswith("[sqlite]")]
    assert len(said) == 2 and all(x.endswith(("met" + SMOKE_CAVEAT)) for x in said), said
    full = {"first_close_s": 1.0, "floor_s": 1.0, "fastest": "executemany", "first_to_floor": 1.0,
            "first_to_floor_rounds": [1.0], "close_s": 1.0, "skipped": [1], "reclose_read_s": 1.0, "ratio": 1.0}
    assert not any("smoke" in x for x in month_close.verdicts("sqlite", full))
