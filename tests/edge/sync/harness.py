"""An in-memory driver for the uplink core: an outbox (seq -> bytes, sent flag) and a client
whose message ids count up and wrap at 65535 as paho's do. No broker, no SQLite, no clock: the
test moves ``now`` itself."""

from __future__ import annotations

import dataclasses

from edge.sync import uplink as up
from edge.sync.settings import SyncSettings

OK = 0x00
NO_MATCHING_SUBSCRIBERS = 0x10
NOT_AUTHORIZED = 0x87


@dataclasses.dataclass
class Link:
    """What reached the wire: ``(mid, seq)`` of every event publish, bodies of requests."""

    next_mid: int = 1
    sent: list = dataclasses.field(default_factory=list)
    statuses: list = dataclasses.field(default_factory=list)
    requests: list = dataclasses.field(default_factory=list)

    def mid(self) -> int:
        mid = self.next_mid
        self.next_mid = 1 if mid == 65535 else mid + 1
        return mid


class Harness:
    def __init__(self, n_rows: int = 0, *, first_mid: int = 1, sent_through: int = 0, **settings) -> None:
        settings.setdefault("rate", 0)
        self.now = 1000.0
        self.settings = SyncSettings(**settings)
        self.core = up.Uplink(self.settings, self.now, sent_through=sent_through)
        self.outbox: dict[int, bool] = {}  # seq -> sent
        self.link = Link(next_mid=first_mid)
        self.commands: list = []  # every command executed, in order
        self.fail_marks = False
        self.reads: list = []  # (after, seqs returned) of every ReadOutbox
        self.append(n_rows)

    # -- the outside world ---------------------------------------------------------------------
    def append(self, n: int) -> None:
        start = max(self.outbox, default=0) + 1
        for seq in range(start, start + n):
            self.outbox[seq] = False
        self.core.notify()

    def unsent(self) -> list[int]:
        return [s for s, sent in sorted(self.outbox.items()) if not sent]

    def body(self, seq: int) -> bytes:
        return f"event {seq}".encode()

    def advance(self, seconds: float) -> None:
        self.now += seconds

    # -- the driver ----------------------------------------------------------------------------
    def run(self) -> list:
        """One wake of the pump: poll and execute until the core has nothing more to do;
        returns the commands of this wake."""
        done: list = []
        self.core.notify()
        for _ in range(16):
            commands = self.core.poll(self.now)
            for c in commands:
                self.execute(c)
            done += commands
            if not any(isinstance(c, up.ANSWERED) for c in commands):
                # the driver stops here: polling again at once must find nothing left to do
                assert self.core.poll(self.now) == [], "a command needing no answer left work behind"
                return done
        raise AssertionError(f"the core never settles: {done[-10:]}")

    def execute(self, c) -> None:
        self.commands.append(c)
        if isinstance(c, up.Publish):
            mid = self.link.mid()
            self.link.sent.append((mid, c.seq))
            self.core.published(mid, c.seq)
        elif isinstance(c, up.ReadOutbox):
            # as Journal.outbox_after: ordinary rows after c.after, and how far that read reached
            rows = [s for s in self.unsent() if s > c.after][: c.limit]
            through = rows[-1] if len(rows) == c.limit else max(self.outbox, default=0)
            self.reads.append((c.after, rows))
            self.core.rows([(s, self.body(s)) for s in rows], max(through, c.after))
        elif isinstance(c, up.MarkSent):
            if self.fail_marks:
                self.core.mark_failed(c.seqs, "database or disk is full", self.now)
                return
            for s in c.seqs:
                self.outbox[s] = True
            through = 0
            while self.outbox.get(through + 1):
                through += 1
            self.core.marked(c.seqs, through, self.now)
        elif isinstance(c, up.SendStatus):
            self.link.statuses.append((c.reason, self.core.sent_seq))
        elif isinstance(c, up.PublishRequest):
            mid = self.link.mid()
            self.link.requests.append((mid, c.body))
            self.core.request_published(mid, c.body)

    def connect(self) -> list:
        self.core.connected(self.now)
        return self.run()

    def ack(self, mid: int, rc: int = OK) -> None:
        self.core.ack(mid, rc, self.now)

    def ack_all(self, rc: int = OK) -> None:
        """PUBACK every publish not yet answered, in order."""
        for mid, _seq in self.link.sent[self._answered:]:
            self.ack(mid, rc)
        self._answered = len(self.link.sent)

    _answered = 0

    def published_seqs(self, since: int = 0) -> list[int]:
        return [seq for _mid, seq in self.link.sent[since:]]


def of(kind, commands) -> list:
    return [c for c in commands if isinstance(c, kind)]
