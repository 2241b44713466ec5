"""Reader benchmarks: EM4100 parser throughput, pty-to-CardRead latency, PC/SC read cycle.

Each figure is printed next to a baseline measured in the same run:
- parser: frames/s through ``FrameParser`` vs a bare ``re.finditer`` scan of the same bytes;
- serial latency: last frame byte written on the pty -> ``CardRead`` out of the driver (one frame
  per card, confirmation off), vs the
  same bytes arriving in a bare pyserial read loop on the same kind of pty;
- confirm-by-repeat: a card held in front of an EM4100 reader (frames every 65 ms): last byte of
  the first frame -> ``CardRead`` with the default ``confirm_ms`` (150: the read waits for the first
  repeat), vs the bare read of the same held card with confirmation off, interleaved in one run;
- PC/SC: one read cycle (connect, GET DATA, disconnect) through ``drivers.pcsc.read_card`` via
  pcscd + vpcd + the virtual card, vs a bare pyscard connect/transmit/disconnect loop.
Last line: one JSON object; ``ratio`` is PC/SC driver cycle / bare cycle (target <= 1.5).

Usage: ``.venv/bin/python bench/readers.py [--smoke]``
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from drivers.em4100 import Frame, FrameParser, encode_frame  # noqa: E402
from app.demo.pcsc import PcscDaemon  # noqa: E402
from app.demo.pty_reader import PtyReader  # noqa: E402
from app.demo.vicc import VirtualCard  # noqa: E402

VALID = re.compile(rb"\x02([0-9A-Fa-f]{12})[\r\n]{0,2}\x03")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def bench_parser(n: int) -> tuple[float, float]:
    data = b"".join(encode_frame(f"{i % 0xFFFFFFFF + 1:010X}") for i in range(n))
    chunks = [data[i : i + 64] for i in range(0, len(data), 64)]
    t0 = time.perf_counter()
    parser = FrameParser()
    count = sum(1 for c in chunks for item in parser.feed(c) if isinstance(item, Frame))
    parser_s = time.perf_counter() - t0
    assert count == n
    t0 = time.perf_counter()
    bare = sum(1 for _ in VALID.finditer(data))
    bare_s = time.perf_counter() - t0
    assert bare == n
    return n / parser_s, n / bare_s


def bench_serial_latency(n: int) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory(prefix="bench-pty-") as tmp:
        return _serial_latency(n, Path(tmp))


def _serial_latency(n: int, tmp: Path) -> tuple[list[float], list[float]]:
    import serial

    from drivers.serial_rfid import Em4100SerialReader

    uids = [f"{i + 1:010X}" for i in range(n)]  # all different: no debounce between them
    driver_ms: list[float] = []
    with PtyReader(tmp / "rfid") as dev:
        reader = Em4100SerialReader("bench", "badge", str(dev.path), confirm_ms=0)  # one frame each
        reads: queue.Queue = queue.Queue()
        thread = threading.Thread(target=lambda: [reads.put(r) for r in reader.reads()], daemon=True)
        thread.start()
        time.sleep(0.3)
        for uid in uids:
            frame = encode_frame(uid)
            dev.write(frame[:-1])
            time.sleep(0.002)
            t0 = time.monotonic_ns()
            dev.write(frame[-1:])
            read = reads.get(timeout=10)
            driver_ms.append((read.mono_ns - t0) / 1e6)
        reader.close()
        thread.join(5)
    bare_ms: list[float] = []
    with PtyReader(tmp / "bare") as dev:
        port = serial.Serial(str(dev.path), 9600, timeout=0.05)
        for uid in uids:
            frame = encode_frame(uid)
            dev.write(frame[:-1])
            time.sleep(0.002)
            got = port.read(len(frame) - 1)
            t0 = time.monotonic_ns()
            dev.write(frame[-1:])
            got = b""
            while not got:
                got = port.read(1)
            bare_ms.append((time.monotonic_ns() - t0) / 1e6)
        port.close()
    return driver_ms, bare_ms


def bench_confirm_latency(n: int) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory(prefix="bench-confirm-") as tmp:
        return _confirm_latency(n, Path(tmp))


def _confirm_latency(n: int, tmp: Path) -> tuple[list[float], list[float]]:
    from drivers.serial_rfid import Em4100SerialReader
    from app.demo.pty_reader import REPEAT_S

    out: dict[int, list[float]] = {150: [], 0: []}
    with PtyReader(tmp / "confirm") as dev_c, PtyReader(tmp / "bare") as dev_b:
        readers = {150: (Em4100SerialReader("bench-confirm", "control", str(dev_c.path)), dev_c),
                   0: (Em4100SerialReader("bench-bare", "control", str(dev_b.path), confirm_ms=0), dev_b)}
        assert readers[150][0].confirm_ms == 150  # the default for EM4100 readers
        queues: dict[int, queue.Queue] = {}
        for window, (reader, _dev) in readers.items():
            q: queue.Queue = queue.Queue()
            queues[window] = q
            threading.Thread(target=lambda r=reader, q=q: [q.put(x) for x in r.reads()], daemon=True).start()
        time.sleep(0.3)
        for i in range(n):
            uid = f"{0xC000000000 + i + 1:010X}"  # a new card each time: no debounce between them
            for window in (150, 0) if i % 2 else (0, 150):  # interleaved: machine noise hits both alike
                reader, dev = readers[window]
                frame = encode_frame(uid)
                dev.write(frame[:-1])
                time.sleep(0.002)
                t0 = time.monotonic_ns()
                dev.write(frame[-1:])
                while True:  # the card stays held: the reader repeats until the gate has read it
                    try:
                        read = queues[window].get(timeout=REPEAT_S)
                        break
                    except queue.Empty:
                        dev.write(frame)
                out[window].append((read.mono_ns - t0) / 1e6)
                time.sleep(0.05)  # the next card is another one: read at once, no debounce
        for reader, _dev in readers.values():
            reader.close()
    return out[150], out[0]


def bench_pcsc(n: int) -> tuple[float, float, float]:
    with PcscDaemon() as daemon:
        os.environ.update(daemon.client_env())
        from smartcard import scard

        from drivers.pcsc import read_card

        card = VirtualCard(daemon.port)
        card.insert("04A1B2C3D4E5F6")
        hresult, ctx = scard.SCardEstablishContext(scard.SCARD_SCOPE_USER)
        assert hresult == 0
        name = "Virtual PCD 00 00"
        deadline = time.monotonic() + 10
        while True:  # wait until pcscd has seen the card
            _, states = scard.SCardGetStatusChange(ctx, 500, [(name, scard.SCARD_STATE_UNAWARE)])
            if states[0][1] & scard.SCARD_STATE_PRESENT or time.monotonic() > deadline:
                break
        driver, bare = [], []
        for _ in range(n):  # interleaved so machine noise hits both alike
            t0 = time.perf_counter()
            outcome = read_card(ctx, name)
            driver.append(time.perf_counter() - t0)
            assert outcome.uid == "04A1B2C3D4E5F6", outcome.detail
            t0 = time.perf_counter()
            hr, hcard, proto = scard.SCardConnect(
                ctx, name, scard.SCARD_SHARE_SHARED, scard.SCARD_PROTOCOL_T0 | scard.SCARD_PROTOCOL_T1
            )
            hr, resp = scard.SCardTransmit(hcard, proto, [0xFF, 0xCA, 0, 0, 0])
            scard.SCardDisconnect(hcard, scard.SCARD_LEAVE_CARD)
            bare.append(time.perf_counter() - t0)
            assert resp[-2:] == [0x90, 0x00]
        # insertion -> CardRead through the whole driver (dominated by pcscd's 400 ms vpcd polling)
        from drivers.pcsc import PcscReader

        card.remove()
        reader = PcscReader("bench", "control", "Virtual PCD * 00", poll_ms=1000)
        reads: queue.Queue = queue.Queue()
        thread = threading.Thread(target=lambda: [reads.put(r) for r in reader.reads()], daemon=True)
        thread.start()
        time.sleep(0.6)
        t0 = time.monotonic_ns()
        card.insert("11223344", wait=None)
        read = reads.get(timeout=10)
        insert_ms = (read.mono_ns - t0) / 1e6
        reader.close()
        thread.join(5)
        card.remove()
        scard.SCardReleaseContext(ctx)
    return statistics.median(driver) * 1e3, statistics.median(bare) * 1e3, insert_ms


def main() -> None:
    from _cli import exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (seconds)")
    args = ap.parse_args()
    n_parse, n_pty, n_pcsc = (2_000, 20, 20) if args.smoke else (200_000, 300, 500)
    n_confirm = 4 if args.smoke else 60

    parser_rate, regex_rate = bench_parser(n_parse)
    print(f"parser: {parser_rate:,.0f} frames/s   (baseline bare regex scan: {regex_rate:,.0f} frames/s)")
    driver_ms, bare_ms = bench_serial_latency(n_pty)
    print(
        f"serial latency last byte -> CardRead: p50 {pct(driver_ms, .5):.2f} ms p99 {pct(driver_ms, .99):.2f} ms"
        f"   (baseline bare pyserial read: p50 {pct(bare_ms, .5):.2f} ms p99 {pct(bare_ms, .99):.2f} ms)"
    )
    confirm_ms, held_bare_ms = bench_confirm_latency(n_confirm)
    added_ms = pct(confirm_ms, .5) - pct(held_bare_ms, .5)
    print(
        f"confirm-by-repeat, card held (frames every 65 ms), first frame -> CardRead: "
        f"p50 {pct(confirm_ms, .5):.2f} ms p99 {pct(confirm_ms, .99):.2f} ms"
        f"   (baseline bare read, confirmation off: p50 {pct(held_bare_ms, .5):.2f} ms"
        f" p99 {pct(held_bare_ms, .99):.2f} ms)   added p50 {added_ms:.2f} ms"
    )
    cycle_ms, bare_cycle_ms, insert_ms = bench_pcsc(n_pcsc)
    ratio = cycle_ms / bare_cycle_ms
    print(
        f"PC/SC read cycle via vpcd: {cycle_ms:.3f} ms   (baseline bare pyscard loop: {bare_cycle_ms:.3f} ms)"
        f"   ratio {ratio:.2f}"
    )
    print(f"PC/SC card insertion -> CardRead: {insert_ms:.0f} ms (pcscd polls vpcd every 400 ms)")
    print(
        json.dumps(
            {
                "bench": "readers",
                "figures": {
                    "parser_frames_per_s": round(parser_rate),
                    "serial_latency_p50_ms": round(pct(driver_ms, .5), 3),
                    "serial_latency_p99_ms": round(pct(driver_ms, .99), 3),
                    "confirm_latency_p50_ms": round(pct(confirm_ms, .5), 3),
                    "confirm_latency_p99_ms": round(pct(confirm_ms, .99), 3),
                    "confirm_added_p50_ms": round(added_ms, 3),
                    "pcsc_cycle_ms": round(cycle_ms, 4),
                    "pcsc_insert_to_read_ms": round(insert_ms, 1),
                },
                "baseline": {
                    "regex_frames_per_s": round(regex_rate),
                    "bare_serial_latency_p50_ms": round(pct(bare_ms, .5), 3),
                    "bare_serial_latency_p99_ms": round(pct(bare_ms, .99), 3),
                    "held_bare_read_p50_ms": round(pct(held_bare_ms, .5), 3),
                    "held_bare_read_p99_ms": round(pct(held_bare_ms, .99), 3),
                    "bare_pcsc_cycle_ms": round(bare_cycle_ms, 4),
                },
                "ratio": round(ratio, 3),
                "target": "pcsc_cycle <= 1.5x bare pyscard loop",
                "met": ratio <= 1.5,
            }
        )
    )


if __name__ == "__main__":
    main()
