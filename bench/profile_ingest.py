"""Where one ingest worker's CPU goes (issue 23): cProfile of paho's network thread (the worker)
and of the ledger writer, timed by each thread's own CPU clock (``time.thread_time``), while one
worker drains N queued events (bench/ingest.py's method) into SQLite.

``--writer process`` (the default, as ``portgate central run``): the worker's paho thread is
profiled here and the writer child process profiles its main thread (its entry is wrapped for
this run only: ``central.ingest.link`` starts ``profiled_writer_process``). ``--writer thread``:
both in this process.

    .venv/bin/python bench/profile_ingest.py [--events N] [--signed] [--top K]
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import pstats
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import paho.mqtt.client as paho  # noqa: E402

from bench.ingest import PORT, forget_sessions, payloads, publish_all  # noqa: E402
from central.config import CentralConfig, IngestSettings  # noqa: E402
from central.db import load_all_tables, make_engine  # noqa: E402
from central.ingest import link  # noqa: E402
from central.ingest.keys import add_gate, register_public_key  # noqa: E402
from portgate.config import read_secret  # noqa: E402
from portgate.gctune import tune_for_service  # noqa: E402
from app.demo.mosquitto import Mosquitto  # noqa: E402
from wire.chain import new_private_key, public_pem  # noqa: E402
from wire.connection import MqttConfig  # noqa: E402

PROFILES: list[tuple[str, cProfile.Profile]] = []


def _profiled(name: str, target):
    def run(*args, **kwargs):
        prof = cProfile.Profile(time.thread_time)
        PROFILES.append((f"{name} {threading.current_thread().name}", prof))
        prof.enable()
        try:
            return target(*args, **kwargs)
        finally:
            prof.disable()
    return run


def profiled_writer_process(conn, config, index, worker_pid, out):
    """The writer child's entry under cProfile (its main thread: checks, SQL, replies)."""
    from central.ingest import writer_process

    prof = cProfile.Profile(time.thread_time)
    prof.enable()
    try:
        writer_process.run_process(conn, config, index, worker_pid)
    finally:
        prof.disable()
        prof.dump_stats(out)


def top(prof_or_file, k: int) -> str:
    buf = io.StringIO()
    stats = pstats.Stats(prof_or_file, stream=buf)
    stats.sort_stats("tottime").print_stats(k)
    stats.sort_stats("cumtime").print_stats(k)
    return "\n".join(line for line in buf.getvalue().splitlines()
                     if line.strip() and not line.lstrip().startswith(("Ordered", "List reduced", "ncalls"))
                     and "function calls" not in line and ".prof" not in line)


def main() -> None:
    from central.ingest.service import Ingest  # not at the top: bench/ingest.py's docstring

    from _cli import count, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=count, default=20_000)
    ap.add_argument("--signed", action="store_true")
    ap.add_argument("--writer", choices=["process", "thread"], default="process")
    ap.add_argument("--verify-processes", type=count, default=1)
    ap.add_argument("--top", type=count, default=15)
    args = ap.parse_args()
    tune_for_service()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        keys = tmp / "keys"
        key = read_secret(add_gate(keys, "g1"))
        signer = None
        if args.signed:
            signer = new_private_key()
            register_public_key(keys, "g1", public_pem(signer.public_key()))
        data = payloads(args.events, key, signer)
        broker = Mosquitto(tmp / "broker").start()
        writer_file = str(tmp / "writer.prof")
        try:
            url = f"sqlite:///{tmp / 'p.db'}"
            engine = make_engine(url)
            load_all_tables().create_all(engine)
            cfg = CentralConfig(database_url=url, port=PORT, keys_dir=str(keys), workers=1,
                                mqtt=MqttConfig(host=broker.host, port=broker.port, client_id="prof"),
                                ingest=IngestSettings(share_group="prof", relay_presence=False, writer=args.writer,
                                                      verify_processes=args.verify_processes))
            first = Ingest(cfg, engine=engine).start()
            first.wait_connected()
            time.sleep(0.5)
            first.stop()
            publish_all(broker, data)
            paho.Client._thread_main = _profiled("worker (paho network thread)", paho.Client._thread_main)
            if args.writer == "thread":
                link.WriterThread._run = _profiled("writer (thread)", link.WriterThread._run)
            else:
                real = link.writer_process.run_process
                link.writer_process.run_process = functools.partial(profiled_writer_process, out=writer_file)
            again = Ingest(cfg, engine=engine)
            t = time.perf_counter()
            again.start()
            while sum(w.stats["inserted"] for w in again.workers) < len(data):
                time.sleep(0.005)
            elapsed = time.perf_counter() - t
            again.stop()
            if args.writer == "process":
                link.writer_process.run_process = real
            forget_sessions(broker, ["prof-0", "prof-0-writer"])
            engine.dispose()
        finally:
            broker.kill()
        print(f"{len(data):,} events in {elapsed:.2f} s: {len(data) / elapsed:,.0f} events/s "
              f"({'signed' if args.signed else 'HMAC only'}, writer {args.writer})")
        workers = [p for n, p in PROFILES if n.endswith("paho-mqtt-client-prof-0")]
        if workers:  # the drain's session (the others: the set-up and clean-up sessions of the same id)
            prof = max(workers, key=lambda p: pstats.Stats(p).total_tt)
            total = pstats.Stats(prof).total_tt
            print(f"\n== worker (paho network thread): {total:.2f} s CPU, {total / len(data) * 1e6:.1f} us/event")
            print(top(prof, args.top))
        if args.writer == "thread":
            prof = next((p for n, p in PROFILES if n.startswith("writer (thread)")), None)
        else:
            prof = writer_file if Path(writer_file).exists() else None
        if prof is not None:
            total = pstats.Stats(prof).total_tt
            print(f"\n== writer ({args.writer}): {total:.2f} s CPU, {total / len(data) * 1e6:.1f} us/event")
            print(top(prof, args.top))


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    main()
