"""Run every benchmark in ``bench/`` with one command and write a Markdown table.

    .venv/bin/python bench/run_all.py [--smoke] [--only NAME ...] [--out bench/results/latest.md]

Each ``bench/<name>.py`` (every ``.py`` here except this file, ``_*.py`` and the profilers
``profile_*.py``, which print cProfile tables, not figures, and are run by hand) is run as a separate
process (``--smoke`` passed through) and must print, as its last line, one JSON object
``{"bench", "figures", "baseline", "ratio", "target", "met"}`` (BRIEF.md). The table has one row per
benchmark: its figures, the baseline measured in the same run, the ratio, the target, whether the
benchmark found its target met in that run, the time it took, and ``FAILED`` with the last lines of its output if it crashed or printed no JSON line. The
machine (CPU model, cores, Python, kernel) is written above the table, so figures are never quoted
without the machine they came from. Exit status: 1 if any benchmark failed, else 0; 2 for a
``--out`` that cannot take the table (a directory, a parent that does not exist: never made), said
in one line before anything runs; 130/143 when run_all is stopped by SIGINT/SIGTERM: the running
benchmark is stopped with its process group (``stop_group``, as on ``--timeout``) and marked
``INTERRUPTED``, and the table of what finished is printed and written all the same.

The targets are DESIGN.md's "Performance targets" as they stand (``TARGETS``). Two are not a fixed
ratio: the gate decision at full speed is "unchanged or better than the last run on the same
machine": its ratios to the same-run bare commit (p50, p99, sustained) are judged against the last
run's, recorded by ``bench/gate_decision.py`` in ``$XDG_STATE_HOME/portgate/bench/last_runs.json``
(``bench/_lastrun.py``: keyed by hostname, CPU model, sizes and the options that change the ratios;
its ``TOLERANCE`` per ratio), and
say "no previous run" the first time; the office ingest is judged against a bare paho subscriber
(>= 1x, per database), the C client's figure shown as information.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _lastrun  # noqa: E402  (bench/_lastrun.py: the last run on this machine, its tolerance)
from _cli import SMOKE_CAVEAT  # noqa: E402  (bench/_cli.py: the words a single bench says too)


def discover(only: list[str] | None = None) -> list[Path]:
    """The benchmark scripts, sorted by name; ``only`` restricts to those names (without .py)."""
    found = sorted(p for p in HERE.glob("*.py")
                   if p.name != "run_all.py" and not p.name.startswith(("_", "profile_")))
    if only:
        missing = set(only) - {p.stem for p in found}
        if missing:
            raise SystemExit(f"run_all: no such benchmark: {', '.join(sorted(missing))}")
        found = [p for p in found if p.stem in only]
    return found


def last_json(text: str) -> dict | None:
    """The last line of ``text`` that is a JSON object with a ``bench`` key, or None."""
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                return None
            return obj if isinstance(obj, dict) and "bench" in obj else None
    return None


def stop_group(proc: subprocess.Popen, grace: float = 60.0) -> tuple[str, str]:
    """End a benchmark started in its own session (``start_new_session``) and everything it started
    there: SIGTERM to the benchmark (``bench/_cli.exit_on_signals``: its clean-up stops the
    components it started, even those in sessions of their own such as ``pg_ctl``'s postmaster, and
    removes its temporary directories), up to ``grace`` seconds for it to end (its output read
    meanwhile, so that it never blocks on a full pipe; its end seen at once even while a child of
    its group holds the pipe), then SIGTERM to its process group and, after
    up to 10 s, SIGKILL to what is left of it. Returns the output read (stdout, stderr)."""
    out = err = None
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while proc.poll() is None and time.monotonic() < deadline:  # not communicate(grace): a child
        try:                                                     # holding the pipe would hold it
            out, err = proc.communicate(timeout=0.5)
        except subprocess.TimeoutExpired:
            pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)  # the session leader's pid is its group's id
        except ProcessLookupError:
            break  # nobody left in the group
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (proc.poll() is None or _group_alive(proc.pid)):
            time.sleep(0.1)
    if out is None:
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    return out or "", err or ""


def _group_alive(pgid: int) -> bool:
    """Some process of group ``pgid`` still exists (the benchmark itself reaped by ``poll``)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: run_all's exit status when stopped by a signal (``_cli.exit_on_signals``) -> the signal's name.
STOP_CODES = {128 + signal.SIGINT: "SIGINT", 128 + signal.SIGTERM: "SIGTERM"}


def run_one(script: Path, smoke: bool, timeout: float, grace: float = 60.0) -> dict:
    """Run one benchmark in its own session; return its JSON result plus ``seconds`` (or ``error``
    and ``tail``). On ``timeout``, or when run_all itself is stopped (SIGTERM/SIGINT), the benchmark
    and its process group are ended by ``stop_group`` before this returns: a stop returns the
    benchmark marked ``interrupted`` (run_all's exit status, 130 or 143), so the table of what
    finished is still written; any other exception is re-raised."""
    cmd = [sys.executable, str(script), *(["--smoke"] if smoke else []), *EXTRA_ARGS.get(script.stem, [])]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=HERE.parent,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        out, err = stop_group(proc, grace)
        code, err = -1, f"timeout after {timeout:g} s: stopped with its process group. {err}"
    except SystemExit as exc:  # run_all stopped (SIGTERM, SIGINT: _cli.exit_on_signals): its components too
        out, err = stop_group(proc, grace)
        if exc.code not in STOP_CODES:
            raise
        tail = "\n".join((out + "\n" + err).strip().splitlines()[-5:])
        return {"bench": script.stem, "error": f"interrupted by {STOP_CODES[exc.code]}: stopped with its process group",
                "tail": tail, "seconds": time.monotonic() - t0, "interrupted": exc.code}
    except BaseException:
        stop_group(proc, grace)
        raise
    seconds = time.monotonic() - t0
    result = last_json(out)
    if code != 0 or result is None:
        tail = "\n".join((out + "\n" + (err or "")).strip().splitlines()[-5:])
        return {"bench": script.stem, "error": f"exit {code}" if result is not None or code else "no JSON line",
                "tail": tail, "seconds": seconds}
    result["seconds"] = seconds
    return result


def _fmt(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, dict):
        return "<br>".join(f"{k}: {_fmt(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}")


#: Extra arguments per benchmark (``ingest --signed``: the signed ingest against its HMAC-only twin
#: on both databases, issue 32 item 5; ``month_close --rounds 3``: three interleaved first-close /
#: floor rounds per database instead of five, as the quiet-machine figures in docs/performance.md:
#: five took 1,139 s of the 1,800 s timeout at load 6-12, each round a fresh 5,000-worker close and
#: its floor on both databases).
EXTRA_ARGS = {"ingest": ["--signed"], "month_close": ["--rounds", "3"]}


def _verdict(value, op: str, limit: float) -> bool | None:
    """``value op limit`` (``op``: "<=" or ">="); None when ``value`` was not measured."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return value <= limit if op == "<=" else value >= limit


def _row(target: str, figure: str, baseline: str, ratio, op: str, limit: float) -> dict:
    """One ratio target's row: ``ratio`` (to the same-run baseline) against ``op limit`` x; ``met``
    None when not measured in this run."""
    return {"target": target, "figure": figure, "baseline": baseline, "ratio": ratio,
            "wanted": f"{op} {limit:g}x", "met": _verdict(ratio, op, limit)}


def _abs_row(target: str, value, unit: str, op: str, limit: float, *, label: str = "", more: str = "",
             baseline: str = "", ratio=None, condition: str = "") -> dict:
    """One absolute target's row: the figure ``value`` (in ``unit``) against ``op limit unit``. The
    figure column holds it (``label`` before it, ``more`` after: other percentiles), the ratio
    column the ratio to the same-run baseline where the benchmark gives one (else empty), the
    wanted column the limit and the ``condition`` it holds under (the CPU quota's cgroup)."""
    shown = f"{label} {_fmt(value)} {unit}".strip() if value is not None else ""
    return {"target": target, "figure": shown + (f", {more}" if more and shown else ""), "baseline": baseline,
            "ratio": ratio, "wanted": f"{op} {limit:g} {unit}" + (f" ({condition})" if condition else ""),
            "met": _verdict(value, op, limit)}


def _g(d, *keys):
    """``d[k1][k2]...`` or None where a key is missing (a figure this run did not measure)."""
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def _month_close(r: dict) -> list[dict]:
    rows = []
    for db, method in (("sqlite", "executemany"), ("postgresql", "copy")):
        rows.append(_row(f"first month close vs its write floor ({db})",
                         f"{_fmt(_g(r, 'figures', f'{db}_first_close_s'))} s",
                         f"{method} of the same rows {_fmt(_g(r, 'baseline', f'{db}_floor_s'))} s "
                         f"(median of interleaved rounds)", _g(r, "ratio", f"{db}_first_to_floor"), "<=", 2))
        rows.append(_row(f"month re-close vs reading its events ({db})",
                         f"{_fmt(_g(r, 'figures', f'{db}_close_s'))} s",
                         f"read {_fmt(_g(r, 'baseline', f'{db}_read_s'))} s", _g(r, "ratio", db), "<=", 5))
    return rows


def _ingest(r: dict) -> list[dict]:
    """DESIGN.md: the office ingest (one worker, broker -> ledger committed, dedupe on) >= 1x a bare
    paho subscriber receiving the same stream, per database; the signed ingest >= 0.6x the HMAC-only
    one. ``run_all`` runs ``ingest --signed``: the one-worker ingest and the paho subscriber both take
    the signed stream. The C client (``mosquitto_sub``, the broker's delivery ceiling) is shown as
    information: no target names it."""
    rows, kind = [], "signed" if _g(r, "figures", "signed") else "HMAC-only"
    paho = _g(r, "baseline", "bare_paho_events_per_s")
    for db in ("sqlite", "postgres"):
        rate = _g(r, "figures", f"{db}_1_worker")
        ratio = _g(r, "ratio", f"{db}_to_paho")
        if ratio is None and isinstance(rate, (int, float)) and isinstance(paho, (int, float)) and paho:
            ratio = round(rate / paho, 3)  # a JSON line from before the per-database ratios
        rows.append(_row(f"ingest, one worker, {kind} ({db}) vs a bare paho subscriber", f"{_fmt(rate)} ev/s",
                         f"bare paho {_fmt(paho)} ev/s (same stream)", ratio, ">=", 1))
    for db in ("sqlite", "postgres"):
        rows.append(_row(f"signed ingest vs HMAC-only ({db})",
                         f"{_fmt(_g(r, 'figures', f'{db}_1_worker'))} ev/s",
                         f"HMAC-only {_fmt(_g(r, 'figures', f'{db}_1_worker_unsigned'))} ev/s",
                         _g(r, "ratio", f"{db}_signed_to_unsigned"), ">=", 0.6))
    rows.append({"target": "slowest one-worker ingest vs the C client (mosquitto_sub)", "figure": "",
                 "baseline": f"mosquitto_sub {_fmt(_g(r, 'baseline', 'mosquitto_sub_events_per_s'))} ev/s",
                 "ratio": _g(r, "ratio", "to_c_client"), "wanted": "no target", "met": None,
                 "note": "information"})
    return rows


#: The end of a last-run target's label (``_vs_last``).
LAST_RUN = " vs the last run on this machine"


def _vs_last(name: str, label: str, figure: str, baseline: str, r: dict) -> dict:
    """A ratio to the same-run bare commit, judged against the last run on this machine
    (``r["previous"]``, ``bench/_lastrun.py``): met when not worse beyond ``_lastrun.TOLERANCE``;
    "no previous run" (no verdict) on the first run here at these sizes."""
    now, prev = _g(r, "ratio", name), r.get("previous")
    before = _g(prev, "ratio", name)
    lower, tol = _lastrun.TOLERANCE[name]
    row = {"target": f"{label}{LAST_RUN}", "figure": figure, "baseline": baseline,
           "ratio": now, "met": None}
    if not isinstance(before, (int, float)) or isinstance(before, bool):
        row.update(wanted=f"{'<=' if lower else '>='} the last run's, {tol:.0%} tolerance",
                   note="no previous run" if isinstance(now, (int, float)) else None)
        return row
    row["wanted"] = (f"{'<=' if lower else '>='} {_fmt(before)}x (last run {prev.get('at')}, "
                     f"{prev.get('commit') or 'no commit'}) " + (f"+ {tol:.0%}" if lower else
                                                                f"/ {1 + tol:g} ({tol:.0%} slower)"))
    if isinstance(now, (int, float)) and not isinstance(now, bool):
        row["met"] = _lastrun.not_worse(name, now, before)
    return row


def _gate_decision(r: dict) -> list[dict]:
    f, b, q = r.get("figures", {}), r.get("baseline", {}), _g(r, "figures", "cpu_quota") or {}
    rows = [_vs_last("p50", "gate read -> shown p50 / bare commit", f"{_fmt(f.get('p50_ms'))} ms",
                     f"bare commit {_fmt(b.get('p50_ms'))} ms", r),
            _vs_last("p99", "gate read -> shown p99 / bare commit", f"{_fmt(f.get('p99_ms'))} ms",
                     f"bare commit {_fmt(b.get('p99_ms'))} ms", r),
            _vs_last("sustained", "gate sustained taps/s / bare commits/s", f"{_fmt(f.get('taps_per_s'))} taps/s",
                     f"bare {_fmt(b.get('commits_per_s'))} commits/s", r),
            _abs_row("gate peak RSS", f.get("rss_mb"), "MB", "<=", 60)]
    where = ("inside " + q["cgroup"]) if q.get("cgroup") else f"not measured: {q.get('why', 'no quota run')}"
    for name, key, op, limit, unit in (("taps/s", "taps_per_s", ">=", 20, "taps/s"),
                                       ("read -> shown p99", "p99_ms", "<=", 50, "ms"),
                                       ("peak RSS", "rss_mb", "<=", 60, "MB"),
                                       ("start-up", "start_up_s", "<=", 10, "s")):
        rows.append(_abs_row(f"gate in a {q.get('fraction', 0.25):g}-core CPU quota: {name}",
                             q.get(key) if q.get("measured") else None, unit, op, limit, condition=where))
    return rows


def _simple(target: str, figure, baseline, op: str, limit: float):
    """A benchmark with one ratio: ``figure``/``baseline``: (label, path in the JSON, unit)."""
    def rows(r: dict) -> list[dict]:
        return [_row(target, f"{figure[0]} {_fmt(_g(r, *figure[1]))} {figure[2]}".strip(),
                     f"{baseline[0]} {_fmt(_g(r, *baseline[1]))} {baseline[2]}".strip(),
                     r.get("ratio") if not isinstance(r.get("ratio"), dict) else None, op, limit)]
    return rows


def _gate_display(r: dict) -> list[dict]:
    f = r.get("figures", {})
    return [_abs_row("screen: gate decided -> page updated p99", f.get("p99_ms"), "ms", "<=", 150, label="p99",
                     more=f"p50 {_fmt(f.get('p50_ms'))} ms",
                     baseline=f"bare commit p99 {_fmt(_g(r, 'baseline', 'commit_p99_ms'))} ms",
                     ratio=_g(r, "ratio", "p99")),
            _abs_row("screen: display peak RSS", f.get("display_rss_mb"), "MB", "<=", 40),
            _abs_row("screen: gate peak RSS with the display", f.get("gate_rss_mb"), "MB", "<=", 60)]


def _office_web(r: dict) -> list[dict]:
    """DESIGN.md: office web pages p95 <= 2x their SQL alone; event -> browser p95 <= 2 s."""
    page = _simple("office web page p95 vs its SQL alone", ("", ("figures", "page_p95_ms"), "ms"),
                   ("SQL", ("baseline", "sql_p95_ms"), "ms"), "<=", 2)(r)
    return page + [_abs_row("office live page: event -> browser p95", _g(r, "figures", "live_p95_ms"), "ms", "<=",
                            2000, label="p95", more=f"max {_fmt(_g(r, 'figures', 'live_max_ms'))} ms")]


def _card_block(r: dict) -> list[dict]:
    """The issue's G2 target: a card reported lost at the office is blocked at every running gate
    within 2 s (p95 from the request's sending); its ratio to a bare paho QoS-1 message to two
    subscribers through the same broker, as information (no target names it)."""
    floor = _g(r, "baseline", "paho_qos1_two_subscribers_ms") or {}
    return [_abs_row("lost card -> blocked at every gate p95 (from the request sent)",
                     _g(r, "figures", "from_send_ms", "p95"), "ms", "<=", 2000, label="p95",
                     more=f"p50 {_fmt(_g(r, 'figures', 'from_send_ms', 'p50'))} ms, "
                          f"max {_fmt(_g(r, 'figures', 'from_send_ms', 'max'))} ms",
                     baseline=f"paho QoS 1 to two subscribers p95 {_fmt(floor.get('p95'))} ms"),
            {"target": "lost card -> every gate p95 (from the answer) vs the paho floor p95",
             "figure": f"{_fmt(_g(r, 'figures', 'from_answer_ms', 'p95'))} ms",
             "baseline": f"paho floor p95 {_fmt(floor.get('p95'))} ms", "ratio": _g(r, "ratio", "p95"),
             "wanted": "no target", "met": None, "note": "information"}]


def _chain(r: dict) -> list[dict]:
    rate = _g(r, "figures", "ingest_events_per_s") or {}
    return [_row("signed ingest, office ledger side vs HMAC-only (SQLite)", f"{_fmt(rate.get('verified'))} ev/s",
                 f"HMAC-only {_fmt(rate.get('unverified'))} ev/s",
                 r.get("ratio") if not isinstance(r.get("ratio"), dict) else None, ">=", 0.6),
            _abs_row("signed tap at the gate: added p50 over HMAC-only", _g(r, "figures", "added_p50_ms"), "ms",
                     "<=", 0.3)]


#: The targets of DESIGN.md's "Performance targets" as they stand (and issue 32's, issue 37's
#: cluster, issue 20's signed tap, issue 34's lost card at every gate), each a row of the table, from the benchmark's JSON line; a
#: benchmark not named here gets one row from its own ``met``.
TARGETS = {
    "outbox_drain": _simple("outbox drain vs bare paho", ("", ("figures", "events_per_s"), "ev/s"),
                            ("bare paho", ("baseline", "bare_paho_events_per_s"), "ev/s"), ">=", 0.9),
    "payslips": _simple("payslips (PDF) vs computing the statements", ("", ("figures", "pdf_s"), "s"),
                        ("compute", ("baseline", "compute_s"), "s"), "<=", 5),
    "pay_month": _simple("pay alone vs reading the shifts", ("", ("figures", "sqlite_pay_s"), "s"),
                         ("read", ("baseline", "sqlite_read_s"), "s"), "<=", 2),
    "production_pay": _simple("production pay vs reading its input", ("", ("figures", "pay_s"), "s"),
                              ("read", ("baseline", "read_s"), "s"), "<=", 3),
    "crew_hours": _simple("crew book vs reading its CSV", ("", ("figures", "book_s"), "s"),
                          ("CSV read", ("baseline", "csv_read_s"), "s"), "<=", 5),
    "office_web": _office_web,
    "card_block": _card_block,
    "gate_display": _gate_display,
    "chain": _chain,
    "month_close": _month_close,
    "ingest": _ingest,
    "gate_decision": _gate_decision,
    "cluster": _simple("cluster ingest vs mosquitto", ("", ("figures", "cluster_events_per_s"), "ev/s"),
                       ("mosquitto", ("baseline", "mosquitto_events_per_s"), "ev/s"), ">=", 0.5),
}


def target_rows(result: dict) -> list[dict]:
    """The table's rows of one benchmark's result: its targets (``TARGETS``), or one row with its
    own figures and verdict; a failed benchmark: one FAILED row."""
    if "error" in result:
        word = "INTERRUPTED" if result.get("interrupted") else "FAILED"
        return [{"target": f"{word} ({_fmt(result['error'])}): {_fmt(result['tail'])}", "figure": "",
                 "baseline": "", "ratio": None, "wanted": "", "met": None, "failed": True}]
    spec = TARGETS.get(result["bench"])
    if spec is not None:
        return spec(result)
    met = result.get("met")
    return [{"target": _fmt(result.get("target", "")), "figure": _fmt(result.get("figures", "")),
             "baseline": _fmt(result.get("baseline", "")), "ratio": result.get("ratio"), "wanted": "",
             "met": met if isinstance(met, bool) else None, "own": True}]


def table(results: list[dict], smoke: bool, stopped: str = "") -> str:
    """The Markdown report: the machine, then ONE table with a row per target (``target_rows``),
    each with its figure, the baseline measured in the same run, the ratio, what is wanted and
    whether it was met ("not measured" where this run could not: no cgroup, PostgreSQL skipped at
    smoke sizes; "no previous run" for a last-run target the first time on this machine;
    "information" for a figure with no target), then the count of targets met; ``stopped``: what
    stopped the run early (a signal), said in the title and the foot."""
    head = [f"# Benchmarks ({'smoke sizes' if smoke else 'full run'}{', ' + stopped if stopped else ''})", "",
            f"- run: {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}",
            f"- machine: {machine()}",
            f"- load average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}", "",
            "| bench | target | figure | baseline (same run) | ratio | wanted | met | time (s) |",
            "|---|---|---|---|---|---|---|---|"]
    rows, verdicts, missed, unmeasured, first = [], 0, [], [], []
    for r in results:
        for i, row in enumerate(target_rows(r)):
            label = r["bench"] if row.get("own") or row.get("failed") else f"{r['bench']}: {row['target']}"
            if isinstance(row["met"], bool):
                verdicts += 1
                if not row["met"]:
                    missed.append(label)
            elif row.get("note") == "no previous run":
                first.append(label)
            elif not (row.get("own") or row.get("failed") or row.get("note")):
                unmeasured.append(label)
            word = (met_word(row) if row.get("own") or row.get("failed") or row["met"] is not None
                    else row.get("note") or "not measured")
            rows.append(f"| {r['bench']} | {row['target']} | {row['figure']} | {row['baseline']} | "
                        f"{_fmt(row['ratio']) if row['ratio'] is not None else ''} | {row['wanted']} | {word} | "
                        f"{r['seconds']:.1f} |" if i == 0 else
                        f"| {r['bench']} | {row['target']} | {row['figure']} | {row['baseline']} | "
                        f"{_fmt(row['ratio']) if row['ratio'] is not None else ''} | {row['wanted']} | {word} | |")
    foot = ["", f"Targets met: {verdicts - len(missed)} of {verdicts}"
            + (f"; not met: {', '.join(missed)}" if missed else "")
            + (f"; not measured in this run: {', '.join(unmeasured)}" if unmeasured else "")
            + (f"; no previous run on this machine (this run recorded for the next, {_lastrun.record_path()}): "
               f"{', '.join(first)}" if first else "")
            + ("; a last-run comparison not met: this run NOT recorded, the reference stays the last run "
               "that met it" if any(m.endswith(LAST_RUN) for m in missed) else "")
            + (SMOKE_CAVEAT if smoke else "") + "."] + ([f"Run {stopped}: the benchmarks after it did not run."]
                                                       if stopped else [])
    return "\n".join(head + rows + foot) + "\n"


def not_met(results: list[dict]) -> list[str]:
    """The labels of the targets not met (``bench`` or ``bench: target``), as the table's foot."""
    out = []
    for r in results:
        for row in target_rows(r):
            if row["met"] is False:
                out.append(r["bench"] if row.get("own") else f"{r['bench']}: {row['target']}")
    return out


def met_word(result: dict) -> str:
    """``yes``/``**no**`` from a verdict measured in the same run; ``—`` without one."""
    met = result.get("met")
    return "yes" if met is True else "**no**" if met is False else "—"


def out_refusal(out: Path) -> str | None:
    """Why ``--out`` cannot take the table, or None: a directory, a parent that does not exist (never
    made: a typo would make a tree), is not a directory or cannot be written. Checked before any
    benchmark runs (a directory there lost the whole table to a traceback at the end)."""
    parent = out.parent
    if out.is_dir():
        return f"{out} is a directory: give a file name (such as {out / 'latest.md'})"
    if not parent.exists():
        return f"the directory {parent} does not exist (it is not made): make it, or give another path"
    if not parent.is_dir():
        return f"{parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK) or (out.exists() and not os.access(out, os.W_OK)):
        return f"{out} cannot be written (permissions)"
    return None


def run_benches(scripts: list[Path], smoke: bool, timeout: float) -> tuple[list[dict], int | None]:
    """Run ``scripts`` in turn; returns the results and, when run_all was stopped by SIGINT/SIGTERM
    (``_cli.exit_on_signals``: 130/143), that status (the interrupted benchmark's result marked
    ``interrupted``, those after it not run), else None."""
    results = []
    try:
        for script in scripts:
            print(f"run_all: {script.stem} ...", file=sys.stderr, flush=True)
            results.append(run_one(script, smoke, timeout))
            if results[-1].get("interrupted"):
                return results, results[-1]["interrupted"]
    except SystemExit as exc:  # between two benchmarks: none running
        if exc.code not in STOP_CODES:
            raise
        return results, exc.code
    return results, None


def main(argv: list[str] | None = None) -> int:
    from _cli import description, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the running bench stopped with its group, the table of what finished
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI)")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="run only these benchmarks (names without .py)")
    ap.add_argument("--out", default=None, help="Markdown output file (its directory must exist; default "
                                                "bench/results/latest.md)")
    ap.add_argument("--timeout", type=float, default=1800.0,
                    help="seconds per benchmark; then it is stopped with its components (SIGTERM, then SIGKILL)")
    args = ap.parse_args(argv)
    if not args.timeout > 0:  # also NaN
        ap.error(f"--timeout must be more than 0 seconds, got {args.timeout}")
    out = Path(args.out) if args.out else HERE / "results" / "latest.md"
    if args.out is None:
        out.parent.mkdir(parents=True, exist_ok=True)  # the default's own directory (git-ignored)
    refused = out_refusal(out)
    if refused:
        print(f"{Path(sys.argv[0]).name}: error: argument --out: {refused}", file=sys.stderr)
        return 2
    results, stopped = run_benches(discover(args.only), args.smoke, args.timeout)
    md = table(results, args.smoke, f"stopped by {STOP_CODES[stopped]}" if stopped else "")
    print(md)  # first: a --out that fails at the write (a full disk, /dev/full) loses nothing printed
    unwritten = write_out(out, md)
    failed = [r["bench"] for r in results if "error" in r]
    missed = not_met(results)
    print(json.dumps({"bench": "run_all", "figures": {"benchmarks": len(results), "failed": failed,
                                                      "targets_not_met": missed},
                      "baseline": {}, "ratio": None, "target": "all benchmarks print their JSON line",
                      **({"stopped": STOP_CODES[stopped]} if stopped else {})}))
    return stopped or (2 if unwritten else 1 if failed else 0)


def write_out(out: Path, md: str) -> bool:
    """Write the table to ``out``; True (and one line on stderr) when it could not be written: the
    table is on stdout already, the run is not lost (exit 2)."""
    try:
        out.write_text(md)
    except OSError as exc:
        print(f"{Path(sys.argv[0]).name}: error: argument --out: {out}: {exc.strerror or exc} (the table is "
              f"printed above, not written)", file=sys.stderr)
        return True
    return False


if __name__ == "__main__":
    sys.exit(main())
