"""The office's gate keys (central/ingest/keys.py): cached, and the file looked at again."""

from __future__ import annotations

import time

import pytest

from central.ingest.keys import KeyRing, KeyUnreadable, add_gate, key_path


def test_a_replaced_or_removed_key_is_seen_after_recheck_s(tmp_path):
    first = add_gate(tmp_path, "g1").read_bytes().strip()
    ring = KeyRing(tmp_path, recheck_s=0.2)
    assert ring.key("g1") == first
    time.sleep(0.01)  # a new modification time
    second = add_gate(tmp_path, "g1", overwrite=True).read_bytes().strip()
    assert ring.key("g1") == first, "cached until recheck_s passed"
    time.sleep(0.25)
    assert ring.key("g1") == second
    key_path(tmp_path, "g1").unlink()
    time.sleep(0.25)
    assert ring.key("g1") is None  # the gate was removed
    assert ring.key("g9") is None  # never known


def test_a_key_file_that_cannot_be_read_says_so(tmp_path):
    ring = KeyRing(tmp_path, recheck_s=0)
    key_path(tmp_path, "g1").mkdir(mode=0o700)  # a directory in its place (passes the mode check)
    with pytest.raises(KeyUnreadable, match="g1"):
        ring.key("g1")
    key_path(tmp_path, "g1").rmdir()
    fixed = add_gate(tmp_path, "g1").read_bytes().strip()
    assert ring.key("g1") == fixed
