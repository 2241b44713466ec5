"""The audit of every stored event's own signature (central/evidence/audit.py, ``portgate evidence
audit``): an inner event whose sig alone was replaced passes the chain-covered ingest and the audit
records it as a BAD_SIGNATURE break, once; real SQLite ledger, real keys, the real CLI."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import sqlite3
import subprocess
import sys

import msgspec
import pytest
from sqlalchemy import select

from central.db import make_engine
from central.evidence.audit import Row, audit, audit_rows
from central.ingest.keys import KeyRing
from central.ledger.schema import chain_breaks, events
from portgate.config import read_secret
from tests.central.conftest import copy_sqlite
from tests.central.evidence.ingested import ingest, two_gates
from tests.central.ingest.test_check import event
from testkit.cli import run_here
from wire import chain
from wire.events import TapPayload, encode, sign

T0 = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.UTC)


def tap(i):
    return TapPayload(uid=f"0A04A1{i:04d}", reader_id="r1", reader_kind="control", decision="admit",
                      registration="R1")


@pytest.fixture(scope="module")
def ingested(tmp_path_factory, migrated_sqlite):
    """The module's ledger, made once (issue 32: two gates' journals, their keys and an ingest per
    test cost more than the test): a copy of the session's migrated ledger holding gate g1's six
    signed events (seq 3's sig replaced, MAC redone with the HMAC key: the ingest accepts it, its
    content proven by seq 4) and g2's three HMAC-only ones, beside its keys dir. Returns ``(folder
    holding ledger.db and keys/, g1's events)``; each test gets copies of both (``ledger``)."""
    root = tmp_path_factory.mktemp("audit-ledger")
    keys, hkey, _signer, evs, plain = two_gates(root, tap, T0)
    evs[2] = sign(msgspec.structs.replace(evs[2], sig="00" * 64), hkey)
    copy_sqlite(migrated_sqlite, root / "ledger.db")
    engine = make_engine(f"sqlite:///{root / 'ledger.db'}")
    try:
        assert ingest(engine, KeyRing(keys, recheck_s=0), evs + plain, T0) == []
    finally:
        engine.dispose()
    return root, evs


@pytest.fixture
def ledger(tmp_path, ingested):
    """The test's own copy of the module's ledger (``ingested``) at ``tmp_path/ledger.db`` and of its
    keys dir at ``tmp_path/keys``: ``(engine, key ring, URL, keys dir, g1's events)``."""
    root, evs = ingested
    keys = tmp_path / "keys"
    shutil.copytree(root / "keys", keys)
    copy_sqlite(root / "ledger.db", tmp_path / "ledger.db")
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    engine = make_engine(url)
    yield engine, KeyRing(keys, recheck_s=0), url, keys, list(evs)
    engine.dispose()


def recorded(engine):
    with engine.connect() as c:
        return [(r.kind, r.gate_id, r.seq_from, r.event_id) for r in c.execute(select(chain_breaks))]


def cli(url, keys, *extra):
    """``portgate evidence audit`` through ``app.cli.main`` in this process (``testkit.cli.run_here``: no
    Python start per run) at the test's own priority (``--nice 0``: the process's niceness unchanged;
    the default nice 19 and the installed command have their own tests below, in subprocesses)."""
    return run_here(["evidence", "audit", "--db", url, "--keys-dir", str(keys), "--nice", "0", *extra])


def store_raw(engine, event_id, raw):
    """Replace one stored event's raw bytes in the ledger (an edit behind the ingest's back)."""
    with engine.begin() as conn:
        conn.execute(events.update().where(events.c.event_id == event_id).values(raw=raw))


def test_the_audit_records_the_replaced_inner_signature_once(ledger):
    engine, ring, _url, _keys, evs = ledger
    report = audit(engine, ring, now=T0)
    assert report.checked == 6 and report.last_id == 9  # g2's HMAC-only events are not signed
    assert [(b.kind, b.gate_id, b.seq_from) for b in report.recorded] == [("BAD_SIGNATURE", "g1", 3)]
    assert report.recorded[0].detail.startswith("CHAIN_BREAK BAD_SIGNATURE gate g1 seq 3: audit: ledger id 3: ")
    assert "proven by seq 4's link, its sig bytes were replaced" in report.recorded[0].detail
    assert recorded(engine) == [("BAD_SIGNATURE", "g1", 3, evs[2].event_id)]
    again = audit(engine, ring, now=T0)
    assert again.recorded == [] and again.checked == 6 and recorded(engine) == [
        ("BAD_SIGNATURE", "g1", 3, evs[2].event_id)]
    assert [b.kind for b in again.failures] == ["BAD_SIGNATURE"]  # still reported, not recorded again
    later = audit(engine, ring, after_id=report.last_id, now=T0)
    assert (later.examined, later.last_id, later.failures) == (0, 9, [])


def test_an_edited_content_is_edited_or_forged_an_unsigned_or_undecodable_event_a_break(ledger):
    engine, ring, _url, _keys, evs = ledger
    hkey = read_secret(_keys / "g1.key")
    moved = msgspec.structs.replace(evs[4], mono_ns=evs[4].mono_ns + 10**9)  # content edited, sig kept
    store_raw(engine, moved.event_id, encode(sign(moved, hkey)))
    store_raw(engine, evs[1].event_id, encode(sign(msgspec.structs.replace(evs[1], sig=""), hkey)))
    store_raw(engine, evs[5].event_id, b"junk")
    report = audit(engine, ring, now=T0)
    kinds = [(b.kind, b.gate_id, b.seq_from, b.event_id) for b in report.recorded]
    assert kinds == [("UNSIGNED", "g1", 2, evs[1].event_id), ("BAD_SIGNATURE", "g1", 3, evs[2].event_id),
                     ("COLUMN_MISMATCH", "g1", 5, evs[4].event_id),  # only raw was edited: its row's columns not
                     ("BAD_SIGNATURE", "g1", 5, evs[4].event_id), ("MALFORMED", "g1", 6, evs[5].event_id)]
    assert report.recorded[0].detail.startswith("CHAIN_BREAK UNSIGNED gate g1 seq 2: audit: ledger id 2: ")
    assert f"mono_ns stored {evs[4].mono_ns}, signed {moved.mono_ns}" in report.recorded[2].detail
    assert "(edited, or forged without the gate's key)" in report.recorded[3].detail
    assert report.recorded[4].detail.startswith("CHAIN_BREAK MALFORMED gate g1 seq 6: audit: ledger id 6: ")
    assert len(recorded(engine)) == 5 and audit(engine, ring, now=T0).recorded == []
    assert len(recorded(engine)) == 5


def test_an_unsigned_event_after_a_signed_one_is_a_break_without_registered_keys():
    signer = chain.new_private_key()
    good, _ = chain.seal(event(1, prev=chain.GENESIS), signer, b"k" * 32)
    bare = msgspec.structs.replace(event(2, prev=chain.GENESIS), sig="")
    rows = [Row(1, "g1", 1, good.event_id, encode(good)), Row(2, "g1", 2, bare.event_id, encode(bare)),
            Row(3, "g2", 1, bare.event_id, encode(bare))]
    found = audit_rows(rows, lambda g: ((), f"no public key {g}.pub"), lambda g, s: None, set())
    assert found.checked == 0 and found.first_unchecked == 1
    assert found.unchecked == {"g1": [1, "no public key g1.pub"]}
    assert [(b.kind, b.gate_id, b.seq_from) for b in found.breaks] == [("UNSIGNED", "g1", 2)]  # g2: HMAC only


def test_an_unsigned_event_of_a_linked_gate_is_a_break_even_past_its_signed_events_and_keys(ledger):
    engine, _ring, _url, keys, evs = ledger
    (keys / "g1.pub").unlink()
    store_raw(engine, evs[3].event_id, encode(sign(msgspec.structs.replace(evs[3], sig=""),
                                                   read_secret(keys / "g1.key"))))
    report = audit(engine, KeyRing(keys, recheck_s=0), after_id=3, now=T0)  # no signed event met
    assert [(b.kind, b.seq_from) for b in report.recorded] == [("UNSIGNED", 4)]  # its link says it was signed
    assert report.unchecked == {"g1": (2, f"no public key {keys / 'g1.pub'}")} and report.last_id == 4


def test_the_cli_names_the_failure_and_exits_1_each_time(ledger):
    _engine, _ring, url, keys, _evs = ledger
    first = cli(url, keys)
    assert first.returncode == 1, first.stderr
    assert "FAIL: CHAIN_BREAK BAD_SIGNATURE gate g1 seq 3: audit: " in first.stdout
    assert first.stdout.strip().endswith("audited 6 signed event(s) up to ledger id 9: 1 failure(s), 1 new recorded")
    second = cli(url, keys)
    assert second.returncode == 1 and "(already recorded)" in second.stdout
    assert second.stdout.strip().endswith("1 failure(s), 0 new recorded")
    missing = run_here(["evidence", "audit", "--db", url, "--nice", "0"])  # no keys dir: refused
    assert missing.returncode == 2 and "give --config, or --db and --keys-dir" in missing.stderr


def test_missing_public_keys_are_not_audited_and_hold_the_cursor(ledger, tmp_path):
    engine, _ring, url, keys, _evs = ledger
    empty = tmp_path / "nokeys"
    empty.mkdir()
    run = cli(url, empty)
    assert run.returncode == 2, run.stdout + run.stderr
    # g1's first signed event is ledger id 1: the cursor stays at 0, said as such, with the ids read
    assert "audited 0 signed event(s) of ledger ids 1..9: 0 failure(s), 0 new recorded; ledger id 1 is the " \
           "first not audited (the next audit: --after-id 0)" in run.stdout, run.stdout
    assert run.stderr.count("\n") == 1 and "gate g1: 6 signed event(s) (no public key" in run.stderr
    (keys / "g1.pub").unlink()
    run = cli(url, keys)
    assert run.returncode == 2 and "gate g1: 6 signed event(s)" in run.stderr and recorded(engine) == []


def test_after_id_past_the_end_or_out_of_range(ledger):
    _engine, _ring, url, keys, _evs = ledger
    past = cli(url, keys, "--after-id", "500")
    assert past.returncode == 0 and past.stdout.strip() == "nothing after ledger id 500: audited 0 event(s)"
    huge = cli(url, keys, "--after-id", "99999999999999999999999")
    assert huge.returncode == 2 and "Traceback" not in huge.stderr and "--after-id" in huge.stderr


def test_a_locked_ledger_exits_3_in_one_line(ledger, tmp_path):
    _engine, _ring, url, keys, _evs = ledger
    holder = sqlite3.connect(tmp_path / "ledger.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # a writer holds the ledger: the audit cannot record its break
    try:
        run = cli(url, keys)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert run.returncode == 3, run.stdout + run.stderr
    assert run.stderr.count("\n") == 1 and "ledger unreachable" in run.stderr and "locked" in run.stderr


def test_a_junk_public_key_is_named_as_not_a_valid_key_and_not_audited(ledger):
    _engine, _ring, url, keys, _evs = ledger
    (keys / "g1.pub").write_text("this is not a key\n")
    run = cli(url, keys)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.count("\n") == 1 and "gate g1: 6 signed event(s) (public key of gate g1: " \
        f"{keys / 'g1.pub'}: not a valid Ed25519 public key (no PEM PUBLIC KEY block))" in run.stderr


@pytest.mark.parametrize("given", ["option", "config"])
def test_a_keys_dir_that_does_not_exist_names_the_option_and_the_path(ledger, tmp_path, given):
    _engine, _ring, url, _keys, _evs = ledger
    config = tmp_path / "central.toml"
    config.write_text(f'database_url = "{url}"\nport = "santos"\nkeys_dir = "/nonexistent"\n')
    extra = ["--keys-dir", "/nonexistent"] if given == "option" else []
    run = run_here(["evidence", "audit", "--config", str(config), *extra])
    where = "--keys-dir" if given == "option" else f"{config}: keys_dir"
    assert (run.returncode, run.stderr) == (2, f"portgate: {where}: '/nonexistent' does not exist (portgate central "
                                               "add-gate creates the key directory)\n")


@pytest.mark.parametrize("extra, niceness", [((), 19), (("--nice", "0"), 0)])
def test_the_audit_runs_at_nice_19_unless_told_otherwise(ledger, extra, niceness):
    """The command lowers its own priority (the ingest comes first); ``--nice N`` asks for N instead
    (0: the caller's; never above the caller's priority). The process reports its niceness once the
    command returned."""
    _engine, _ring, url, keys, _evs = ledger
    niceness = max(niceness, os.nice(0))  # a suite run under nice keeps it
    report = ("import os, sys\nfrom app.cli import main\ncode = main(sys.argv[1:])\n"
              "print('nice', os.nice(0), 'exit', code, file=sys.stderr)")
    run = subprocess.run([sys.executable, "-c", report, "evidence", "audit", "--db", url, "--keys-dir", str(keys),
                          *extra], capture_output=True, text=True, timeout=300)
    assert run.stderr.splitlines()[-1] == f"nice {niceness} exit 1", run.stdout + run.stderr  # 1: the planted break


def test_the_marker_and_the_missing_key_line_speak_pt_br(ledger, tmp_path):
    """In pt-BR (the default) the "already recorded" marker and the reason a gate is not audited are
    Portuguese; the stored finding after ``FAIL:`` stays the ledger's English detail (docs/evidence.md)."""
    _engine, _ring, url, keys, _evs = ledger
    pt = {"PORTGATE_LANG": "pt"}
    assert cli(url, keys).returncode == 1
    again = run_here(["evidence", "audit", "--db", url, "--keys-dir", str(keys), "--nice", "0"], env=pt)
    [line] = [x for x in again.stdout.splitlines() if x.startswith("FAIL:")]
    assert line.endswith(" (já registrada)") and "already recorded" not in again.stdout, again.stdout
    empty = tmp_path / "nokeys"
    empty.mkdir()
    run = run_here(["evidence", "audit", "--db", url, "--keys-dir", str(empty), "--nice", "0"], env=pt)
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"portaló g1: 6 evento(s) assinado(s) (sem chave pública {empty / 'g1.pub'})" in run.stderr, run.stderr
    assert "no public key" not in run.stderr
