"""The gate's heartbeat file (``edge.heartbeat``) on a real full file system: it is rewritten in
place, so a full disk neither stops it nor hides the reads the gate refuses for that fault; a
write met half done is read again; a gate that cannot make the file is not shown running."""

from __future__ import annotations

import errno
import json
import os
import time

import pytest

from edge.heartbeat import FILE, SIZE, STALE_S, Heartbeat, read_heartbeat
from testkit.tmpfs import mounted_tmpfs
from tests.ops.test_gate_disk_full import fill

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small file system needs root")


@pytest.fixture
def small_fs(tmp_path):
    """A real 2 MiB tmpfs mounted at ``tmp_path/state``; unmounted when the test ends."""
    with mounted_tmpfs(tmp_path / "state", "2m") as mnt:
        yield mnt


@root_only
def test_the_heartbeat_keeps_beating_on_a_full_disk_with_the_refused_reads(small_fs):
    full = {"now": False}
    beat = Heartbeat(small_fs, None, disk_full=lambda: full["now"])
    beat.beat()
    assert (small_fs / FILE).stat().st_size == SIZE
    assert fill(small_fs) > 0
    with pytest.raises(OSError) as err:  # nothing else can be written
        (small_fs / "other").write_bytes(b"x")
    assert err.value.errno == errno.ENOSPC
    full["now"] = True
    for i in range(12):
        beat.note_refused(f"0A04A199{i:02d}", "exit" if i == 11 else "deny", "V001" if i == 11 else None)
    later = time.time() + STALE_S + 1
    beat.beat()  # in place: no new block needed
    alive = read_heartbeat(small_fs / FILE, now=later - STALE_S)
    assert alive.gate_running and alive.uplink == "standalone" and alive.disk_full
    assert [r.n for r in alive.refused] == list(range(3, 13))  # the last 10 are kept
    assert alive.refused[-1].outcome == "exit" and alive.refused[-1].registration == "V001"
    assert alive.refused[0].uid == "0A04A19902" and alive.pid == os.getpid()
    full["now"] = False
    beat.beat()
    assert not read_heartbeat(small_fs / FILE).disk_full
    beat.stop()
    assert not (small_fs / FILE).exists()


@root_only
def test_a_heartbeat_that_cannot_make_its_file_on_a_full_disk_is_not_running(small_fs):
    assert fill(small_fs) > 0
    beat = Heartbeat(small_fs, None)
    with pytest.raises(OSError):
        beat.beat()
    assert not read_heartbeat(small_fs / FILE).gate_running
    assert not list(small_fs.glob(".gate-alive*"))  # no temporary file left behind


def test_a_file_left_by_a_killed_gate_is_reused_in_place(tmp_path):
    first = Heartbeat(tmp_path, lambda: True)
    first.beat()
    inode = (tmp_path / FILE).stat().st_ino
    os.close(first._fd)  # the process died: the next gate finds the file
    first._fd = None
    second = Heartbeat(tmp_path, lambda: False)
    second.beat()
    assert (tmp_path / FILE).stat().st_ino == inode
    assert read_heartbeat(tmp_path / FILE).uplink == "offline"


def test_a_half_written_or_stale_file_is_not_a_running_gate(tmp_path):
    path = tmp_path / FILE
    path.write_bytes(b'{"pid": 1, "at": ' + b" " * 100)
    assert not read_heartbeat(path).gate_running
    path.write_text(json.dumps({"pid": 1, "at": time.time() - STALE_S - 1, "uplink": "online"}))
    assert not read_heartbeat(path).gate_running
    path.write_text(json.dumps({"pid": 1, "at": time.time(), "uplink": "online", "since": None}))
    alive = read_heartbeat(path)  # a file of the previous shape: no disk fault, no refusals
    assert alive.gate_running and not alive.disk_full and alive.refused == ()
