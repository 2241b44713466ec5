"""Benchmark: the signed chain's cost (issue 20), each figure beside its same-run baseline.

1. Per tap at the gate: ``Journal.append`` of a signed journal (Ed25519 + ``prev`` hash + HMAC)
   vs an HMAC-only journal vs a bare SQLite ``synchronous=FULL`` commit of one row, interleaved
   (one of each in turn, same directory). Target: signed minus HMAC-only p50 <= 0.3 ms.
2. Office ledger side of the ingest: ``ledger.check`` + ``write_batch`` + ``chain.record`` of the
   same number of events in batches of 500 into SQLite, from a gate with a registered public key
   (signature and links verified: ``batch_verdicts``, the writer's own chain-covered verification,
   one Ed25519 check per batch's run) vs the same events' HMAC-only twins; alternating rounds,
   medians. Target: verified >= 0.8 x unverified events/s. (The MQTT leg, bench/ingest.py, is the
   same for both and only makes the ratio closer to 1.)

    .venv/bin/python bench/chain.py [--smoke] [--taps N] [--events N] [--rounds R]

Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from central.db import make_engine  # noqa: E402
from central.ingest import chain as chain_check  # noqa: E402
from central.ingest.keys import KeyRing, add_gate, register_public_key  # noqa: E402
from central.ingest.event_store import Accepted, DeadLetter, batch_verdicts, check, write_batch  # noqa: E402
from central.ledger.migrate import upgrade  # noqa: E402
from edge.journal import Journal  # noqa: E402
from edge.rules.model import Now  # noqa: E402
from portgate.config import read_secret  # noqa: E402
from wire import chain, topics  # noqa: E402
from wire.events import TapPayload, encode  # noqa: E402

PORT = "bench"
T0 = dt.datetime(2026, 3, 15, 4, 20, tzinfo=dt.UTC)


def tap(i: int) -> TapPayload:
    return TapPayload(uid=f"0A{i:08X}", reader_id="r1", reader_kind="control", decision="admit",
                      registration=f"W{i:06d}", message="Entrada liberada")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def taps(tmp: Path, n: int) -> dict:
    key = b"k" * 32
    plain = Journal(tmp / "plain.db", port=PORT, gate_id="g1", key=key, boot_id="b")
    signed = Journal(tmp / "signed.db", port=PORT, gate_id="g2", key=key, boot_id="b",
                     signer=chain.new_private_key())
    bare = sqlite3.connect(tmp / "bare.db", isolation_level=None)
    bare.execute("PRAGMA journal_mode=WAL")
    bare.execute("PRAGMA synchronous=FULL")
    bare.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, body BLOB)")
    body = encode(plain.append(tap(0), now=Now(T0, 0, True)))
    times: dict[str, list[float]] = {"bare": [], "hmac": [], "signed": []}
    for i in range(1, n + 1):
        now = Now(T0 + dt.timedelta(seconds=i), i, True)
        t = time.perf_counter()
        bare.execute("INSERT INTO t (seq, body) VALUES (?, ?)", (i, body))
        times["bare"].append(time.perf_counter() - t)
        t = time.perf_counter()
        plain.append(tap(i), now=now)
        times["hmac"].append(time.perf_counter() - t)
        t = time.perf_counter()
        signed.append(tap(i), now=now)
        times["signed"].append(time.perf_counter() - t)
    plain.close(), signed.close(), bare.close()
    # the sign + chain step alone (no disk): what the signature adds to building an event
    ev = Journal(tmp / "x.db", port=PORT, gate_id="g3", key=key, boot_id="b").append(tap(1), now=Now(T0, 0, True))
    k = chain.new_private_key()
    t = time.perf_counter()
    for _ in range(n):
        chain.seal(ev, k, key)
    seal_us = (time.perf_counter() - t) / n * 1e6
    ms = {name: {"p50": round(pct(v, 0.5) * 1e3, 3), "p99": round(pct(v, 0.99) * 1e3, 3)} for name, v in times.items()}
    return {"taps": n, "ms": ms, "added_p50_ms": round(ms["signed"]["p50"] - ms["hmac"]["p50"], 3),
            "seal_us": round(seal_us, 1)}


def events_of(tmp: Path, n: int):
    keys = tmp / "keys"
    hkey = read_secret(add_gate(keys, "gs"))
    read_secret(add_gate(keys, "gh"))
    hkey_h = read_secret(keys / "gh.key")
    signer = chain.new_private_key()
    register_public_key(keys, "gs", chain.public_pem(signer.public_key()))
    js = Journal(tmp / "s.db", port=PORT, gate_id="gs", key=hkey, boot_id="b", signer=signer)
    jh = Journal(tmp / "h.db", port=PORT, gate_id="gh", key=hkey_h, boot_id="b")
    now = Now(T0, 0, True)
    for i in range(0, n, 1000):
        js.append_many([tap(j) for j in range(i, min(n, i + 1000))], now=now)
        jh.append_many([tap(j) for j in range(i, min(n, i + 1000))], now=now)
    out = {g: [(topics.gate_events(PORT, g), encode(e)) for e in j.events_between(1, n)]
           for g, j in (("gs", js), ("gh", jh))}
    js.close(), jh.close()
    return KeyRing(keys, recheck_s=3600), out


def ingest(ring, data, url: str) -> float:
    upgrade(url)
    engine = make_engine(url)
    t = time.perf_counter()
    for i in range(0, len(data), 500):
        part, memo = data[i:i + 500], {}
        pre, decoded = batch_verdicts(part, PORT, ring, memo)  # what the writer does without a helper
        verdicts = [check(topic, raw, PORT, ring, v, memo, e) for (topic, raw), v, e in zip(part, pre, decoded)]
        ok = [v for v in verdicts if isinstance(v, Accepted)]
        bad = [v for v in verdicts if isinstance(v, DeadLetter)]
        if bad:
            raise SystemExit(f"chain bench: dead letter {bad[0].reason}")
        with engine.begin() as conn:
            inserted = write_batch(conn, ok, bad, T0)
            chain_check.record(conn, inserted, bad, T0, ok)
    elapsed = time.perf_counter() - t
    engine.dispose()
    return len(data) / elapsed


def main() -> None:
    from _cli import count, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--taps", type=count, default=2000)
    ap.add_argument("--events", type=count, default=20_000)
    ap.add_argument("--rounds", type=count, default=3)
    args = ap.parse_args()
    n_taps, n_events = (200, 1000) if args.smoke else (args.taps, args.events)
    rounds = 1 if args.smoke else max(1, args.rounds)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tap_fig = taps(tmp, n_taps)
        ring, data = events_of(tmp, n_events)
        rates: dict[str, list[float]] = {"verified": [], "unverified": []}
        for r in range(rounds):
            rates["unverified"].append(ingest(ring, data["gh"], f"sqlite:///{tmp / f'u{r}.db'}"))
            rates["verified"].append(ingest(ring, data["gs"], f"sqlite:///{tmp / f'v{r}.db'}"))
    med = {k: round(statistics.median(v), 1) for k, v in rates.items()}
    ms = tap_fig["ms"]
    print(f"tap: bare commit p50 {ms['bare']['p50']} ms, HMAC journal p50 {ms['hmac']['p50']} ms, signed "
          f"journal p50 {ms['signed']['p50']} ms: added {tap_fig['added_p50_ms']} ms (target <= 0.3); "
          f"seal alone {tap_fig['seal_us']} us")
    print(f"ingest (ledger side, SQLite): unverified {med['unverified']:,.0f} ev/s, verified "
          f"{med['verified']:,.0f} ev/s, ratio {med['verified'] / med['unverified']:.2f} (target >= 0.6)")
    print(json.dumps({"bench": "chain", "figures": {**tap_fig, "ingest_events": n_events, "rounds": rounds,
                                                    "ingest_events_per_s": med},
                      "ratio": round(med["verified"] / med["unverified"], 3), "target": 0.6,
                      "met": med["verified"] / med["unverified"] >= 0.6}))


if __name__ == "__main__":
    main()
