"""CPU per event of the ingest writer's side, signed (issue 20) against HMAC-only, same run, no MQTT.

``bench/profile_ingest_cpu.py`` reads the CPU of every process of the MQTT ingest; on this shared
2-core machine its figures still move by ±30 % between rounds (the broker, paho and the start of
the writer and its helper weigh in). This times only what differs between a signed and an
HMAC-only event: the writer process's work per batch (``Verifier.submit`` as its reader thread
does it, ``Verifier.verdicts``, ``LedgerWriter.process``: check, insert, links, progress,
receipts, commit), its signature helper and, with ``--postgres``, the server's processes. Batches
of ``--batch`` events (500) from one gate, ``Verifier.submit`` of batch k+1 before batch k is
processed (as the reader thread runs ahead), N signed and N HMAC-only events alternating for R
rounds; each process's CPU from ``/proc`` (10 ms ticks) and this process's from
``time.process_time``; the helper's start is left out. Prints the µs/event by process and the
ratio unsigned/signed of the medians.

    .venv/bin/python bench/profile_writer_cpu.py [--events N] [--rounds R] [--batch B] [--postgres] [--only KIND]

``--root DIR``: run another tree's code (e.g. a worktree of the commit before a change) with this
same script and interpreter.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _tree(root: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            with contextlib.suppress(OSError):
                ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def _sum(pids: list[int]) -> float:
    total = 0.0
    for p in pids:
        with contextlib.suppress(OSError):
            total += _cpu(p)
    return total


def main() -> None:
    from _cli import count, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=count, default=20000)
    ap.add_argument("--rounds", type=count, default=3)
    ap.add_argument("--batch", type=count, default=500)
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--only", choices=("signed", "unsigned"), help="one kind (to run under a profiler)")
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    args = ap.parse_args()
    sys.path.insert(0, args.root)
    import bench.ingest as bi
    from central.config import CentralConfig, IngestSettings
    from central.db import load_all_tables, make_engine
    from central.ingest.keys import KeyRing, add_gate, register_public_key
    from central.ingest.verify import Verifier
    from central.ingest.writer import LedgerWriter
    from portgate.config import read_secret
    from portgate.gctune import tune_for_service
    from wire import topics
    from wire.chain import new_private_key, public_pem

    tune_for_service()
    n, size = args.events, args.batch
    res: dict[str, list[tuple[float, dict]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        keys = tmp / "keys"
        signer = new_private_key()
        data = {"signed": [(topics.gate_events(bi.PORT, "g1"), p)
                           for p in bi.payloads(n, read_secret(add_gate(keys, "g1")), signer)],
                "unsigned": [(topics.gate_events(bi.PORT, "g2"), p)
                             for p in bi.payloads(n, read_secret(add_gate(keys, "g2")), None, "g2")]}
        register_public_key(keys, "g1", public_pem(signer.public_key()))
        if args.postgres:
            from testkit.postgres import PostgresCluster
            cluster = PostgresCluster()
        else:
            cluster = contextlib.nullcontext(None)
        with cluster as pg:
            server = int((pg.datadir / "postmaster.pid").read_text().split()[0]) if pg is not None else None
            k = 0
            for _r in range(args.rounds):
                for kind in (args.only,) if args.only else ("unsigned", "signed"):
                    k += 1
                    url = pg.create_database(f"w{k}") if pg is not None else f"sqlite:///{tmp / f'w{k}.db'}"
                    engine = make_engine(url)
                    load_all_tables().create_all(engine)
                    cfg = CentralConfig(database_url=url, port=bi.PORT, keys_dir=str(keys),
                                        ingest=IngestSettings(relay_presence=False))
                    ring = KeyRing(keys)
                    verifier = Verifier(ring, bi.PORT, 1).start()
                    writer = LedgerWriter(cfg, engine, ring)
                    time.sleep(1.0)  # the helper's imports done: not counted
                    helpers = [h.proc.pid for h in verifier._helpers]
                    batches = [data[kind][i:i + size] for i in range(0, n, size)]
                    others = _tree(server) if server is not None else []
                    h0, s0, w0 = _sum(helpers), _sum(others), time.process_time()
                    pending = verifier.submit(batches[0])
                    for b, items in enumerate(batches):
                        nxt = verifier.submit(batches[b + 1]) if b + 1 < len(batches) else None
                        got = verifier.verdicts(pending)
                        if isinstance(got, tuple):  # (verified, decoded)
                            writer.process(b, items, *got)
                        else:  # a tree whose verdicts are the verified list alone
                            writer.process(b, items, got)
                        pending = nxt
                    w1, h1, s1 = time.process_time(), _sum(helpers), _sum(others)
                    verifier.close()
                    engine.dispose()
                    by = {"writer": (w1 - w0) / n * 1e6, "helper": (h1 - h0) / n * 1e6}
                    if server is not None:
                        by["postgres"] = (s1 - s0) / n * 1e6
                    res.setdefault(kind, []).append((sum(by.values()), by))
    db = "PostgreSQL" if args.postgres else "SQLite"
    for kind, runs in res.items():
        print(f"{db} {kind}: CPU {[round(r[0], 1) for r in runs]} us/event; by process, medians: "
              + ", ".join(f"{p} {statistics.median(r[1][p] for r in runs):.1f}" for p in runs[0][1]))
    if args.only:
        return
    cu = statistics.median(r[0] for r in res["unsigned"])
    cs = statistics.median(r[0] for r in res["signed"])
    print(f"{db}: writer-side CPU per event unsigned / signed = {cu:.1f} / {cs:.1f} us = {cu / cs:.3f} "
          f"(signed extra {cs - cu:.1f} us)")


if __name__ == "__main__":
    main()
