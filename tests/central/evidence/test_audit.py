"""The audit of every stored event's own signature (central/evidence/audit.py, ``portgate evidence
audit``): an inner event whose sig alone was replaced passes the chain-covered ingest and the audit
records it as a BAD_SIGNATURE break, once; real SQLite ledger, real keys, the real CLI."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import msgspec
import pytest
from sqlalchemy import select

from central.db import make_engine
from central.evidence.audit import audit, bad_signatures
from central.ingest import chain as chain_check
from central.ingest.event_store import Accepted, batch_verdicts, check, write_batch
from central.ingest.keys import KeyRing, add_gate, register_public_key
from central.ledger.migrate import upgrade
from central.ledger.schema import chain_breaks
from edge.journal import Journal
from edge.rules.model import Now
from portgate.config import read_secret
from tests.central.ingest.test_check import event
from wire import chain, topics
from wire.events import TapPayload, encode, sign

T0 = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.UTC)


def tap(i):
    return TapPayload(uid=f"0A04A1{i:04d}", reader_id="r1", reader_kind="control", decision="admit",
                      registration="R1")


@pytest.fixture
def ledger(tmp_path):
    """A ledger holding gate g1's six signed events (seq 3's sig replaced, MAC redone with the HMAC
    key: the ingest accepts it, its content proven by seq 4) and g2's three HMAC-only ones."""
    keys = tmp_path / "keys"
    hkey = read_secret(add_gate(keys, "g1"))
    hkey2 = read_secret(add_gate(keys, "g2"))
    signer = chain.new_private_key()
    register_public_key(keys, "g1", chain.public_pem(signer.public_key()))
    j = Journal(tmp_path / "j.db", port="santos", gate_id="g1", key=hkey, boot_id="b1", signer=signer)
    evs = [j.append(tap(i), now=Now(T0, i, True)) for i in range(6)]
    j.close()
    j2 = Journal(tmp_path / "j2.db", port="santos", gate_id="g2", key=hkey2, boot_id="b1")
    plain = [j2.append(tap(i), now=Now(T0, i, True)) for i in range(3)]
    j2.close()
    evs[2] = sign(msgspec.structs.replace(evs[2], sig="00" * 64), hkey)
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade(url)
    engine = make_engine(url)
    ring = KeyRing(keys, recheck_s=0)
    items = [(topics.gate_events("santos", e.gate_id), encode(e)) for e in evs + plain]
    memo: dict = {}
    pre, decoded = batch_verdicts(items, "santos", ring, memo)
    ok = [check(t, raw, "santos", ring, v, memo, e) for (t, raw), v, e in zip(items, pre, decoded)]
    assert all(isinstance(v, Accepted) for v in ok), [getattr(v, "reason", "") for v in ok]
    with engine.begin() as conn:
        inserted = write_batch(conn, ok, [], T0)
        assert chain_check.record(conn, inserted, [], T0, ok) == []
    yield engine, ring, url, keys, evs
    engine.dispose()


def recorded(engine):
    with engine.connect() as c:
        return [(r.kind, r.gate_id, r.seq_from, r.event_id) for r in c.execute(select(chain_breaks))]


def test_the_audit_records_the_replaced_inner_signature_once(ledger):
    engine, ring, _url, _keys, evs = ledger
    report = audit(engine, ring, now=T0)
    assert report.checked == 6 and report.last_id == 9  # g2's HMAC-only events are not signed
    assert [(b.kind, b.gate_id, b.seq_from) for b in report.recorded] == [("BAD_SIGNATURE", "g1", 3)]
    assert report.recorded[0].detail.startswith("CHAIN_BREAK BAD_SIGNATURE gate g1 seq 3: audit: ")
    assert recorded(engine) == [("BAD_SIGNATURE", "g1", 3, evs[2].event_id)]
    again = audit(engine, ring, now=T0)
    assert again.recorded == [] and again.checked == 6 and recorded(engine) == [
        ("BAD_SIGNATURE", "g1", 3, evs[2].event_id)]
    assert audit(engine, ring, after_id=report.last_id, now=T0) == type(report)(0, 9, [])


def test_bad_signatures_skips_hmac_only_gates_unsigned_and_unreadable_rows():
    signer = chain.new_private_key()
    good, _ = chain.seal(event(1, prev=chain.GENESIS), signer, b"k" * 32)
    bad = msgspec.structs.replace(good, sig="11" * 64)
    pubs = {"g1": (signer.public_key(),)}
    checked, found = bad_signatures([("g1", encode(good)), ("g1", encode(bad)), ("g1", b"junk"),
                                     ("g2", encode(bad)), ("g1", encode(msgspec.structs.replace(good, sig="")))],
                                    lambda g: pubs.get(g, ()))
    assert checked == 2 and [(b.gate_id, b.seq_from, b.kind) for b in found] == [("g1", 1, "BAD_SIGNATURE")]


def test_the_cli_names_the_failure_and_exits_1_then_0(ledger):
    _engine, _ring, url, keys, _evs = ledger
    run = [sys.executable, "-m", "app.cli", "evidence", "audit", "--db", url, "--keys-dir", str(keys)]
    first = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert first.returncode == 1, first.stderr
    assert "FAIL: CHAIN_BREAK BAD_SIGNATURE gate g1 seq 3: audit: " in first.stdout
    assert first.stdout.strip().endswith("audited 6 signed event(s) up to ledger id 9: 1 new bad signature(s) recorded")
    second = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0 and "0 new bad signature(s)" in second.stdout
    missing = subprocess.run(run[:5] + ["--db", url], capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and "give --config, or --db and --keys-dir" in missing.stderr
