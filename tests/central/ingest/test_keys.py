"""The office's gate keys (central/ingest/keys.py): cached, and the file looked at again."""

from __future__ import annotations

import time

import pytest

from central.ingest.keys import KeyRing, KeyUnreadable, add_gate, key_path, public_key_path
from portgate.errors import ConfigError


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


@pytest.mark.parametrize("content, why", [
    (b"hello, not a key\n", "no PEM PUBLIC KEY block"),
    (b"\xff\xfe\x00junk", "not PEM text"),
    (b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "not a valid Ed25519 public key ("),
])
def test_a_junk_public_key_file_is_named_as_not_a_valid_key_not_as_no_key(tmp_path, content, why):
    add_gate(tmp_path, "g1")
    path = public_key_path(tmp_path, "g1")
    path.write_bytes(content)
    ring = KeyRing(tmp_path, recheck_s=0)
    with pytest.raises(KeyUnreadable) as err:
        ring.public_keys("g1")
    assert str(err.value).startswith(f"public key of gate g1: {path}: not a valid Ed25519 public key")
    assert why in str(err.value) and "\n" not in str(err.value)
    path.write_text("\n")  # blank: the gate does not sign
    assert ring.public_keys("g1") == []


def test_a_keys_dir_that_is_not_a_directory_is_named_readably(tmp_path):
    with pytest.raises(ConfigError) as err:
        KeyRing(tmp_path / "nonexistent")
    # check-config's words (one text: tests/ops/test_check_config_refusals.py)
    assert str(err.value) == f"$.keys_dir: directory not found: {tmp_path / 'nonexistent'}"


def test_a_key_file_that_cannot_be_read_says_so(tmp_path):
    ring = KeyRing(tmp_path, recheck_s=0)
    key_path(tmp_path, "g1").mkdir(mode=0o700)  # a directory in its place (passes the mode check)
    with pytest.raises(KeyUnreadable, match="g1"):
        ring.key("g1")
    key_path(tmp_path, "g1").rmdir()
    fixed = add_gate(tmp_path, "g1").read_bytes().strip()
    assert ring.key("g1") == fixed


def test_a_key_file_open_to_others_is_named_not_an_unknown_gate(tmp_path):
    add_gate(tmp_path, "g1")
    key_path(tmp_path, "g1").chmod(0o644)
    with pytest.raises(KeyUnreadable, match=r"key of gate g1 not used: .*g1\.key: .*\(chmod 600\)"):
        KeyRing(tmp_path).key("g1")
    key_path(tmp_path, "g1").chmod(0o600)
    key_path(tmp_path, "g1").write_text("")
    with pytest.raises(KeyUnreadable, match="g1.*empty"):
        KeyRing(tmp_path).key("g1")


def test_a_cached_key_is_checked_again_when_only_its_mode_changes(tmp_path):
    first = add_gate(tmp_path, "g1").read_bytes().strip()
    ring = KeyRing(tmp_path, recheck_s=0.1)
    assert ring.key("g1") == first
    key_path(tmp_path, "g1").chmod(0o640)  # same contents, same mtime
    time.sleep(0.15)
    with pytest.raises(KeyUnreadable, match="chmod 600"):
        ring.key("g1")
    key_path(tmp_path, "g1").chmod(0o600)
    time.sleep(0.15)
    assert ring.key("g1") == first


def test_events_of_a_gate_whose_office_key_is_open_are_dead_letters_naming_the_mode(broker, office, make_gate):
    from tests.central.ingest.conftest import now
    from tests.central.ingest.payloads import tap
    from testkit.wait import wait_until

    gate = make_gate("g1")
    key_path(office.keys_dir, "g1").chmod(0o644)
    office.start(broker)
    gate.start(broker)
    gate.journal.append(tap(1), now=now())
    gate.sync.notify()
    # the gate's signed statuses are dead letters for the same reason; the event's is the one here
    events_dead = lambda: [d for d in office.dead() if not d[0].startswith("bad status:")]  # noqa: E731
    wait_until(lambda: len(events_dead()) == 1, what="the event's dead letter")
    reason, gate_id = events_dead()[0]
    assert gate_id == "g1" and "unknown gate" not in reason
    assert reason.startswith("key of gate g1 not used:") and "chmod 600" in reason, reason
    assert all("chmod 600" in d[0] for d in office.dead())  # statuses too name the mode, never "unknown gate"
