"""Ed25519 verdicts of a batch's signed events, computed in helper processes ahead of the writer.

The verdicts are chain-covered (``central.ingest.runs.chain_verdicts``): one signature verified
per run of a gate's linked events in the batch (about 60-70 us of CPU each, GIL held), the rest of
a helper's work per event is decoding, canonical bytes and SHA-256 (a few us). The writer process's
reader thread hands each batch here as it arrives (``submit``), so the verdicts of batch k+1 are
computed while batch k commits; the writer then checks the batch with them
(``central.ingest.check.check``'s ``verified``) and keeps each event's hash for its
``event_links`` row. Nothing is trusted from here without the rest of the check: decoding, topic,
MAC and the key list are checked by the writer as before, and a verdict only counts for the very
key list it was computed with (a key registered or learned meanwhile: verified again in the
writer). A helper that fails (killed, a broken pipe, an answer that does not fit) gives no
verdicts: the writer verifies the batch itself with the same pure function
(``central.ingest.event_store.batch_verdicts``), the helper is started again for the next batch and
``ingest.verifier_failed`` is logged. Order per gate is untouched: batches are still checked and
committed one after another.

Each helper is ``python -m central.ingest.verify`` over its stdin/stdout (length-prefixed
msgpack: requests ``[(raw, [raw public key, ...]), ...]``, answers ``[([bool, ...], hash hex) |
None, ...]``, in order); it ends when its stdin closes (the writer gone). A plain child process,
not ``multiprocessing``: the writer is itself a daemonic multiprocessing child.

``[ingest] verify_processes`` (1): helpers per writer, started with the writer when a gate has a
registered public key, else at the first signed event; 0 verifies in the writer.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import msgspec
import structlog

from central.ingest.check import MAX_MESSAGE_BYTES, topic_gate
from central.ingest.keys import KeyRing, KeyUnreadable
from central.ingest.runs import chain_verdicts, raw_keys
from portgate.errors import BadInput
from wire.events import decode

log = structlog.get_logger("central.ingest")

Verdict = tuple[Sequence, tuple[bool, ...], str]  # (the key list it is for, one bool per key newest
# first, the hex SHA-256 of the event's canonical bytes)
_LEN = struct.Struct("!I")
_ROOT = Path(__file__).resolve().parents[2]
_encode = msgspec.msgpack.Encoder().encode
_requests = msgspec.msgpack.Decoder(list[tuple[bytes, list[bytes]]])
_answers = msgspec.msgpack.Decoder(list[tuple[list[bool], str] | None])


class _Helper:
    """One helper process; requests written by the reader thread, answers read by the writer."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen([sys.executable, "-m", "central.ingest.verify"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, cwd=str(_ROOT))

    def send(self, jobs: list) -> None:
        body = _encode(jobs)
        self.proc.stdin.write(_LEN.pack(len(body)) + body)
        self.proc.stdin.flush()

    def answer(self, n: int) -> list:
        head = self.proc.stdout.read(_LEN.size)
        if len(head) != _LEN.size:
            raise EOFError("verifier helper ended")
        (size,) = _LEN.unpack(head)
        found = _answers.decode(self.proc.stdout.read(size))
        if len(found) != n:
            raise ValueError(f"verifier helper answered {len(found)} verdicts for {n} events")
        return found

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()

    def kill(self) -> None:
        self.proc.kill()
        self.close()


class Verifier:
    """``submit(items)`` (reader thread) → a pending result for ``(topic, raw)`` items;
    ``verdicts(pending)`` (writer, in submission order) → one ``Verdict`` or None per item (None:
    not a signing gate's event, or not examined), or None for the whole batch (verify in the writer)."""

    def __init__(self, keys: KeyRing, port: str, processes: int = 1) -> None:
        self.keys = keys
        self.port = port
        self.processes = processes
        self.failures = 0
        self._helpers: list[_Helper] = []
        self._closed = False
        self._next = 0
        self._lock = threading.Lock()  # the helpers list and their stdin (submit vs a restart)
        self._raw: dict[int, tuple[Sequence, list[bytes]]] = {}  # id(key list) -> (list, raw keys newest first)

    def start(self) -> Verifier:
        """Start the helpers now if any gate has a registered public key (else at the first
        signed event: an HMAC-only office runs none)."""
        if any(self.keys.keys_dir.glob("*.pub")):
            with self._lock:
                self._spawn_locked()
        return self

    def _spawn_locked(self) -> None:
        if not self._helpers:
            self._helpers = [_Helper() for _ in range(self.processes)]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            helpers, self._helpers = self._helpers, []
        for h in helpers:
            h.close()

    def _raw_keys(self, pubs: Sequence) -> list[bytes]:
        held = self._raw.get(id(pubs))
        if held is None or held[0] is not pubs:
            if len(self._raw) > 10_000:
                self._raw.clear()
            raw = raw_keys(pubs)
            held = self._raw[id(pubs)] = (pubs, raw)
        return held[1]

    def submit(self, items: list[tuple[str, bytes]]):
        """Hand the signed events of ``items`` to a helper; the pending result for ``verdicts``."""
        if not self.processes:
            return None
        slots, jobs = [], []
        held: dict[str, Sequence] = {}  # gate -> its key list, looked up once per batch
        for i, (topic, raw) in enumerate(items):
            gate = topic_gate(topic, self.port)
            if not isinstance(gate, str):
                continue
            pubs = held.get(gate)
            if pubs is None:
                try:
                    pubs = held[gate] = self.keys.public_keys(gate)
                except KeyUnreadable:
                    held[gate] = pubs = ()  # the writer's check says so
            if pubs:
                slots.append((i, pubs))
                jobs.append((raw, self._raw_keys(pubs)))
        if not jobs:
            return None
        with self._lock:
            if self._closed:
                return None
            self._spawn_locked()
            helper = self._helpers[self._next % len(self._helpers)]
            self._next += 1
            try:
                helper.send(jobs)
            except (OSError, ValueError) as exc:
                self._failed_locked(helper, exc)
                return None
        return len(items), slots, helper

    def verdicts(self, pending) -> list[Verdict | None] | None:
        """The verdicts of a ``submit``, in item order; None if there are none."""
        if pending is None:
            return None
        n, slots, helper = pending
        try:
            found = helper.answer(len(slots))
        except (OSError, EOFError, ValueError, msgspec.DecodeError) as exc:
            with self._lock:
                self._failed_locked(helper, exc)
            return None
        out: list[Verdict | None] = [None] * n
        for (i, pubs), got in zip(slots, found, strict=True):
            if got is not None and len(got[0]) == len(pubs):
                out[i] = (pubs, tuple(got[0]), got[1])
        return out

    def _failed_locked(self, helper: _Helper, exc: BaseException) -> None:
        """A helper failed: end it and start another in its place (caller holds ``_lock``)."""
        self.failures += 1
        log.error("ingest.verifier_failed", error=f"{type(exc).__name__}: {exc}"[:300],
                  action="this batch verified in the writer; the helper starts again")
        if helper in self._helpers:
            self._helpers[self._helpers.index(helper)] = _Helper()
        try:
            helper.kill()
        except OSError:
            pass


def verify_jobs(jobs: list[tuple[bytes, list[bytes]]]) -> list[tuple[list[bool], str] | None]:
    """For each ``(raw message, raw public keys newest first)``: one bool per key, chain-covered
    (``central.ingest.runs.chain_verdicts``: one signature verified per run of linked events), and
    the hex SHA-256 of the event's canonical bytes; or
    None if the message is oversize, does not decode or carries no signature (the writer's check
    decides those)."""
    decoded = []
    for raw, keys in jobs:
        try:
            event = decode(raw) if len(raw) <= MAX_MESSAGE_BYTES else None
        except BadInput:
            event = None
        decoded.append((event, keys))
    return chain_verdicts(decoded)


def serve(stdin=None, stdout=None) -> None:
    """The helper's loop: read a request, write its answer, until end of input."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    while True:
        head = stdin.read(_LEN.size)
        if len(head) != _LEN.size:
            return
        (size,) = _LEN.unpack(head)
        body = _encode(verify_jobs(_requests.decode(stdin.read(size))))
        stdout.write(_LEN.pack(len(body)) + body)
        stdout.flush()


if __name__ == "__main__":
    serve()
