"""The gate's heartbeat file ``<state_dir>/gate-alive.json``: proof of life, the office link state
and the reads refused because the journal could not record them, for the watchman's screen
(``edge.display``), which reads it read-only.

Shape (JSON object, then spaces up to ``SIZE`` bytes): ``{"pid": int, "at": float (Unix seconds,
system clock), "uplink": "online" | "offline" | "standalone", "since": float | null (Unix seconds
the uplink last changed), "journal": "ok" | "disk_full", "refused": [{"n": int, "at": float, "uid":
str, "outcome": "deny" | "exit", "registration": str | null}, ...], "readers": [{"reader_id": str,
"kind": str, "state": "ok" | "fault" | "unknown", "since": float | null, "last_read": float | null,
"detail": str}, ...], "enrol": {"session": str, "registration": str, "until": float} | null}``
(``readers``: each configured reader's health, ``edge.reader_health``; ``enrol``: the office's
enrol mode in force at the gate, issue 34, ``until`` in Unix seconds). ``journal`` is "disk_full"
while the journal holds refusals for a full disk not yet reported (``Journal.refused_pending``);
``refused`` lists the last ``REFUSED_KEPT`` reads whose journal write failed (``note_refused``,
called by the gate loop; ``n`` counts them from 1 since the gate started, so a reader tells new
ones from those it has shown).

A full disk must not silence it (the screen would say the gate has stopped while the gate is
refusing reads): the file is made once, ``SIZE`` bytes, flushed to disk while there is space, and
every beat then rewrites those same bytes in place (``os.pwrite`` at offset 0 on a descriptor kept
open), which needs no new block on tmpfs, ext4 or f2fs. No ``os.replace``: a reader may meet a
write half done, so ``read_heartbeat`` reads again when the JSON does not parse. Written every
``EVERY_S`` seconds by a daemon thread of the gate process. The file is removed when the gate stops
cleanly; a killed gate leaves a file that ages. A gate started on a disk already full cannot make
the file: it retries every beat and the screen shows the gate stopped until it can.

``read_heartbeat(path, now)`` gives an ``Alive``; ``gate_running`` is False when the file is
missing, unreadable or older than ``STALE_S``, and then ``uplink`` is "unknown". Needs no
``metrics_port``. Never in the decision path: a failed write is logged and retried.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import structlog

from edge.reader_health import ReaderView

log = structlog.get_logger(__name__)

FILE = "gate-alive.json"
EVERY_S = 1.0
STALE_S = 3.0
SIZE = 4096  # bytes: one page, room for REFUSED_KEPT refusals with long UIDs
REFUSED_KEPT = 10
UID_MAX = 64  # characters of a refused read's UID kept in the file
_READ_TRIES = 5


@dataclasses.dataclass(frozen=True, slots=True)
class Refused:
    """One read the gate refused (or let out, G13) because its journal write failed."""

    n: int  # 1, 2, ... since the gate started
    at: float  # Unix seconds
    uid: str
    outcome: str  # "deny" | "exit" (what the indicator showed)
    registration: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Alive:
    """What the heartbeat file says (see module doc)."""

    gate_running: bool
    uplink: str  # online | offline | standalone | unknown
    since: float | None = None
    disk_full: bool = False
    refused: tuple[Refused, ...] = ()
    pid: int | None = None  # the gate process (a restarted gate numbers its refusals from 1 again)
    readers: tuple[ReaderView, ...] = ()  # each configured reader's health (edge.reader_health)
    enrol_until: float | None = None  # enrol mode in force until (Unix seconds), issue 34; None: not in it


class Heartbeat:
    """Writes ``FILE`` in ``state_dir``. ``connected``: the sync's "session up" test, None for a
    standalone gate; ``disk_full``: True while the journal is refusing appends for a full disk
    (None: never); ``readers``: the readers' health now (``ReaderHealth.snapshot``; None: none)."""

    def __init__(self, state_dir: Path | str, connected: Callable[[], bool] | None,
                 disk_full: Callable[[], bool] | None = None,
                 readers: Callable[[], list[ReaderView]] | None = None,
                 enrol: Callable[[], dict | None] | None = None) -> None:
        self.path = Path(state_dir) / FILE
        self._enrol = enrol
        self._connected = connected
        self._disk_full = disk_full
        self._readers = readers
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._uplink: str | None = None
        self._since: float | None = None
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._refused: collections.deque[Refused] = collections.deque(maxlen=REFUSED_KEPT)
        self._refused_n = 0

    def _state(self) -> str:
        if self._connected is None:
            return "standalone"
        return "online" if self._connected() else "offline"

    def note_refused(self, uid: str, outcome: str, registration: str | None = None,
                     at: float | None = None) -> None:
        """Record a read whose journal write failed (``outcome``: what the indicator showed,
        "deny" or "exit"); the next beat carries it. Thread-safe; never raises."""
        with self._lock:
            self._refused_n += 1
            self._refused.append(Refused(self._refused_n, time.time() if at is None else at,
                                         str(uid)[:UID_MAX], outcome, registration))

    def _body(self, now: float, uplink: str) -> bytes:
        """The file's bytes: the JSON padded with spaces to ``SIZE`` (the oldest refusals dropped
        if it would not fit)."""
        with self._lock:
            refused = list(self._refused)
        disk_full = bool(self._disk_full()) if self._disk_full is not None else False
        readers = [r.as_dict() for r in self._readers()] if self._readers is not None else []
        enrol = self._enrol() if self._enrol is not None else None
        while True:
            body = json.dumps({"pid": os.getpid(), "at": now, "uplink": uplink, "since": self._since,
                               "journal": "disk_full" if disk_full else "ok",
                               "refused": [dataclasses.asdict(r) for r in refused],
                               "readers": readers, "enrol": enrol}).encode()
            if len(body) < SIZE or not refused:
                return body[:SIZE - 1].ljust(SIZE - 1) + b"\n"
            refused = refused[1:]

    def _open(self) -> int:
        """The descriptor of the ``SIZE``-byte file, made (and flushed to disk) the first time.
        Raises ``OSError`` (a full disk at the first beat)."""
        if self._fd is not None:
            return self._fd
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC)
            if os.fstat(fd).st_size == SIZE:
                self._fd = fd
                return fd
            os.close(fd)
        except FileNotFoundError:
            pass
        tmp = self.path.with_name(f".{FILE}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, b" " * (SIZE - 1) + b"\n")
            os.fsync(fd)  # blocks allocated now, while there is space
            os.replace(tmp, self.path)
        except OSError:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        self._fd = fd
        return fd

    def beat(self) -> None:
        """Write the file once (in place). Raises ``OSError``."""
        now = time.time()
        uplink = self._state()
        if uplink != self._uplink:
            self._uplink, self._since = uplink, now
        os.pwrite(self._open(), self._body(now, uplink), 0)

    def start(self) -> Heartbeat:
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        failing = False
        while not self._stop.is_set():
            try:
                self.beat()
                failing = False
            except OSError as exc:
                if not failing:
                    log.warning("heartbeat_write_failed", path=str(self.path), error=exc.strerror)
                failing = True
            self._stop.wait(EVERY_S)

    def stop(self) -> None:
        """Stop writing and remove the file (the gate is no longer running)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass


def _refused(items) -> tuple[Refused, ...]:
    out = []
    for r in items if isinstance(items, list) else []:
        try:
            out.append(Refused(int(r["n"]), float(r["at"]), str(r["uid"]), str(r["outcome"]),
                               str(r["registration"]) if r.get("registration") else None))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return tuple(out)


def _readers(items) -> tuple[ReaderView, ...]:
    out = []
    for r in items if isinstance(items, list) else []:
        try:
            state = str(r["state"])
            out.append(ReaderView(str(r["reader_id"]), str(r.get("kind") or "?"),
                                  state if state in ("ok", "fault") else "unknown",
                                  float(r["since"]) if r.get("since") is not None else None,
                                  float(r["last_read"]) if r.get("last_read") is not None else None,
                                  str(r.get("detail") or "")))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return tuple(out)


def read_heartbeat(path: Path | str, now: float | None = None) -> Alive:
    """What the heartbeat file says (see module doc). A write met half done is read again."""
    data = None
    for _ in range(_READ_TRIES):
        try:
            data = json.loads(Path(path).read_bytes())
            at = float(data["at"])
            uplink = str(data["uplink"])
            break
        except OSError:
            return Alive(False, "unknown")
        except (ValueError, KeyError, TypeError):
            data = None
            time.sleep(0.001)
    if data is None:
        return Alive(False, "unknown")
    now = time.time() if now is None else now
    if now - at > STALE_S or uplink not in ("online", "offline", "standalone"):
        return Alive(False, "unknown")
    since = data.get("since")
    return Alive(True, uplink, float(since) if isinstance(since, (int, float)) else None,
                 disk_full=data.get("journal") == "disk_full", refused=_refused(data.get("refused")),
                 pid=data.get("pid") if isinstance(data.get("pid"), int) else None,
                 readers=_readers(data.get("readers")), enrol_until=_enrol_until(data.get("enrol"), now))


def _enrol_until(item, now: float) -> float | None:
    """``until`` of the heartbeat's enrol mode while it lasts at ``now``; None otherwise."""
    until = item.get("until") if isinstance(item, dict) else None
    return float(until) if isinstance(until, (int, float)) and until > now else None


def read_alive(path: Path | str, now: float | None = None) -> tuple[bool, str, float | None]:
    """``(gate_running, uplink, since)`` from the heartbeat file (``read_heartbeat`` in short)."""
    alive = read_heartbeat(path, now)
    return alive.gate_running, alive.uplink, alive.since
