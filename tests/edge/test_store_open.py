"""Opening the gate's store: a file that cannot be written, a layout that is not a store's, an
``applied_seq`` ahead of the journal and a recovery that fails are refused with one line (exit 2
through ``portgate edge run``); a 0-byte file is a new store rebuilt from the journal (G5: who is
aboard is not forgotten). Real SQLite files through the real open path (docs/gate.md "Store")."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from edge.clock import FakeClock, GuardedClock
from edge.config import load_gate_config
from edge.indicator import RecordingIndicator
from edge.rules.model import Outcome
from edge.service import GateService
from edge.store import Store
from portgate.errors import StoreError
from testkit.gate_process import write_gate_config

from .conftest import GATE, T0, card_read

ROOT = Path(__file__).resolve().parents[2]
V001_CARD = "0A04A10001"


def _master(path: Path) -> list:
    c = sqlite3.connect(path)
    try:
        return c.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    finally:
        c.close()


def _new_store(path: Path) -> None:
    Store(path, gate_id=GATE).close()


@contextlib.contextmanager
def _read_only(path: Path):
    """The file cannot be written: immutable (``chattr +i``) as root, mode 0444 otherwise."""
    if os.geteuid() == 0:
        assert shutil.which("chattr"), "chattr (e2fsprogs) is installed by scripts/setup.sh"
        subprocess.run(["chattr", "+i", str(path)], check=True)
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(0o644)


def _gate_run(toml: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", "edge", "run", "--config", str(toml)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def _service(cfg) -> GateService:
    return GateService(cfg, clock=GuardedClock(FakeClock(T0)), indicator=RecordingIndicator())


def _admit_v001(cfg) -> None:
    """Start the gate, admit V001 (journaled and applied), stop it."""
    svc = _service(cfg)
    clock = svc.clock.inner
    [decision] = svc.loop.handle(card_read(V001_CARD, clock))
    assert decision.outcome is Outcome.ADMIT
    assert svc.store.open_shift("V001") is not None
    svc.close()


# -- a file that cannot be written --------------------------------------------------------------


def test_a_read_only_store_file_is_refused_at_open_with_one_line(tmp_path):
    path = tmp_path / "store.db"
    _new_store(path)
    before = _master(path)
    with _read_only(path):
        with pytest.raises(StoreError) as err:
            Store(path, gate_id=GATE)
    message = str(err.value)
    assert message.startswith(f"store {path} cannot be written: ") and "readonly" in message
    assert "\n" not in message
    assert _master(path) == before and list(tmp_path.glob("store.db.corrupt-*")) == []


def test_gate_run_on_a_read_only_store_exits_2_with_one_line(tmp_path):
    toml = write_gate_config(tmp_path)
    cfg = load_gate_config(toml)
    _admit_v001(cfg)
    store = Path(cfg.state_dir) / "store.db"
    with _read_only(store):
        out = _gate_run(toml)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    lines = [x for x in out.stderr.splitlines() if x.startswith("portgate:")]
    assert len(lines) == 1 and lines[0].startswith(f"portgate: store {store} cannot be written: "), lines


def test_a_store_recovery_that_fails_at_boot_stops_the_gate(tmp_path, mocker):
    """A write fault the open's probe does not see (the disk fills between the probe and the
    replay): the gate does not start instead of running with a store that forgot the journal."""
    from wire.events import AlertPayload

    cfg = load_gate_config(write_gate_config(tmp_path))
    svc = _service(cfg)
    ev = svc.journal.append(AlertPayload(code="TEST", detail="x"), now=svc.clock.now())  # not applied
    svc.close()
    mocker.patch.object(Store, "apply", side_effect=StoreError("store apply failed: database or disk is full"))
    with pytest.raises(StoreError) as err:
        _service(cfg)
    assert str(err.value) == (f"store recovery from the journal failed at seq {ev.seq}: "
                              "store apply failed: database or disk is full")


# -- layout -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("script, words", [
    ("ALTER TABLE open_shifts RENAME TO open_shifts_x",
     "not a gate store layout: table(s) the store does not know: open_shifts_x"),
    ("ALTER TABLE cards RENAME TO cards_x", "not a gate store layout: table(s) the store does not know: cards_x"),
    ("DROP TABLE meta", "not a gate store layout: store table(s) missing: meta"),
    ("DROP TABLE open_shifts; DROP TABLE escala",
     "not a gate store layout: store table(s) missing: escala, open_shifts"),
])
def test_a_store_layout_the_store_did_not_write_is_refused_and_left_in_place(tmp_path, script, words):
    path = tmp_path / "store.db"
    _new_store(path)
    c = sqlite3.connect(path)
    c.executescript(script)
    c.close()
    before = _master(path)
    with pytest.raises(StoreError) as err:
        Store(path, gate_id=GATE)
    assert str(err.value) == f"store {path}: {words}; move the file aside"
    assert _master(path) == before and list(tmp_path.glob("store.db.corrupt-*")) == []


def test_another_programs_sqlite_file_is_refused_as_a_store(tmp_path):
    """The office's ledger copied in as store.db: tables of another kind."""
    path = tmp_path / "store.db"
    c = sqlite3.connect(path)
    c.executescript("CREATE TABLE shifts (id INTEGER PRIMARY KEY, registration TEXT);"
                    "CREATE TABLE workers (registration TEXT PRIMARY KEY, name TEXT);")
    c.close()
    with pytest.raises(StoreError, match=r"table\(s\) the store does not know: shifts; move the file aside"):
        Store(path, gate_id=GATE)


@pytest.mark.parametrize("make", ["zero_bytes", "no_tables"])
def test_an_empty_file_is_a_new_store(tmp_path, make):
    path = tmp_path / "store.db"
    if make == "zero_bytes":
        path.write_bytes(b"")
    else:
        c = sqlite3.connect(path)
        c.execute("PRAGMA user_version = 0")
        c.close()
    s = Store(path, gate_id=GATE)
    assert s.applied_seq == 0 and s.quarantined_to is None
    s.close()
    assert {r[1] for r in _master(path) if r[0] == "table"} >= {"open_shifts", "meta", "cards"}


def test_a_zero_byte_store_gets_its_open_shifts_back_from_the_journal(tmp_path):
    """G5: ``: > store.db`` must not forget that V001 is aboard: the replay brings the shift back
    and the next tap is not a second ADMIT."""
    cfg = load_gate_config(write_gate_config(tmp_path))
    _admit_v001(cfg)
    state = Path(cfg.state_dir)
    (state / "store.db").write_bytes(b"")
    for side in ("store.db-wal", "store.db-shm"):
        (state / side).unlink(missing_ok=True)
    svc = _service(cfg)
    try:
        assert svc.store.open_shift("V001") is not None
        clock = svc.clock.inner
        [decision] = svc.loop.handle(card_read(V001_CARD, clock))
        assert decision.outcome is not Outcome.ADMIT
    finally:
        svc.close()


def test_an_applied_seq_ahead_of_the_journal_is_refused(tmp_path):
    cfg = load_gate_config(write_gate_config(tmp_path))
    _admit_v001(cfg)
    store = Path(cfg.state_dir) / "store.db"
    c = sqlite3.connect(store)
    c.execute("UPDATE meta SET value = '999' WHERE \"key\" = 'applied_seq'")
    c.commit()
    c.close()
    with pytest.raises(StoreError) as err:
        _service(cfg)
    assert str(err.value).startswith(f"store {store}: applied_seq 999 is ahead of the journal's last seq ")
    assert str(err.value).endswith("; move the file aside")


def test_gate_run_on_a_renamed_store_table_exits_2_and_keeps_the_file(tmp_path):
    toml = write_gate_config(tmp_path)
    cfg = load_gate_config(toml)
    _admit_v001(cfg)
    store = Path(cfg.state_dir) / "store.db"
    c = sqlite3.connect(store)
    c.execute("ALTER TABLE open_shifts RENAME TO open_shifts_x")
    c.close()
    before = _master(store)
    out = _gate_run(toml)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    lines = [x for x in out.stderr.splitlines() if x.startswith("portgate:")]
    assert lines == [f"portgate: store {store}: not a gate store layout: table(s) the store does not know: "
                     "open_shifts_x; move the file aside"]
    assert _master(store) == before
