"""Serial readers and a port that is not theirs alone (issue 37: in the cluster demo a gate's
pseudo-terminal reader reported pyserial's "readiness to read but returned no data (multiple
access on port?)" and frames lost their first byte after STX). Everything over a real
pseudo-terminal and the real driver; the second reader is a real second opener of the same slave."""

from __future__ import annotations

import os
import select
import threading
import time

from drivers.base import FaultKind, ReaderState
from drivers.em4100 import encode_frame
from drivers.serial_rfid import Em4100SerialReader
from portgate.records import ReaderKind
from testkit.wait import wait_until

from tests.drivers.test_serial_rfid import faults, ready

FRAMES = 5000  # an upper bound only: the other reader meets ours within a few hundred frames


def every_frame(device, reader_id):  # type: ignore[no-untyped-def]
    """A reader whose every good frame is a read (no confirm, no debounce): frames can be counted."""
    return lambda cb: Em4100SerialReader(reader_id, ReaderKind.CONTROL, str(device.path), on_status=cb,
                                         confirm_ms=0, debounce_ms=0)


def uid(n: int) -> str:
    return f"0A04A{n:05X}"


def test_a_second_reader_of_the_same_port_is_refused_and_the_first_reads_every_frame(pty_device, run_reader):
    """Two gates configured on one device (or a stale gate process reopening a reused /dev/pts/N):
    the second cannot open it while the first reads, says so, and the first loses nothing."""
    first = run_reader(every_frame(pty_device, "shared-first"))
    ready(first)
    second = run_reader(every_frame(pty_device, "shared-second"))
    status = second.wait_status(lambda s: True)
    assert (status.state, status.fault) == (ReaderState.ABSENT, FaultKind.OPEN_FAILED), status
    assert "em uso por outro processo" in status.detail
    sent = [uid(n) for n in range(300)]
    for u in sent:
        pty_device.frame(u)
    got = [first.next_read().uid for _ in sent]
    assert got == sent
    assert second.no_read(0.3)
    first.stop()  # the port free again: the second reader opens it and reads
    ready(second)
    pty_device.frame(uid(999))
    assert second.next_read().uid == uid(999)


def test_a_program_reading_the_port_without_a_lock_is_a_shared_port_fault_not_an_unplug(pty_device, run_reader):
    """A program that opens the port without locking it takes bytes from under the reader. Before:
    pyserial's "no data" was taken for an unplug, the port reopened (and flushed: more frames lost)
    and a frame that lost its STX vanished silently. Now: a ``shared_port`` fault while the reader
    stays open, the damaged frames counted as ``bad_frame`` (a frame taken whole cannot be: the
    fault says bytes are being taken), and every frame read once the other program is gone."""
    lost_before = faults("shared-raw", FaultKind.DEVICE_LOST)
    bad_before = faults("shared-raw", FaultKind.BAD_FRAME)
    running = run_reader(every_frame(pty_device, "shared-raw"))
    ready(running)
    other = os.open(str(pty_device.path), os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    stop, taken = threading.Event(), []

    def take() -> None:  # one byte at a time, as a terminal program does
        while not stop.is_set():
            select.select([other], [], [], 0.05)
            try:
                taken.append(os.read(other, 1))
            except BlockingIOError:
                pass

    thief = threading.Thread(target=take, daemon=True)
    thief.start()
    try:
        sent = 0
        while sent < FRAMES and not (any(s.fault is FaultKind.SHARED_PORT for s in running.all_statuses)
                                     and faults("shared-raw", FaultKind.BAD_FRAME) > bad_before):
            pty_device.frame(uid(sent))
            sent += 1
            time.sleep(0.002)  # pacing, as a held card's frames come: both readers wait in select
    finally:
        stop.set()
        thief.join()
        os.close(other)
    shared = [s for s in running.all_statuses if s.fault is not None]
    assert shared and {s.fault for s in shared} == {FaultKind.SHARED_PORT}, shared  # no device_lost, no reopen
    assert all(s.state is ReaderState.READY for s in shared)
    assert "outro programa lê a mesma porta" in shared[0].detail
    assert faults("shared-raw", FaultKind.DEVICE_LOST) == lost_before
    assert faults("shared-raw", FaultKind.SHARED_PORT) >= 1
    assert b"".join(taken)
    assert faults("shared-raw", FaultKind.BAD_FRAME) > bad_before  # a frame that lost bytes: counted
    while not running.reads.empty():
        running.reads.get()
    after = [uid(n) for n in range(50_000, 50_100)]
    for u in after:
        pty_device.frame(u)
    assert [running.next_read().uid for _ in after] == after  # the same open port reads on


def test_a_frame_whose_stx_was_lost_is_a_counted_bad_frame(pty_device, run_reader):
    """Bytes outside a frame (its STX taken, or line noise) were dropped silently; now counted."""
    before = faults("shared-stx", FaultKind.BAD_FRAME)
    running = run_reader(every_frame(pty_device, "shared-stx"))
    ready(running)
    pty_device.write(encode_frame(uid(1))[1:])
    pty_device.frame(uid(2))
    assert running.next_read().uid == uid(2)
    assert faults("shared-stx", FaultKind.BAD_FRAME) == before + 1


def test_a_partial_frame_dropped_at_a_reopen_is_counted(pty_device, run_reader):
    """The port closes (here: unplugged) in the middle of a frame: the frame begun is a counted
    ``bad_frame``, not silently forgotten when the reader reopens."""
    before = faults("shared-reopen", FaultKind.BAD_FRAME)
    running = run_reader(every_frame(pty_device, "shared-reopen"))
    ready(running)
    pty_device.write(encode_frame(uid(3))[:6])
    wait_until(lambda: running.reader._parser.pending, timeout=30, what="the driver holding the frame begun")
    pty_device.unplug()
    running.wait_status(lambda s: s.fault is FaultKind.DEVICE_LOST)
    wait_until(lambda: faults("shared-reopen", FaultKind.BAD_FRAME) == before + 1, timeout=30,
               what="the frame begun counted when the port closed")
    pty_device.plug()
    ready(running)
    pty_device.frame(uid(4))
    assert running.next_read().uid == uid(4)


def test_a_card_frame_never_repeated_in_time_is_counted_not_dropped_silently(pty_device, run_reader):
    """Confirm-by-repeat drops a good frame that no repeat follows within ``confirm_ms`` (noise, or
    a card's repeats delayed past the window by a starved writer): a ``bad_frame`` that names the
    card, where it used to vanish."""
    before = faults("shared-once", FaultKind.BAD_FRAME)
    running = run_reader(lambda cb: Em4100SerialReader("shared-once", ReaderKind.CONTROL, str(pty_device.path),
                                                       on_status=cb))
    ready(running)
    pty_device.frame(uid(5))  # once, as line noise or a card swept past too fast
    wait_until(lambda: faults("shared-once", FaultKind.BAD_FRAME) == before + 1, timeout=30,
               what="the isolated frame counted")
    assert running.no_read(0.2)
    pty_device.hold(uid(6), seconds=0.15)
    assert running.next_read().uid == uid(6)


def test_a_stale_gate_of_a_killed_run_cannot_read_the_pty_that_took_its_number(tmp_path, run_reader):
    """The cause seen in the cluster demo's runs: a demo killed alone (SIGKILL on a timeout) left its
    gates running and its reader symlinks in place; each stale reader reopens its symlink every
    <= 2 s, and the next pty made anywhere takes the freed /dev/pts number (the lowest free one), so
    the stale gate became a second reader of the new run's badge reader: pyserial's "no data"
    errors, frames missing bytes, cards lost. Now the new run's reader, open first, keeps the port;
    the stale one is told the port is in use and reads nothing."""
    from app.demo.pty_reader import PtyReader

    old = PtyReader(tmp_path / "killed-run-tty")
    old.plug()
    stale = run_reader(every_frame(old, "stale-gate"))
    ready(stale)
    os.close(old._master)  # the killed demo's master, closed by the kernel; the symlink stays
    old._master = None
    stale.wait_status(lambda s: s.fault is FaultKind.DEVICE_LOST)
    # the stale symlink is parked while the new run opens its reader, then points at the new run's
    # pty (the freed number taken): the new run's gate opens first, as in the demo, and the stale
    # gate's retry (every <= 2 s) cannot win the open by the test's own timing under load
    parked = old.path.with_name("parked")
    parked.symlink_to(tmp_path / "no-such-pty")
    parked.replace(old.path)
    with PtyReader(tmp_path / "new-run-tty") as new:
        mine = run_reader(every_frame(new, "new-run-gate"))
        ready(mine)
        link = old.path.with_name("relink")
        link.symlink_to(new.slave_name)
        link.replace(old.path)
        refused = stale.wait_status(lambda s: s.state is not ReaderState.FAULT and s.fault is FaultKind.OPEN_FAILED
                                    and "em uso" in s.detail)
        assert refused.state is ReaderState.ABSENT
        sent = [uid(n) for n in range(300)]
        for u in sent:
            new.frame(u)
            time.sleep(0.002)
        assert [mine.next_read().uid for _ in sent] == sent
        assert stale.no_read(0.3)
        assert not [s for s in mine.all_statuses if s.fault is not None]
