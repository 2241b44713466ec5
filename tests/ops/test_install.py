"""The install scripts, run into a staging root (PORTGATE_ROOT): files, modes, idempotence."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def install(script: str, root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PORTGATE_ROOT": str(root), "SKIP_VENV": "1"}
    res = subprocess.run(["bash", str(ROOT / "scripts" / script)], env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    return res


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_install_gate_and_office_idempotent(tmp_path):
    install("install-gate.sh", tmp_path)
    etc = tmp_path / "etc" / "portgate"
    assert mode(etc) == 0o750 and mode(etc / "gate.toml") == 0o640
    assert (tmp_path / "etc/systemd/system/portgate-gate.service").read_text() == \
        (ROOT / "systemd/portgate-gate.service").read_text()
    assert (tmp_path / "etc/udev/rules.d/99-portgate-readers.rules").exists()
    # the operator edits the config and provides the key (too open at first)
    (etc / "gate.toml").write_text((etc / "gate.toml").read_text() + "\n# edited\n")
    (etc / "gate.key").write_text("k" * 64)
    (etc / "gate.key").chmod(0o644)
    res = install("install-gate.sh", tmp_path)
    assert "keeping existing" in res.stdout
    assert (etc / "gate.toml").read_text().endswith("# edited\n")
    assert mode(etc / "gate.key") == 0o600  # secrets are tightened, never rewritten
    assert (etc / "gate.key").read_text() == "k" * 64

    install("install-office.sh", tmp_path)
    install("install-office.sh", tmp_path)
    assert mode(etc / "central.toml") == 0o640 and mode(etc / "keys") == 0o700
    conf = (tmp_path / "etc/mosquitto/conf.d/portgate.conf").read_text()
    assert conf == (ROOT / "config/mosquitto/mosquitto.conf").read_text()
    for needle in ("persistence true", "allow_anonymous false", "acl_file", "listener 8883"):
        assert needle in conf
    assert mode(tmp_path / "etc/mosquitto/portgate.passwd") == 0o600
    assert mode(tmp_path / "etc/mosquitto/portgate-office.passwd") == 0o600  # the office's listener (8884)
    for unit in ("portgate-central.service", "portgate-central@.service"):
        assert (tmp_path / "etc/systemd/system" / unit).exists()


def test_scripts_parse_and_lint():
    for script in ("install-common.sh", "install-gate.sh", "install-office.sh"):
        res = subprocess.run(["bash", "-n", str(ROOT / "scripts" / script)], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
    if shutil.which("shellcheck"):
        res = subprocess.run(["shellcheck", "-x", "-S", "warning", *(str(ROOT / "scripts" / s) for s in
                              ("install-gate.sh", "install-office.sh"))], capture_output=True, text=True,
                             cwd=ROOT / "scripts")
        assert res.returncode == 0, res.stdout


def test_unknown_argument_is_refused(tmp_path):
    env = {**os.environ, "PORTGATE_ROOT": str(tmp_path), "SKIP_VENV": "1"}
    res = subprocess.run(["bash", str(ROOT / "scripts/install-gate.sh"), "--bogus"], env=env,
                         capture_output=True, text=True)
    assert res.returncode == 2 and "unknown argument" in res.stderr
    assert not (tmp_path / "etc").exists()


def test_run_all_smoke_writes_table(tmp_path):
    import json
    import sys

    out = tmp_path / "latest.md"
    res = subprocess.run([sys.executable, str(ROOT / "bench/run_all.py"), "--smoke", "--only", "escala",
                          "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    last = json.loads(res.stdout.strip().splitlines()[-1])
    assert last["bench"] == "run_all" and last["figures"]["benchmarks"] == 1 and last["figures"]["failed"] == []
    md = out.read_text()
    assert "| escala |" in md and "baseline (same run)" in md and "- machine: " in md
    # every target with its verdict, in the same run (issue 32): escala states its own
    [row] = [line for line in md.splitlines() if line.startswith("| escala |")]
    verdict = row.split("|")[-3].strip()
    assert verdict in ("yes", "**no**")
    assert last["figures"]["targets_not_met"] == ([] if verdict == "yes" else ["escala"])
    assert "Targets met: " in md and " of 1" in md


def test_run_all_reports_a_broken_benchmark():
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_all", ROOT / "bench/run_all.py")
    run_all = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_all)
    assert run_all.last_json('noise\n{"bench": "x", "figures": {"a": 1}}\n') == {"bench": "x", "figures": {"a": 1}}
    assert run_all.last_json("Traceback ...\nValueError: boom\n") is None
    md = run_all.table([{"bench": "x", "error": "no JSON line", "tail": "ValueError: boom", "seconds": 0.5}], True)
    assert "| x | FAILED (no JSON line): ValueError: boom |" in md
    md = run_all.table([{"bench": "a", "figures": {}, "met": True, "seconds": 1.0},
                        {"bench": "b", "figures": {}, "met": False, "seconds": 1.0},
                        {"bench": "c", "figures": {}, "seconds": 1.0}], False)
    assert "| yes | 1.0 |" in md and "| **no** | 1.0 |" in md and "| — | 1.0 |" in md
    assert "Targets met: 1 of 2; not met: b." in md


def test_run_all_runs_the_benchmarks_not_the_profilers():
    """``bench/profile_*.py`` print cProfile tables (no JSON figures): run by hand, never by run_all."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_all", ROOT / "bench/run_all.py")
    run_all = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_all)
    names = {p.stem for p in run_all.discover()}
    assert (ROOT / "bench/profile_ingest.py").exists() and "profile_ingest" not in names
    assert {"ingest", "month_close", "gate_decision", "outbox_drain"} <= names


def test_every_benchmark_run_all_runs_takes_smoke_and_ends_with_its_json_line():
    """run_all runs each discovered bench with ``--smoke`` and reads its last JSON line: a script
    without either belongs under ``profile_*`` (run by hand)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_all", ROOT / "bench/run_all.py")
    run_all = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_all)
    for path in run_all.discover():
        text = path.read_text(encoding="utf-8")
        assert '"--smoke"' in text and '"bench"' in text, path.name


def test_run_all_prints_one_table_with_every_issue_32_target():
    """``bench/run_all.py``'s table has a row per target of issue 32 (month close first/re-close on
    both databases, signed ingest on both, the gate in its CPU quota, the screen's p99, ...), each
    met / not met from the same run's figures, and "not measured" where the run could not."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_all", ROOT / "bench/run_all.py")
    run_all = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_all)
    results = [
        {"bench": "month_close", "seconds": 9.0,
         "figures": {"sqlite_first_close_s": 3.0, "sqlite_close_s": 0.5},
         "baseline": {"sqlite_floor_s": 2.0, "sqlite_read_s": 0.2},
         "ratio": {"sqlite_first_to_floor": 1.5, "sqlite": 2.5}},  # smoke: no PostgreSQL
        {"bench": "ingest", "seconds": 5.0, "figures": {"sqlite_1_worker": 600.0,
                                                        "sqlite_1_worker_unsigned": 1000.0},
         "baseline": {"mosquitto_sub_events_per_s": 9000.0},
         "ratio": {"to_c_client": 0.3, "sqlite_signed_to_unsigned": 0.59}},
        {"bench": "gate_decision", "seconds": 7.0,
         "figures": {"p50_ms": 1.0, "p99_ms": 2.0, "taps_per_s": 100.0, "rss_mb": 30,
                     "cpu_quota": {"measured": True, "cgroup": "cgroup v2 cpu.max", "fraction": 0.25,
                                   "taps_per_s": 25.0, "p99_ms": 60.0, "rss_mb": 40, "start_up_s": 3.0}},
         "baseline": {"p50_ms": 1.0, "p99_ms": 1.0, "commits_per_s": 100.0},
         "ratio": {"p50": 1.0, "p99": 2.0, "sustained": 1.0}},
        {"bench": "gate_display", "seconds": 4.0, "figures": {"p50_ms": 20.0, "p99_ms": 90.0,
                                                              "display_rss_mb": 30.0, "gate_rss_mb": 50.0},
         "baseline": {"commit_p99_ms": 2.0}},
        {"bench": "outbox_drain", "seconds": 3.0, "figures": {"events_per_s": 950.0},
         "baseline": {"bare_paho_events_per_s": 1000.0}, "ratio": 0.95, "met": True},
        {"bench": "escala", "seconds": 1.0, "figures": {}, "target": "dispatch_day_s <= 1.0", "met": True},
    ]
    md = run_all.table(results, False)
    rows = {line.split("|")[2].strip(): line for line in md.splitlines() if line.startswith("| ")}

    def verdict(name):
        return rows[name].split("|")[-3].strip()

    assert verdict("first month close vs its write floor (sqlite)") == "yes"
    assert verdict("month re-close vs reading its events (sqlite)") == "yes"
    assert verdict("first month close vs its write floor (postgresql)") == "not measured"
    assert verdict("signed ingest vs HMAC-only (sqlite)") == "**no**"  # 0.59 < 0.6
    assert verdict("signed ingest vs HMAC-only (postgres)") == "not measured"
    assert verdict("gate in a 0.25-core CPU quota: taps/s") == "yes"
    assert verdict("gate in a 0.25-core CPU quota: read -> shown p99") == "**no**"  # 60 > 50 ms
    assert verdict("screen: gate decided -> page updated p99") == "yes"
    assert verdict("outbox drain vs bare paho") == "yes"
    assert verdict("dispatch_day_s <= 1.0") == "yes"  # a bench with no listed target: its own verdict
    assert "| <= 2x |" in rows["first month close vs its write floor (sqlite)"]
    assert "median of interleaved rounds" in rows["first month close vs its write floor (sqlite)"]
    assert "not met: ingest: signed ingest vs HMAC-only (sqlite), gate_decision: gate in a 0.25-core" in md
    assert "not measured in this run: month_close: first month close vs its write floor (postgresql)" in md
    assert run_all.not_met(results) == ["ingest: signed ingest vs HMAC-only (sqlite)",
                                        "gate_decision: gate in a 0.25-core CPU quota: read -> shown p99"]
    quota_off = dict(results[2], figures={**results[2]["figures"],
                                          "cpu_quota": {"measured": False, "why": "no writable cgroup"}})
    md = run_all.table([quota_off], False)
    assert "not measured: no writable cgroup" in md and "| not measured |" in md
    assert run_all.EXTRA_ARGS["ingest"] == ["--signed"]  # the signed ingest and its HMAC-only twin


def _run_all():
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_all", ROOT / "bench/run_all.py")
    run_all = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_all)
    return run_all


def _rows(md: str) -> dict[str, list[str]]:
    """target -> the row's cells (bench, target, figure, baseline, ratio, wanted, met, time)."""
    return {line.split("|")[2].strip(): [c.strip() for c in line.split("|")[1:-1]]
            for line in md.splitlines() if line.startswith("| ") and not line.startswith("| bench |")}


def test_run_all_judges_the_gate_at_full_speed_against_its_last_run_on_this_machine():
    """DESIGN.md: the gate decision at full speed is "unchanged or better than the last run on the same
    machine": each ratio to the same-run bare commit against the last run's (bench/_lastrun.py),
    "no previous run" the first time, met within the stated tolerance, not met beyond it; the
    ratios to the bare commit are still printed."""
    run_all = _run_all()
    lastrun = run_all._lastrun
    tol = {k: t for k, (_, t) in lastrun.TOLERANCE.items()}
    gate = {"bench": "gate_decision", "seconds": 7.0,
            "figures": {"p50_ms": 0.4, "p99_ms": 1.0, "taps_per_s": 3000.0, "rss_mb": 55},
            "baseline": {"p50_ms": 0.125, "p99_ms": 0.5, "commits_per_s": 10000.0},
            "ratio": {"p50": 3.2, "p99": 2.0, "sustained": 0.3}}
    p50, p99, sus = ("gate read -> shown p50 / bare commit vs the last run on this machine",
                     "gate read -> shown p99 / bare commit vs the last run on this machine",
                     "gate sustained taps/s / bare commits/s vs the last run on this machine")

    md = run_all.table([dict(gate, previous=None)], False)  # the first run here
    rows = _rows(md)
    for name in (p50, p99, sus):
        assert rows[name][6] == "no previous run"
    assert rows[p50][2:5] == ["0.4 ms", "bare commit 0.125 ms", "3.2"]  # the ratio to the bare commit
    assert "Targets met: 1 of 1;" in md  # the RSS alone: the first run is no verdict
    assert "no previous run on this machine" in md and "gate_decision: " + p50 in md
    assert str(lastrun.record_path()) in md

    within = {"at": "2026-12-07T01:00:00+00:00", "commit": "abc1234",
              "ratio": {"p50": 3.2 / (1 + tol["p50"] * 0.9), "p99": 2.0 / (1 + tol["p99"] * 0.9),
                        "sustained": 0.3 * (1 + tol["sustained"] * 0.9)}}
    md = run_all.table([dict(gate, previous=within)], False)
    rows = _rows(md)
    assert [rows[n][6] for n in (p50, p99, sus)] == ["yes", "yes", "yes"]
    assert "last run 2026-12-07T01:00:00+00:00, abc1234" in rows[p50][5] and f"{tol['p50']:.0%}" in rows[p50][5]
    assert "Targets met: 4 of 4;" in md

    worse = {"at": "2026-12-07T01:00:00+00:00", "commit": None,
             "ratio": {"p50": 3.2 / (1 + tol["p50"] * 1.1), "p99": 2.0 / (1 + tol["p99"] * 1.1),
                       "sustained": 0.3 * (1 + tol["sustained"] * 1.1)}}
    md = run_all.table([dict(gate, previous=worse)], False)
    rows = _rows(md)
    assert [rows[n][6] for n in (p50, p99, sus)] == ["**no**", "**no**", "**no**"]
    assert run_all.not_met([dict(gate, previous=worse)]) == [f"gate_decision: {n}" for n in (p50, p99, sus)]
    assert "this run NOT recorded, the reference stays the last run that met it" in md  # bench/_lastrun.judge
    assert "NOT recorded" not in run_all.table([dict(gate, previous=within)], False)
    better = dict(gate, ratio={"p50": 1.0, "p99": 1.0, "sustained": 1.0})  # better than a worse last run
    assert run_all.not_met([dict(better, previous=worse)]) == []


def test_run_all_judges_the_office_ingest_against_bare_paho_and_shows_the_c_client_as_information():
    """DESIGN.md: one-worker ingest >= 1x a bare paho subscriber receiving the same stream, per
    database; the C client's ratio is no longer a target."""
    run_all = _run_all()
    r = {"bench": "ingest", "seconds": 5.0,
         "figures": {"signed": True, "sqlite_1_worker": 1100.0, "postgres_1_worker": 900.0,
                     "sqlite_1_worker_unsigned": 1500.0, "postgres_1_worker_unsigned": 1400.0},
         "baseline": {"bare_paho_events_per_s": 1000.0, "mosquitto_sub_events_per_s": 9000.0},
         "ratio": {"to_c_client": 0.1, "sqlite_to_paho": 1.1, "postgres_to_paho": 0.9,
                   "sqlite_signed_to_unsigned": 0.733, "postgres_signed_to_unsigned": 0.643}}
    rows = _rows(run_all.table([r], False))
    assert rows["ingest, one worker, signed (sqlite) vs a bare paho subscriber"][4:7] == ["1.1", ">= 1x", "yes"]
    assert rows["ingest, one worker, signed (postgres) vs a bare paho subscriber"][4:7] == ["0.9", ">= 1x", "**no**"]
    info = rows["slowest one-worker ingest vs the C client (mosquitto_sub)"]
    assert info[4:7] == ["0.1", "no target", "information"]
    assert run_all.not_met([r]) == ["ingest: ingest, one worker, signed (postgres) vs a bare paho subscriber"]
    old = dict(r, ratio={"to_c_client": 0.1}, figures={"signed": False, "sqlite_1_worker": 2000.0})
    rows = _rows(run_all.table([old], False))  # a JSON line without the per-database ratios
    assert rows["ingest, one worker, HMAC-only (sqlite) vs a bare paho subscriber"][4:7] == ["2", ">= 1x", "yes"]
    assert rows["ingest, one worker, HMAC-only (postgres) vs a bare paho subscriber"][6] == "not measured"


def test_run_all_states_the_office_live_page_target():
    """DESIGN.md: office web pages p95 <= 2x their SQL and event -> browser p95 <= 2 s: two rows."""
    run_all = _run_all()
    r = {"bench": "office_web", "seconds": 60.0, "ratio": 1.5,
         "figures": {"page_p95_ms": 300.0, "live_p95_ms": 2100.0, "live_max_ms": 2500.0},
         "baseline": {"sql_p95_ms": 200.0}}
    rows = _rows(run_all.table([r], False))
    assert rows["office web page p95 vs its SQL alone"][4:7] == ["1.5", "<= 2x", "yes"]
    assert rows["office live page: event -> browser p95"][2:7] == ["p95 2,100 ms, max 2,500 ms", "", "",
                                                                   "<= 2000 ms", "**no**"]


def test_run_all_states_the_lost_card_target_and_its_floor_as_information():
    """The issue's G2 target: a lost card blocked at every gate p95 <= 2 s from the request sent;
    the ratio to the paho floor is information, no verdict."""
    run_all = _run_all()
    r = {"bench": "card_block", "seconds": 40.0, "ratio": {"p50": 600.0, "p95": 50.0},
         "figures": {"from_send_ms": {"p50": 180.0, "p95": 2100.0, "max": 2500.0},
                     "from_answer_ms": {"p50": 150.0, "p95": 280.0, "max": 300.0}},
         "baseline": {"paho_qos1_two_subscribers_ms": {"p50": 0.2, "p95": 5.6, "max": 7.0}}}
    md = run_all.table([r], False)
    rows = _rows(md)
    row = rows["lost card -> blocked at every gate p95 (from the request sent)"]
    assert row[2:7] == ["p95 2,100 ms, p50 180 ms, max 2,500 ms", "paho QoS 1 to two subscribers p95 5.6 ms", "",
                        "<= 2000 ms", "**no**"]
    info = rows["lost card -> every gate p95 (from the answer) vs the paho floor p95"]
    assert info[4:7] == ["50", "no target", "information"]
    assert run_all.not_met([r]) == ["card_block: lost card -> blocked at every gate p95 (from the request sent)"]
    met = dict(r, figures={**r["figures"], "from_send_ms": {"p50": 180.0, "p95": 320.0, "max": 330.0}})
    assert run_all.not_met([met]) == [] and "Targets met: 1 of 1." in run_all.table([met], False)


def test_the_last_run_record_is_per_machine_and_sizes_and_survives_a_broken_file(tmp_path, monkeypatch, capsys):
    """bench/_lastrun.py: the record under $XDG_STATE_HOME, keyed by hostname + CPU model and the
    run's sizes; an unreadable file is "no previous run" (said on stderr) and is replaced."""
    lastrun = _run_all()._lastrun
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    path = lastrun.record_path()
    assert path == tmp_path / "portgate" / "bench" / "last_runs.json"
    assert lastrun.previous("gate_decision", "workers=500") is None
    entry = lastrun.save("gate_decision", "workers=500", {"p50": 3.21234, "p99": 2.0, "sustained": 0.3})
    assert entry["ratio"] == {"p50": 3.2123, "p99": 2.0, "sustained": 0.3} and entry["at"].endswith("+00:00")
    assert lastrun.previous("gate_decision", "workers=500") == entry
    assert lastrun.previous("gate_decision", "workers=50000") is None  # other sizes: their own record
    data = json.loads(path.read_text())
    assert list(data) == [lastrun.machine_key()] and lastrun.cpu_model() in lastrun.machine_key()
    path.write_text("{not json")
    assert lastrun.previous("gate_decision", "workers=500") is None
    assert "unreadable" in capsys.readouterr().err
    lastrun.save("gate_decision", "workers=500", {"p50": 1.0})
    assert lastrun.previous("gate_decision", "workers=500")["ratio"] == {"p50": 1.0}
    assert lastrun.not_worse("p50", 1.0, 1.0) and lastrun.not_worse("sustained", 1.0, 1.0)
    assert not lastrun.not_worse("p50", 2.0, 1.0) and not lastrun.not_worse("sustained", 0.5, 1.0)


def test_run_all_puts_figures_under_figure_and_ratios_under_ratio():
    """An absolute target's figure is in the figure column with its unit, the ratio column holds a
    ratio to the same-run baseline or nothing, the condition (the quota's cgroup) is with the wanted
    limit: the quota rows had the cgroup under "figure" and the figure under "ratio", the screen's
    row a p99 in ms under "ratio"."""
    run_all = _run_all()
    gate = {"bench": "gate_decision", "seconds": 7.0, "previous": None,
            "figures": {"p50_ms": 1.0, "p99_ms": 2.0, "taps_per_s": 100.0, "rss_mb": 30,
                        "cpu_quota": {"measured": True, "cgroup": "cgroup v1 cpu.cfs_quota_us: 0.25 of one core, "
                                      "period 10 ms", "fraction": 0.25, "taps_per_s": 25.0, "p99_ms": 60.0,
                                      "rss_mb": 40, "start_up_s": 3.0}},
            "baseline": {"p50_ms": 1.0, "p99_ms": 1.0, "commits_per_s": 100.0},
            "ratio": {"p50": 1.0, "p99": 2.0, "sustained": 1.0}}
    screen = {"bench": "gate_display", "seconds": 4.0, "ratio": {"p99": 45.0},
              "figures": {"p50_ms": 20.0, "p99_ms": 90.0, "display_rss_mb": 30.0, "gate_rss_mb": 50.0},
              "baseline": {"commit_p99_ms": 2.0}}
    rows = _rows(run_all.table([gate, screen], False))
    cgroup = "inside cgroup v1 cpu.cfs_quota_us: 0.25 of one core, period 10 ms"
    assert rows["gate in a 0.25-core CPU quota: taps/s"][2:7] == ["25 taps/s", "", "", f">= 20 taps/s ({cgroup})", "yes"]
    assert rows["gate in a 0.25-core CPU quota: read -> shown p99"][2:7] == ["60 ms", "", "", f"<= 50 ms ({cgroup})",
                                                                              "**no**"]
    assert rows["gate peak RSS"][2:7] == ["30 MB", "", "", "<= 60 MB", "yes"]
    assert rows["screen: gate decided -> page updated p99"][2:7] == [
        "p99 90 ms, p50 20 ms", "bare commit p99 2 ms", "45", "<= 150 ms", "yes"]
    assert rows["screen: display peak RSS"][2:7] == ["30 MB", "", "", "<= 40 MB", "yes"]
    off = dict(gate, figures={**gate["figures"], "cpu_quota": {"measured": False, "why": "the kernel refused x"}})
    row = _rows(run_all.table([off], False))["gate in a 0.25-core CPU quota: start-up"]
    assert row[2:7] == ["", "", "", "<= 10 s (not measured: the kernel refused x)", "not measured"]


def test_the_last_run_reference_is_kept_per_sizes_and_options(tmp_path, monkeypatch):
    """bench/_lastrun.py ``reference_key``/``judge``: a run with another seed or another filesystem
    (--dir) is never the reference of a default run, nor the other way; a default run keeps the key
    of the records made before the options were part of it; the lines printed name the reference."""
    lastrun = _run_all()._lastrun
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    sizes = "workers=500 events=2000"
    default = lastrun.reference_key(sizes, {"seed": None, "fs": None})
    seeded = lastrun.reference_key(sizes, {"seed": 2, "fs": None})
    assert default == sizes and seeded == sizes + " seed=2"
    assert lastrun.reference_key(sizes, {"seed": None, "fs": "tmpfs"}) == sizes + " fs=tmpfs"
    assert lastrun.judge("gate_decision", default, {"p50": 1.0})[:2] == (None, {})
    before, verdict, lines = lastrun.judge("gate_decision", seeded, {"p50": 9.0})
    assert before is None and verdict == {} and f"at {seeded}: none" in lines[0]
    before, verdict, lines = lastrun.judge("gate_decision", default, {"p50": 1.05})
    assert before["ratio"] == {"p50": 1.0} and verdict == {"p50": True}
    assert lines[0].startswith(f"reference: the last run on this machine at {default} (")
    assert lastrun.fs_type(tmp_path) != "unknown"


def test_a_run_that_did_not_meet_its_comparison_never_becomes_the_reference(tmp_path, monkeypatch):
    """bench/_lastrun.py ``judge``: a run worse than its reference beyond the tolerance is reported
    NOT met and is NOT recorded (said in its lines), so the same regression run again is judged
    against the same good run and is "not met" again (it passed on its second run: every run
    replaced the record); a run that met it is recorded; other sizes (a smoke run) have their own key."""
    lastrun = _run_all()._lastrun
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    full, smoke = "workers=50000 events=1000000", "workers=500 events=2000"
    good = {"p50": 2.0, "p99": 2.0, "sustained": 0.5}
    bad = {"p50": 4.0, "p99": 2.0, "sustained": 0.5}  # p50 twice the reference's: beyond its 15 %
    assert lastrun.judge("gate_decision", full, good)[0] is None  # the first run: recorded
    for _ in range(2):
        before, verdict, lines = lastrun.judge("gate_decision", full, bad)
        assert before["ratio"] == good and verdict["p50"] is False
        assert lines[-1].startswith("this run NOT recorded (it did not meet its comparison): the reference "
                                    f"stays the run of {before['at']}")
        assert lastrun.previous("gate_decision", full)["ratio"] == good
    assert lastrun.judge("gate_decision", smoke, bad)[0] is None  # a smoke run: its own key, full's kept
    assert lastrun.previous("gate_decision", full)["ratio"] == good
    better = {"p50": 2.1, "p99": 2.5, "sustained": 0.45}  # within each tolerance: met, recorded
    before, verdict, lines = lastrun.judge("gate_decision", full, better)
    assert all(verdict.values()) and lines[-1].startswith("this run recorded as the next run's reference")
    assert lastrun.previous("gate_decision", full)["ratio"] == better
