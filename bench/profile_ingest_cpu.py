"""CPU per event of the whole MQTT ingest, signed (issue 20) against HMAC-only, same run.

On this shared 2-core machine the wall-clock rates of ``bench/ingest.py`` swing by tens of percent
between rounds; the CPU the ingest's processes spend per event moves much less. This runs
``bench/ingest.py``'s one-worker ingest (``ingest``) of N signed and N HMAC-only events, alternating
for R rounds, and reads from ``/proc`` (every 20 ms, 10 ms ticks) the CPU of this process (the
worker's paho session), its descendants (the writer, its signature helper, mosquitto) and, with
PostgreSQL, the server's processes, from the end of the publish to the last commit. Prints per
kind the CPU µs/event per round and by process, and the ratio unsigned/signed of the medians (the
bench's target 0.8 read as CPU). The start of the writer and its helper (~0.1-0.3 s of CPU, in both
kinds) is included: use 6,000 events or more. Linux only; run by hand (not by ``bench/run_all.py``).

    .venv/bin/python bench/profile_ingest_cpu.py [--events N] [--rounds R] [--postgres] [--verify-processes N]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TICK = os.sysconf("SC_CLK_TCK")


def _scan() -> dict[int, tuple[int, str, float]]:
    """pid -> (parent pid, name, user + system CPU seconds) of every process."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        end = stat.rfind(")")
        fields = stat[end + 2:].split()
        out[int(d)] = (int(fields[1]), stat[stat.find("(") + 1:end], (int(fields[11]) + int(fields[12])) / TICK)
    return out


def _role(pid: int, name: str) -> str:
    if pid == os.getpid():
        return "bench+worker"
    if not name.startswith("python"):
        return name
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "python"
    return "helper" if b"central.ingest.verify" in cmd else "writer"


class Poller:
    """Keeps the last CPU figure seen of every process descending from ``roots`` (a process that
    ends keeps its last figure)."""

    def __init__(self, roots: list[int]) -> None:
        self.roots = set(roots)
        self.seen: dict[int, tuple[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.snap()

    def snap(self) -> dict[int, tuple[str, float]]:
        procs = _scan()
        mine, grew = set(self.roots), True
        while grew:
            grew = False
            for pid, (ppid, _name, _cpu) in procs.items():
                if pid not in mine and ppid in mine:
                    mine.add(pid)
                    grew = True
        for pid in mine & procs.keys():
            held = self.seen.get(pid)  # (a fresh child shows its parent's command line until it execs)
            role = held[0] if held and held[0] == "helper" else _role(pid, procs[pid][1])
            self.seen[pid] = (role, procs[pid][2])
        return dict(self.seen)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _delta(a: dict, b: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for pid, (role, cpu) in b.items():
        out[role] = out.get(role, 0.0) + cpu - (a[pid][1] if pid in a else 0.0)
    return out


def main() -> None:
    from _cli import count, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=count, default=6000)
    ap.add_argument("--rounds", type=count, default=2)
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--verify-processes", type=count, default=1)
    args = ap.parse_args()
    import bench.ingest as bi
    from app.demo.mosquitto import Mosquitto
    from central.ingest.keys import add_gate, register_public_key
    from portgate.config import read_secret
    from portgate.gctune import tune_for_service
    from wire.chain import new_private_key, public_pem

    tune_for_service()
    n = args.events
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        keys = tmp / "keys"
        signer = new_private_key()
        signed = bi.payloads(n, read_secret(add_gate(keys, "g1")), signer)
        register_public_key(keys, "g1", public_pem(signer.public_key()))
        plain = bi.payloads(n, read_secret(add_gate(keys, "g2")), None, "g2")
        broker = Mosquitto(tmp / "broker").start()
        if args.postgres:
            from testkit.postgres import PostgresCluster
            cluster = PostgresCluster()
        else:
            cluster = contextlib.nullcontext(None)
        res: dict[str, list[tuple[float, float, dict]]] = {}
        try:
            with cluster as pg:
                roots = [os.getpid()]
                if pg is not None:
                    roots.append(int((pg.datadir / "postmaster.pid").read_text().split()[0]))
                poll = Poller(roots)
                published = {}
                publish = bi.publish_all

                def publish_then_mark(broker, data):
                    publish(broker, data)
                    published["at"] = poll.snap()  # the ingest starts now

                bi.publish_all = publish_then_mark
                k = 0
                for _r in range(args.rounds):
                    for kind, data in (("unsigned", plain), ("signed", signed)):
                        k += 1
                        url = pg.create_database(f"d{k}") if pg is not None else f"sqlite:///{tmp / f'd{k}.db'}"
                        rate = bi.ingest(broker, data, url, keys, 1, f"cpu{k}", args.verify_processes)
                        time.sleep(0.1)
                        cpu = _delta(published["at"], poll.snap())
                        res.setdefault(kind, []).append((sum(cpu.values()) / n * 1e6, rate, cpu))
                poll.stop()
        finally:
            broker.stop()
    db = "PostgreSQL" if args.postgres else "SQLite"
    for kind, runs in res.items():
        by = {role: round(s / n * 1e6, 1) for role, s in runs[-1][2].items() if s > 0}
        print(f"{db} {kind}: CPU {[round(r[0], 1) for r in runs]} us/event, {[round(r[1]) for r in runs]} "
              f"events/s; last round by process (us/event): {by}")
    cu = statistics.median(r[0] for r in res["unsigned"])
    cs = statistics.median(r[0] for r in res["signed"])
    print(f"{db}: CPU per event unsigned / signed = {cu:.1f} / {cs:.1f} us = {cu / cs:.3f} (target >= 0.8)")


if __name__ == "__main__":
    main()
