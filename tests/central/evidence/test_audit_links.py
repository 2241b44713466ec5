"""The audit of the stored links and seqs (central/evidence/audit.py, ``portgate evidence audit``):
an altered or deleted ``event_links`` row is LINK_ALTERED / LINK_MISSING, a deleted event MISSING,
each recorded once, exit 1; a clean ledger exit 0. Real ingest, real keys, the real CLI, on SQLite
and PostgreSQL (``migrated_url``)."""

from __future__ import annotations

import datetime as dt
import subprocess

import pytest
from sqlalchemy import delete, select, update

from app.cli import main
from central.db import make_engine
from central.ingest.keys import KeyRing, add_gate, register_public_key
from central.ledger.schema import chain_breaks, event_links, events, gate_losses
from edge.journal import Journal
from edge.rules.model import Now
from portgate.config import read_secret
from tests.central.evidence.ingested import ingest as ingest_at
from testkit.cli import run_here
from wire import chain
from wire.events import TapPayload

T0 = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.UTC)


def tap(i):
    return TapPayload(uid=f"0A04A1{i:04d}", reader_id="r1", reader_kind="control", decision="admit",
                      registration="R1")


def ingest(engine, ring, evs):
    """The evs through the office's ingest at ``T0``; the breaks."""
    return ingest_at(engine, ring, evs, T0)


@pytest.fixture
def ledger(tmp_path, migrated_url):
    """Gate g1's six genuine signed events through the ingest into a migrated ledger, and its
    journal open for a seventh."""
    keys = tmp_path / "keys"
    hkey = read_secret(add_gate(keys, "g1"))
    signer = chain.new_private_key()
    register_public_key(keys, "g1", chain.public_pem(signer.public_key()))
    j = Journal(tmp_path / "j.db", port="santos", gate_id="g1", key=hkey, boot_id="b1", signer=signer)
    evs = [j.append(tap(i), now=Now(T0, i, True)) for i in range(6)]
    engine = make_engine(migrated_url)
    ring = KeyRing(keys, recheck_s=0)
    assert ingest(engine, ring, evs) == []
    yield engine, ring, migrated_url, keys, evs, j
    j.close()
    engine.dispose()


def cli(url, keys, *extra):
    """``portgate evidence audit`` through ``app.cli.main`` in this process (``testkit.cli.run_here``: no
    Python start per run) at the test's own priority (``--nice 0``: the process's niceness unchanged;
    the default nice 19 and the installed command have their tests in test_audit.py)."""
    return run_here(["evidence", "audit", "--db", url, "--keys-dir", str(keys), "--nice", "0", *extra])


def breaks(engine):
    with engine.connect() as c:
        return [(r.kind, r.seq_from, r.seq_to, r.event_id)
                for r in c.execute(select(chain_breaks).order_by(chain_breaks.c.id))]


def test_a_clean_ledger_has_no_failure(ledger):
    engine, _ring, url, keys, _evs, _j = ledger
    done = cli(url, keys)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "audited 6 signed event(s) up to ledger id 6: 0 failure(s), 0 new recorded" in done.stdout
    assert breaks(engine) == []


def test_an_altered_newest_link_is_named_once_and_explains_the_ingest_prev_mismatch(ledger):
    engine, ring, url, keys, evs, j = ledger
    with engine.begin() as conn:
        conn.execute(update(event_links).where(event_links.c.gate_id == "g1", event_links.c.seq == 6)
                     .values(hash=bytes(range(32))))
    seventh = j.append(tap(6), now=Now(T0, 6, True))
    found = ingest(engine, ring, [seventh])  # the live gate's next tap: the ingest trusts the row
    assert [b.kind for b in found] == ["PREV_MISMATCH"]
    done = cli(url, keys)
    assert done.returncode == 1, done.stdout + done.stderr
    fails = [line for line in done.stdout.splitlines() if line.startswith("FAIL:")]
    assert len(fails) == 1 and "CHAIN_BREAK LINK_ALTERED gate g1 seq 6: audit: ledger id 6: " in fails[0]
    assert f"hash {bytes(range(32)).hex()} (the event's is {chain.event_hash(evs[5])})" in fails[0]
    assert "seq 7 names the event's hash: a PREV_MISMATCH at seq 6..7 follows from this row, not from the " \
           "events" in fails[0]
    assert ("LINK_ALTERED", 6, 6, evs[5].event_id) in breaks(engine)
    again = cli(url, keys)
    assert again.returncode == 1 and "(already recorded)" in again.stdout
    assert [b for b in breaks(engine) if b[0] == "LINK_ALTERED"] == [("LINK_ALTERED", 6, 6, evs[5].event_id)]


def test_deleted_links_are_each_a_link_missing_break(ledger):
    engine, _ring, url, keys, evs, _j = ledger
    with engine.begin() as conn:
        conn.execute(delete(event_links))
    done = cli(url, keys)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "6 failure(s), 6 new recorded" in done.stdout
    assert breaks(engine) == [("LINK_MISSING", i + 1, i + 1, e.event_id) for i, e in enumerate(evs)]


def test_a_deleted_event_is_missing_unless_a_recorded_loss(ledger):
    engine, _ring, url, keys, evs, _j = ledger
    with engine.begin() as conn:
        conn.execute(delete(events).where(events.c.event_id == evs[2].event_id))
    done = cli(url, keys)
    assert done.returncode == 1, done.stdout + done.stderr
    assert ("FAIL: CHAIN_BREAK MISSING gate g1 seq 3..3: audit: seq 3..3 was received (gapless up to seq 6) "
            f"but is not in the ledger and is no recorded loss; the first event stored after it is "
            f"{evs[3].event_id}") in done.stdout
    assert breaks(engine) == [("MISSING", 3, 3, evs[3].event_id)]
    again = cli(url, keys, "--after-id", "6")  # the whole ledger's seqs, whatever the cursor
    assert again.returncode == 1 and "(already recorded)" in again.stdout and len(breaks(engine)) == 1


def test_a_recorded_loss_is_not_missing(ledger):
    engine, _ring, url, keys, evs, _j = ledger
    with engine.begin() as conn:
        conn.execute(delete(events).where(events.c.seq.in_([2, 3])))
        conn.execute(delete(event_links).where(event_links.c.seq.in_([2, 3])))
        conn.execute(gate_losses.insert().values(gate_id="g1", seq_from=2, seq_to=2, event_id="x" * 36,
                                                 detail="lost", recorded_at=T0))
    done = cli(url, keys)
    assert done.returncode == 1, done.stdout + done.stderr
    assert breaks(engine) == [("MISSING", 3, 3, evs[3].event_id)]  # seq 2 is the documented loss


def export_verify(url, keys, out, capsys):
    """``portgate evidence export`` of R1's 15 March, then ``portgate evidence verify``, through the
    command's entry point (``app.cli.main``) in this process: the same code as the installed
    command without two Python starts (``cli`` above runs ``evidence audit`` the same way, at
    ``--nice 0``). Returns the verify's run (returncode, stdout, stderr)."""
    capsys.readouterr()
    made = main(["evidence", "export", "--db", url, "--keys-dir", str(keys), "--registration", "R1",
                 "--from", "2026-03-15", "--to", "2026-03-15", "--out", str(out)])
    out_err = capsys.readouterr()
    assert made == 0, out_err.out + out_err.err
    status = main(["evidence", "verify", str(out)])
    out_err = capsys.readouterr()
    return subprocess.CompletedProcess(["portgate", "evidence", "verify", str(out)], status, out_err.out, out_err.err)


def test_verify_recomputes_the_links_and_says_where_the_office_record_is_not_the_events(ledger, tmp_path, capsys):
    engine, ring, url, keys, _evs, j = ledger
    with engine.begin() as conn:
        conn.execute(update(event_links).where(event_links.c.gate_id == "g1", event_links.c.seq == 6)
                     .values(hash=bytes(range(32))))
    assert [b.kind for b in ingest(engine, ring, [j.append(tap(6), now=Now(T0, 6, True))])] == ["PREV_MISMATCH"]
    assert cli(url, keys).returncode == 1  # LINK_ALTERED recorded
    done = export_verify(url, keys, tmp_path / "r1.zip", capsys)
    assert done.returncode == 3, done.stdout + done.stderr  # holds; no key pinned (issue 36): conditional
    assert ": VERIFIED ONLY IF these keys are the parties' own" in done.stdout.splitlines()[-1]
    assert not any(line.startswith("FAIL") for line in done.stdout.splitlines())
    kinds = {k: line for line in done.stdout.splitlines() for k in ("PREV_MISMATCH", "LINK_ALTERED")
             if f"the office recorded {k} at seq 6.." in line}
    assert set(kinds) == {"PREV_MISMATCH", "LINK_ALTERED"}, done.stdout
    assert all("the bundle's events hold there (recomputed from their raw bytes)" in v for v in kinds.values())


def test_a_bundle_of_a_ledger_with_a_deleted_event_fails_and_names_the_recorded_break(ledger, tmp_path, capsys):
    engine, _ring, url, keys, evs, _j = ledger
    with engine.begin() as conn:
        conn.execute(delete(events).where(events.c.event_id == evs[2].event_id))
    assert cli(url, keys).returncode == 1  # MISSING recorded
    done = export_verify(url, keys, tmp_path / "r1.zip", capsys)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "CHAIN_BREAK MISSING gate g1 seq 3" in done.stdout
    assert "the office recorded MISSING at seq 3..3; the bundle's events break there too" in done.stdout


@pytest.mark.parametrize("migrated_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("column", ["hash", "prev"])
def test_a_link_stored_as_text_is_a_link_altered_finding_not_a_traceback(ledger, column):
    """SQLite keeps any value in a BLOB column: a link's hash or prev written as hex text (a hand
    repair, another tool) is read as what it is, a row that does not match the event's bytes."""
    engine, _ring, url, keys, evs, _j = ledger
    as_text = chain.event_hash(evs[3]) if column == "hash" else evs[3].prev
    with engine.begin() as conn:
        conn.exec_driver_sql(f"UPDATE event_links SET {column} = ? WHERE gate_id = 'g1' AND seq = 4", (as_text,))
    done = cli(url, keys)
    assert done.returncode == 1, done.stdout + done.stderr
    fails = [line for line in done.stdout.splitlines() if line.startswith("FAIL:")]
    assert len(fails) == 1 and "CHAIN_BREAK LINK_ALTERED gate g1 seq 4: audit: ledger id 4: " in fails[0], fails
    assert f"{column} stored as text" in fails[0], fails[0]
    assert ("LINK_ALTERED", 4, 4, evs[3].event_id) in breaks(engine)



@pytest.mark.parametrize("migrated_url", ["sqlite"], indirect=True)
def test_an_empty_link_hash_is_named_empty(ledger):
    """The tester's ``update event_links set hash=X''``: the finding names the stored value (empty),
    not a blank before the event's hash."""
    engine, _ring, url, keys, evs, _j = ledger
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE event_links SET hash = X'' WHERE gate_id = 'g1' AND seq = 4")
    done = cli(url, keys)
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = [x for x in done.stdout.splitlines() if x.startswith("FAIL:")]
    assert f"hash empty (0 bytes) (the event's is {chain.event_hash(evs[3])})" in line, line
