"""Issue 36, item 4: the gate's journal is edited after the office received, verified and linked
the worker's exit event, and the gate restarted: its next event links to the edited row, so the
office records a PREV_MISMATCH. The worker's bundle still verifies: the ledger's verified copy of the
exit counts, and the later break is reported beside it. A break the office never recorded, or an
edited event, still fails. A real ``Journal`` edited with sqlite3, the ingest path, the ledger's
rebuild and pay."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import zipfile

import pytest

from central.db import make_engine
from central.evidence.bundle import export
from central.ingest.receipts import issue
from central.office_key import office_key
from central.evidence.verify import verify_bundle
from central.ingest.event_store import update_progress
from central.ingest.keys import KeyRing, add_gate, register_public_key
from central.ledger.migrate import upgrade
from central.ledger.store import rebuild_shifts
from central.pay.cli import load_setup
from central.pay.statements_store import pay_from_ledger
from edge.journal import Journal
from edge.rules.model import Now
from portgate.config import read_secret
from wire import chain

from .ingested import ingest
from .test_recompute import ADMIT, DAY, EXIT, NOW, SHIFT, _tap, resign


@pytest.fixture(scope="module")
def later(tmp_path_factory):
    base = tmp_path_factory.mktemp("later")
    keys = base / "keys"
    hkey = read_secret(add_gate(keys, "g1"))
    signer = chain.new_private_key()
    register_public_key(keys, "g1", chain.public_pem(signer.public_key()))
    path = base / "journal.db"
    j = Journal(path, port="santos", gate_id="g1", key=hkey, boot_id="b1", signer=signer)
    sent = [j.append(_tap("admit"), now=Now(ADMIT, 1, True)), j.append(_tap("exit"), now=Now(EXIT, 2, True))]
    j.close()
    url = f"sqlite:///{base / 'ledger.db'}"
    upgrade(url)
    engine = make_engine(url)
    ring = KeyRing(keys, recheck_s=0)
    assert ingest(engine, ring, sent, NOW) == []  # the exit (seq 2) verified and linked
    conn = sqlite3.connect(path)  # someone edits the exit row at the gate ...
    body = conn.execute("SELECT body FROM journal WHERE seq = 2").fetchone()[0]
    conn.execute("UPDATE journal SET body = ? WHERE seq = 2",
                 (body.replace(b'"2026-03-16T16:40:00', b'"2026-03-16T16:05:00'),))
    conn.commit()
    conn.close()
    j = Journal(path, port="santos", gate_id="g1", key=hkey, boot_id="b2", signer=signer)  # ... and restarts it
    after = [j.append(_tap("deny", "V099", "0A04A10099"), now=Now(EXIT + dt.timedelta(minutes=5), 1, True))]
    j.close()
    breaks = ingest(engine, ring, after, NOW)
    assert [(b.kind, b.seq_from, b.seq_to) for b in breaks] == [("PREV_MISMATCH", 2, 3)]
    with engine.begin() as conn:
        update_progress(conn, ["g1"], NOW)
        issue(conn, office_key(keys), "santos", ["g1"], NOW)
    port, rulebook, calendar = load_setup(None)
    rebuild_shifts(engine, DAY, DAY, calendar.zone, now=NOW)
    pay_from_ledger(engine, DAY, DAY, rulebook, calendar, now=NOW)
    bundle = base / "v017.zip"
    export(engine, keys, "V017", DAY, DAY, bundle, zone=calendar.zone, now=NOW, calendar=calendar,
           pay_rulebook=port.rulebook)
    engine.dispose()
    return bundle, keys


def test_the_ledgers_verified_exit_counts_and_the_later_break_is_reported_beside_it(later):
    bundle, _keys = later
    failures, notes = verify_bundle(bundle)
    assert failures == [], failures
    beside = [n for n in notes if n.startswith("gate g1: CHAIN_BREAK PREV_MISMATCH gate g1 seq 2..3: ")]
    assert len(beside) == 1 and "recorded by the office on ingest, after seq 2 was received" in beside[0], notes
    assert "seq 2 as the ledger holds it counts" in beside[0]
    assert "gate g1: the office recorded PREV_MISMATCH at seq 2..3; the bundle's events break there too" in notes
    assert any(n.startswith(f"statement {SHIFT}@") and "equal to the pay recomputed" in n for n in notes), notes
    assert "gate g1: 3 signed events verified, seq 1..3, head " in "\n".join(notes)


def test_the_same_break_not_recorded_by_the_office_still_fails(later, tmp_path):
    bundle, keys = later
    with zipfile.ZipFile(bundle) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    report = json.loads(files["chain/g1.json"])
    report["breaks_recorded_on_ingest"] = []
    hidden = resign({**files, "chain/g1.json": json.dumps(report).encode()}, office_key(keys), tmp_path / "h.zip")
    failures, _ = verify_bundle(hidden)
    assert any(f.startswith("events/g1.jsonl: CHAIN_BREAK PREV_MISMATCH gate g1 seq 2..3") for f in failures), failures


def test_an_edited_exit_in_the_bundle_still_fails_beside_the_recorded_break(later, tmp_path):
    bundle, keys = later
    with zipfile.ZipFile(bundle) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    lines = files["events/g1.jsonl"].splitlines()
    lines[1] = lines[1].replace(b'"2026-03-16T16:40:00', b'"2026-03-16T16:05:00')
    edited = resign({**files, "events/g1.jsonl": b"\n".join(lines) + b"\n"}, office_key(keys), tmp_path / "e.zip")
    failures, _ = verify_bundle(edited)
    assert any(f.startswith("events/g1.jsonl: CHAIN_BREAK BAD_SIGNATURE gate g1 seq 2") for f in failures), failures
    assert any(f.startswith(f"shifts.json {SHIFT}: exit event ") for f in failures), failures
