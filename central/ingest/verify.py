"""Ed25519 signatures of a batch's signed events, verified in helper processes ahead of the writer.

The verification is chain-covered (``central.ingest.runs``): one signature per run of a gate's
linked events in the batch (about 60-190 us of CPU each, GIL held). The writer process's reader
thread prepares each batch as it arrives (``submit``: decodes the events of signing gates once,
cuts the runs, computes each event's canonical bytes and SHA-256: ``central.ingest.runs.prepare_batch``)
and hands only the runs' last signatures to a helper (a few hundred bytes per run), so the
signatures of batch k+1 are verified while batch k commits. The writer then takes the verdicts
(``verdicts``), the decoded events and their canonical bytes (the MAC is checked over them, and
each event's hash kept for its ``event_links`` row): no event is decoded twice. A run whose last
signature holds for no key has its other events verified by the writer itself
(``central.ingest.runs.cover``: the rare case of an edited or forged event, named exactly).

Nothing is trusted from here without the rest of the check: topic, schema, MAC and the key list
are checked by the writer as before (``central.ingest.check.check``), and a verdict only counts
for the very key list it was computed with (a key registered or learned meanwhile: verified again
in the writer). A helper that fails (killed, a broken pipe, an answer that does not fit) has its
batch's signatures verified by the writer with the same pure function (``runs.check_all``), is
started again for the next batch and ``ingest.verifier_failed`` is logged. Order per gate is
untouched: batches are still checked and committed one after another.

Each helper is ``python -m central.ingest.verify`` over its stdin/stdout (length-prefixed
msgpack: requests ``[(signature, signed bytes, [raw public key, ...]), ...]``, answers
``[[bool, ...], ...]``, one bool per key, in order); it ends when its stdin closes (the writer
gone). A plain child process, not ``multiprocessing``: the writer is itself a daemonic
multiprocessing child.

``[ingest] verify_processes`` (1): helpers per writer, started with the writer when a gate has a
registered public key, else at the first signed event; 0 verifies in the writer. A helper is used
from its first words, ``READY`` (a fresh interpreter's imports take 0.2-0.3 s): until then the
writer verifies each batch's run tails itself, so a writer started or restarted over a backlog
commits at once instead of waiting for its helper (measured: the first commit of a queued
backlog came 250-300 ms after the batch arrived, against 0.5 ms for an HMAC-only gate's).
"""

from __future__ import annotations

import os
import select
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import msgspec
import structlog

from central.ingest.check import topic_gate
from central.ingest.keys import KeyRing, KeyUnreadable
from central.ingest.runs import check_all, finish_batch, prepare_batch, raw_keys

log = structlog.get_logger("central.ingest")

_LEN = struct.Struct("!I")
READY = b"ready\n"  # a helper's first words: its imports are done, it answers from now on
_ROOT = Path(__file__).resolve().parents[2]
_encode = msgspec.msgpack.Encoder().encode
_requests = msgspec.msgpack.Decoder(list[tuple[bytes, bytes, list[bytes]]])
_answers = msgspec.msgpack.Decoder(list[list[bool]])


class _Helper:
    """One helper process; requests written by the reader thread, answers read by the writer."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen([sys.executable, "-m", "central.ingest.verify"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, cwd=str(_ROOT))
        self.ready = False

    def poll_ready(self) -> bool:
        """True once the helper has said ``READY`` on its stdout (written after its imports,
        before any answer: a fresh interpreter takes 0.2-0.3 s). Never waits. Raises ``EOFError``
        if it ended first, ``ValueError`` if it wrote anything else."""
        if not self.ready and select.select([self.proc.stdout], [], [], 0)[0]:
            said = self.proc.stdout.read(len(READY))
            if not said:
                raise EOFError("verifier helper ended before it was ready")
            if said != READY:
                raise ValueError(f"verifier helper said {said[:40]!r} instead of that it was ready")
            self.ready = True
        return self.ready

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
    ``verdicts(pending)`` (writer, in submission order) → the verdicts and decoded events of the
    batch, or None (no signing gate's event: nothing to verify ahead)."""

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

    def _keys_of(self, topic: str) -> tuple:
        """``prepare_batch``'s lookup: ``(key list, raw keys newest first)`` of the topic's gate, or
        ``()`` (not an events topic of this port, no public key, or an unreadable ``.pub`` file:
        the writer's check says so)."""
        gate = topic_gate(topic, self.port)
        if not isinstance(gate, str):
            return ()
        try:
            pubs = self.keys.public_keys(gate)
        except KeyUnreadable:
            return ()
        return (pubs, self._raw_keys(pubs)) if pubs else ()

    def submit(self, items: list[tuple[str, bytes]]):
        """Prepare ``items`` (``(topic, raw)``: ``central.ingest.runs.prepare_batch``) and hand the runs'
        last signatures to a helper; the pending result for ``verdicts`` (None: no signing gate's
        event in the batch, or no helpers). A helper that has not said ``READY`` yet is not waited
        for: the pending result has no helper and ``verdicts`` verifies the tails here."""
        if not self.processes:
            return None
        prepared = prepare_batch(items, self._keys_of)
        if not prepared.jobs:
            return None
        checks = prepared.tail_checks()
        if not checks:
            return prepared, checks, None
        with self._lock:
            if self._closed:
                return None
            self._spawn_locked()
            helper = self._helpers[self._next % len(self._helpers)]
            self._next += 1
            try:
                if not helper.poll_ready():  # starting: verified by the writer, without waiting
                    return prepared, checks, None
                helper.send(checks)
            except (OSError, EOFError, ValueError) as exc:
                self._failed_locked(helper, exc)
                helper = None
        return prepared, checks, helper

    def verdicts(self, pending) -> tuple[list, list] | None:
        """``(verified, decoded)`` of a ``submit``, one entry per item: ``(key list, verdicts, digest,
        canonical bytes)`` or None (``event_store.check``'s ``verified``), and the decoded event or
        None; None if the batch had no signing gate's event. A helper that failed: the signatures
        verified here."""
        if pending is None:
            return None
        prepared, checks, helper = pending
        tails = None
        if helper is not None:
            try:
                tails = helper.answer(len(checks))
                if any(len(t) != len(c[2]) for t, c in zip(tails, checks)):
                    raise ValueError("verifier helper answered verdicts for another number of keys")
            except (OSError, EOFError, ValueError, msgspec.DecodeError) as exc:
                with self._lock:
                    self._failed_locked(helper, exc)
                tails = None
        if tails is None:
            tails = check_all(checks)
        return finish_batch(prepared, tails), prepared.decoded

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


def verify_jobs(jobs: list[tuple[bytes, bytes, list[bytes]]]) -> list[list[bool]]:
    """The helper's work: for each ``(signature, signed bytes, raw public keys newest first)``, one
    bool per key (``central.ingest.runs.check_all``; a malformed key or signature is False)."""
    return check_all(jobs)


def serve(stdin=None, stdout=None) -> None:
    """The helper's loop: read a request, write its answer, until end of input."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    stdout.write(READY)
    stdout.flush()
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
