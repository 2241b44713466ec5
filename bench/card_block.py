"""Benchmark: a card reported lost by the office clerk -> refused at every running gate (G2; the
issue's target: blocked at every gate within 2 s, the far gate through the registry downlink).

The real port of the browser tests (``tests/central/web/port.py``'s ``Port``): a private mosquitto,
``portgate central run`` publishing the registry's changes as deltas (``[publish] source =
"registry"``, ``poll_s`` the shipped default 1.0 s, ``--poll-s`` to change it), two ``portgate edge run`` gates (g-a, g-b) and ``portgate office
serve`` over one SQLite ledger. A clerk (role ``office``) logs in over HTTP (httpx, the login form
and its CSRF token) and reports the card lost as the worker's page does: ``POST
/workers/<reg>/cards/<uid>/lost`` with the page's ``csrf_token``. Each round takes a fresh card:
after the measurement the clerk replaces the lost card by a new one (``.../replace``), and the
next round starts once the new card is active at both gates (not timed).

Per round, on ``time.perf_counter``:

- ``from_send_ms``: the request's sending -> the card's status ``lost`` in every gate's store
  (``state/store.db``, table ``cards``, read as the browser tests read it, polled every 5 ms);
- ``from_answer_ms``: the request's answer (the 303) -> the same; ``per_gate_from_answer_ms``
  gate by gate;
- ``request_ms``: the request alone.

Baseline, same run, same broker, interleaved with the rounds (``--floor`` samples after each):
paho's own client publishing one QoS-1 message that two paho subscribers (QoS 1) receive;
publish -> received by both. The floor of any downlink through this mosquitto.

Printed: p50 / p95 / max of each, the ratios (p50 to p50, p95 to p95, from the answer) and the
absolute target (``from_send_ms`` p95 <= 2000 ms) met or not. ``--rounds`` (default 20, a p95 of
20 is the second largest); ``--smoke``: 3 rounds, 5 floor samples each. Last line: one JSON
object ``{"bench", "figures", "baseline", "ratio", "target", "met"}`` (``bench/run_all.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import paho.mqtt.client as paho  # noqa: E402
from paho.mqtt.enums import CallbackAPIVersion  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from central.db import make_engine  # noqa: E402
from central.web.users import add_user  # noqa: E402
from tests.central.web.port import UIDS, Port, wait_until  # noqa: E402

TARGET_MS = 2000.0  # G2 through the downlink: blocked at every gate within 2 s
CLERK, CLERK_PASSWORD = "escritorio", "office clerk password"
WORKER = "V009"  # not dispatched: no tap of the port's own touches his cards
POLL_S = 0.005
WAIT_S = 60.0
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def card_status(gate, uid: str) -> str | None:
    """The card's status in ``gate``'s store (``cards.status``), None when the gate has no such card."""
    path = gate.dir / "state" / "store.db"
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        row = db.execute("SELECT status FROM cards WHERE uid = ?", (uid,)).fetchone()
    return row[0] if row else None


def blocked_at(gates: list, uid: str) -> dict[str, float]:
    """``{gate_id: perf_counter}`` of the first poll (every 5 ms) that read ``uid`` lost at each
    gate; ``TimeoutError`` after 60 s."""
    seen: dict[str, float] = {}
    deadline = time.perf_counter() + WAIT_S
    while True:
        for gate in gates:
            if gate.gate_id not in seen and card_status(gate, uid) == "lost":
                seen[gate.gate_id] = time.perf_counter()
        if len(seen) == len(gates):
            return seen
        if time.perf_counter() > deadline:
            raise TimeoutError(f"card {uid} not lost at {sorted(set(g.gate_id for g in gates) - set(seen))} "
                               f"after {WAIT_S:g} s")
        time.sleep(POLL_S)


def clerk_client(url: str) -> httpx.Client:
    """An httpx client logged in as the clerk (the login form with its CSRF token)."""
    client = httpx.Client(base_url=url, follow_redirects=False, timeout=WAIT_S)
    token = CSRF.search(client.get("/login").text).group(1)
    r = client.post("/login", data={"login": CLERK, "password": CLERK_PASSWORD, "csrf_token": token, "next": "/"})
    if r.status_code != 303:
        raise RuntimeError(f"clerk login: HTTP {r.status_code}")
    return client


def page_token(client: httpx.Client, uid: str) -> str:
    """The worker page's CSRF token; the page must list ``uid``."""
    r = client.get(f"/workers/{WORKER}")
    if r.status_code != 200 or f'data-uid="{uid}"' not in r.text:
        raise RuntimeError(f"worker page: HTTP {r.status_code}, card {uid} listed: {uid in r.text}")
    return CSRF.search(r.text).group(1)


def one_round(port: Port, client: httpx.Client, uid: str) -> dict:
    """Report ``uid`` lost over HTTP; the times (ms) to ``lost`` at every gate."""
    token = page_token(client, uid)
    gates = list(port.gates.values())
    sent = time.perf_counter()
    r = client.post(f"/workers/{WORKER}/cards/{uid}/lost", data={"csrf_token": token})
    answered = time.perf_counter()
    if r.status_code != 303 or f"card=lost-{uid}" not in r.headers.get("location", ""):
        raise RuntimeError(f"card lost: HTTP {r.status_code} {r.headers.get('location')}")
    seen = blocked_at(gates, uid)
    last = max(seen.values())
    return {"from_send_ms": (last - sent) * 1000, "from_answer_ms": (last - answered) * 1000,
            "request_ms": (answered - sent) * 1000,
            "per_gate": {g: (t - answered) * 1000 for g, t in seen.items()}}


def restore(port: Port, client: httpx.Client, uid: str, new_uid: str) -> None:
    """Replace the lost ``uid`` by ``new_uid``; return once it is active at every gate (untimed)."""
    r = client.post(f"/workers/{WORKER}/cards/{uid}/replace",
                    data={"csrf_token": page_token(client, uid), "new_uid": new_uid, "uid_form": "hex"})
    if r.status_code != 303:
        raise RuntimeError(f"card replace: HTTP {r.status_code}")
    for gate in port.gates.values():
        wait_until(lambda g=gate: card_status(g, new_uid) == "active", WAIT_S, what=f"{new_uid} at {gate.gate_id}")


class Floor:
    """paho's own client publishing QoS-1 messages to two paho subscribers through ``port``'s
    broker: ``sample()`` is one message's publish -> received by both, in ms."""

    TOPIC = "bench/card_block/floor"

    def __init__(self, broker_port: int) -> None:
        self.got: dict[int, list[float]] = {}
        self.cond = threading.Condition()
        self.clients = [self._client(f"floor-sub-{i}", broker_port, sub=True) for i in range(2)]
        self.pub = self._client("floor-pub", broker_port, sub=False)
        self.n = 0

    def _client(self, client_id: str, broker_port: int, *, sub: bool) -> paho.Client:
        c = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id)
        subscribed = threading.Event()
        if sub:
            c.on_connect = lambda cl, *a: cl.subscribe(self.TOPIC, 1)
            c.on_subscribe = lambda *a: subscribed.set()
            c.on_message = self._on_message
        c.connect("127.0.0.1", broker_port)
        c.loop_start()
        if sub and not subscribed.wait(WAIT_S):
            raise TimeoutError(f"{client_id}: no SUBACK in {WAIT_S:g} s")
        return c

    def _on_message(self, _client, _userdata, msg) -> None:
        at = time.perf_counter()
        with self.cond:
            self.got.setdefault(int(msg.payload), []).append(at)
            self.cond.notify_all()

    def sample(self) -> float:
        self.n += 1
        n = self.n
        t = time.perf_counter()
        self.pub.publish(self.TOPIC, str(n).encode(), qos=1)
        with self.cond:
            if not self.cond.wait_for(lambda: len(self.got.get(n, ())) == 2, WAIT_S):
                raise TimeoutError(f"floor message {n}: not at both subscribers in {WAIT_S:g} s")
            return (max(self.got.pop(n)) - t) * 1000

    def close(self) -> None:
        for c in (*self.clients, self.pub):
            c.loop_stop()
            c.disconnect()


def p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]


def stats(values: list[float]) -> dict:
    """``{p50, p95, max}`` in ms, 1 decimal (3 under 10 ms)."""
    ordered = sorted(values)
    p50 = ordered[(len(ordered) - 1) // 2] if len(ordered) % 2 else (ordered[len(ordered) // 2 - 1]
                                                                      + ordered[len(ordered) // 2]) / 2
    return {k: round(v, 3 if v < 10 else 1) for k, v in (("p50", p50), ("p95", p95(values)), ("max", ordered[-1]))}


def start_port(root: Path, poll_s: float = 1.0) -> Port:
    """``Port`` started, with the clerk (role ``office``) in its ledger; ``poll_s``: the office's
    ``[publish] poll_s`` in seconds (the shipped default 1.0; the browser tests' port uses 0.2)."""
    port = Port(root, publish_poll_s=poll_s)
    try:
        port.start()
        engine = make_engine(port.url_db)
        with Session(engine) as s, s.begin():
            add_user(s, CLERK, role="office", password=CLERK_PASSWORD, name="Escritório", actor="bench")
        engine.dispose()
    except BaseException:
        port.stop()
        raise
    return port


def measure(port: Port, rounds: int, floor_n: int) -> tuple[list[dict], list[float]]:
    """``rounds`` lost-card rounds, each a fresh card, ``floor_n`` floor samples after each."""
    out, floor_ms = [], []
    uid = UIDS[WORKER][0]
    for gate in port.gates.values():
        wait_until(lambda g=gate: card_status(g, uid) == "active", WAIT_S, what=f"{uid} at {gate.gate_id}")
    floor = Floor(port.broker.port)
    try:
        with contextlib.closing(clerk_client(port.url)) as client:
            for i in range(rounds):
                r = one_round(port, client, uid)
                out.append(r)
                print(f"round {i + 1:3d}: {uid} lost at every gate {r['from_answer_ms']:7.1f} ms after the answer, "
                      f"{r['from_send_ms']:7.1f} ms after the sending (request {r['request_ms']:.1f} ms; "
                      + ", ".join(f"{g} {ms:.1f}" for g, ms in sorted(r["per_gate"].items())) + ")", flush=True)
                floor_ms += [floor.sample() for _ in range(floor_n)]
                if i + 1 < rounds:
                    new_uid = f"CB{i + 1:08d}"
                    restore(port, client, uid, new_uid)
                    uid = new_uid
    finally:
        floor.close()
    return out, floor_ms


def report(rounds: list[dict], floor_ms: list[float], load: dict, poll_s: float, caveat: str = "") -> dict:
    """Print the figures beside the floor; the JSON object of the run."""
    send = stats([r["from_send_ms"] for r in rounds])
    answer = stats([r["from_answer_ms"] for r in rounds])
    request = stats([r["request_ms"] for r in rounds])
    gates = {g: stats([r["per_gate"][g] for r in rounds]) for g in sorted(rounds[0]["per_gate"])}
    base = stats(floor_ms)
    ratio = {k: round(answer[k] / base[k], 1) if base[k] else None for k in ("p50", "p95")}
    met = send["p95"] <= TARGET_MS
    for label, s in (("lost -> every gate, from the sending", send), ("lost -> every gate, from the answer", answer),
                     *((f"lost -> {g}, from the answer", s) for g, s in gates.items()),
                     ("the request alone", request), ("floor: paho QoS 1 -> 2 subscribers", base)):
        print(f"{label:40s} p50 {s['p50']:8.2f} ms   p95 {s['p95']:8.2f} ms   max {s['max']:8.2f} ms")
    print(f"ratio to the floor (from the answer): p50 {ratio['p50']}x, p95 {ratio['p95']}x")
    print(f"target: blocked at every gate p95 <= {TARGET_MS:g} ms from the sending: "
          f"{'met' if met else 'not met'} ({send['p95']:.1f} ms){caveat}")
    print(f"the office's [publish] poll_s: {poll_s:g} s")
    print(f"load average (1, 5, 15 min): start {load['start']}, end {load['end']}")
    return {"bench": "card_block",
            "figures": {"rounds": len(rounds), "publish_poll_s": poll_s,
                        "from_send_ms": send, "from_answer_ms": answer,
                        "per_gate_from_answer_ms": gates, "request_ms": request, "load_average": load},
            "baseline": {"paho_qos1_two_subscribers_ms": base, "samples": len(floor_ms)},
            "ratio": ratio, "target": f"lost card blocked at every gate p95 <= {TARGET_MS:g} ms from the sending (G2)",
            "met": met}


def main(argv: list[str] | None = None) -> int:
    from _cli import count, description, exit_on_signals, smoke_caveat  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--smoke", action="store_true", help="3 rounds, 5 floor samples each (CI)")
    ap.add_argument("--rounds", type=count, help="lost cards to measure (default 20; --smoke: 3)")
    ap.add_argument("--floor", type=count, help="floor samples after each round (default 10; --smoke: 5)")
    ap.add_argument("--poll-s", type=float, default=1.0,
                    help="the office's [publish] poll_s, seconds (default 1.0, the shipped default)")
    args = ap.parse_args(argv)
    rounds = args.rounds if args.rounds is not None else (3 if args.smoke else 20)
    floor_n = args.floor if args.floor is not None else (5 if args.smoke else 10)
    if rounds < 1 or floor_n < 1:
        ap.error("--rounds and --floor must be at least 1")
    if not 0.05 <= args.poll_s <= 10:
        ap.error("--poll-s must be between 0.05 and 10 seconds")
    root = Path(tempfile.mkdtemp(prefix="bench-card-block-"))
    load = {"start": [round(x, 2) for x in os.getloadavg()]}
    try:
        port = start_port(root, args.poll_s)
        try:
            measured, floor_ms = measure(port, rounds, floor_n)
        finally:
            port.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    load["end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report(measured, floor_ms, load, args.poll_s, smoke_caveat(args.smoke or rounds < 20))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
