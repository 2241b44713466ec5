"""A bundle over a chain with a quarantine segment and a key rollover verifies, names the segment,
and fails naming the seq when an event is missing (issue 20)."""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from zoneinfo import ZoneInfo

from central.db import make_engine
from central.evidence.bundle import export
from central.ingest.receipts import issue, office_key
from central.evidence.verify import verify_bundle
from central.ingest import chain as chain_check
from central.ingest.keys import KeyRing, add_gate, register_public_key
from central.ingest.event_store import Accepted, check, update_progress, write_batch
from edge.journal import Journal
from edge.rules.model import Now
from portgate.config import read_secret
from testkit.journal_faults import tear
from wire import chain, topics
from wire.events import TapPayload, encode

Z = ZoneInfo("America/Sao_Paulo")
T0 = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.UTC)


def tap(i, reg="R1"):
    return TapPayload(uid=f"0A04A1{i:04d}", reader_id="r1", reader_kind="control", decision="deny",
                      rules_failed=["G6"], registration=reg, message="NEGADO")


def test_a_segment_and_a_rollover_verify_and_a_missing_event_is_named(tmp_path, sqlite_ledger):
    keys = tmp_path / "keys"
    hkey = read_secret(add_gate(keys, "g1"))
    first = chain.new_private_key()
    register_public_key(keys, "g1", chain.public_pem(first.public_key()))
    path = tmp_path / "j.db"
    j = Journal(path, port="santos", gate_id="g1", key=hkey, boot_id="b1", signer=first)
    sent = [j.append(tap(i), now=Now(T0 + dt.timedelta(minutes=i), i, True)) for i in range(5)]
    j.mark_sent(range(1, 4))
    j.close()
    tear(path)
    j = Journal(path, port="santos", gate_id="g1", key=hkey, boot_id="b2", signer=first)
    later = j.outbox_batch(1)  # the STORE_QUARANTINED alert
    later += [j.append(tap(10 + i, reg="R2"), now=Now(T0 + dt.timedelta(hours=1), 99, True)) for i in range(2)]
    second = chain.new_private_key()
    later.append(j.rotate_key(second, now=Now(T0, 0, True)))
    later += [j.append(tap(20 + i), now=Now(T0 + dt.timedelta(hours=2, minutes=i), 200 + i, True)) for i in range(2)]
    j.close()
    url = sqlite_ledger(tmp_path / "ledger.db")
    engine = make_engine(url)
    ring = KeyRing(keys, recheck_s=0)
    delivered = sent[:3] + later  # 4 and 5 were lost with the torn journal (documented)
    with engine.begin() as conn:
        ok = [check(topics.gate_events("santos", "g1"), encode(e), "santos", ring) for e in delivered]
        assert all(isinstance(v, Accepted) for v in ok), [getattr(v, "reason", "") for v in ok]
        inserted = write_batch(conn, ok, [], T0)
        assert chain_check.record(conn, inserted, [], T0) == []
        update_progress(conn, ["g1"], T0)
    # losses are recorded from the alert by the writer; here the progress walk sees 4..5 missing,
    # so the receipt covers 1..3 only
    with engine.begin() as conn:
        from central.ingest.event_store import record_losses

        record_losses(conn, inserted, T0)
        update_progress(conn, ["g1"], T0)
        issued = issue(conn, office_key(keys), "santos", ["g1"], T0)
    assert [r["seq"] for r in issued] == [11]
    out = tmp_path / "r1.zip"
    done = export(engine, keys, "R1", dt.date(2026, 3, 15), dt.date(2026, 3, 15), out, zone=Z, now=T0)
    engine.dispose()
    assert done.gates == {"g1": (1, 11)}
    failures, notes = verify_bundle(out)
    assert failures == [], failures
    assert any("documented segment break at seq 6" in n and "lost 4..5" in n for n in notes)
    assert any("office receipt up to seq 11 matches the chain" in n for n in notes)

    # the same bundle without one event in the middle (manifest redone by its holder): named
    with zipfile.ZipFile(out) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    lines = files["events/g1.jsonl"].splitlines()
    files["events/g1.jsonl"] = b"\n".join(lines[:2] + lines[3:]) + b"\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for n, d in files.items():
            zf.writestr(n, d)
    (tmp_path / "cut.zip").write_bytes(buf.getvalue())
    failures, _ = verify_bundle(tmp_path / "cut.zip")
    assert "events/g1.jsonl: SHA-256 differs from the manifest (edited)" in failures
    assert any("CHAIN_BREAK MISSING gate g1 seq 3" in f for f in failures)


def test_an_inner_signature_altered_with_the_hmac_key_passes_ingest_and_fails_the_bundle(tmp_path, sqlite_ledger):
    """Ingest verifies one signature per run of linked events (central/ingest/runs.py): an inner
    event whose ``sig`` alone was replaced (its content, proven by its successor's signature,
    untouched; the MAC redone with the office's HMAC key) is accepted there. ``evidence verify``
    checks every event's own signature, so the bundle names it."""
    import msgspec

    from central.ingest.event_store import batch_verdicts
    from wire.events import sign

    keys = tmp_path / "keys"
    hkey = read_secret(add_gate(keys, "g1"))
    signer = chain.new_private_key()
    register_public_key(keys, "g1", chain.public_pem(signer.public_key()))
    j = Journal(tmp_path / "j.db", port="santos", gate_id="g1", key=hkey, boot_id="b1", signer=signer)
    evs = [j.append(tap(i), now=Now(T0 + dt.timedelta(minutes=i), i, True)) for i in range(6)]
    j.close()
    evs[2] = sign(msgspec.structs.replace(evs[2], sig="00" * 64), hkey)  # seq 3: only its sig altered
    url = sqlite_ledger(tmp_path / "ledger.db")
    engine = make_engine(url)
    ring = KeyRing(keys, recheck_s=0)
    items = [(topics.gate_events("santos", "g1"), encode(e)) for e in evs]
    memo: dict = {}
    pre, decoded = batch_verdicts(items, "santos", ring, memo)
    ok = [check(t, raw, "santos", ring, v, memo, e) for (t, raw), v, e in zip(items, pre, decoded)]
    assert all(isinstance(v, Accepted) for v in ok), [getattr(v, "reason", "") for v in ok]
    with engine.begin() as conn:
        inserted = write_batch(conn, ok, [], T0)
        assert chain_check.record(conn, inserted, [], T0) == []
        update_progress(conn, ["g1"], T0)
        issue(conn, office_key(keys), "santos", ["g1"], T0)
    out = tmp_path / "r1.zip"
    export(engine, keys, "R1", dt.date(2026, 3, 15), dt.date(2026, 3, 15), out, zone=Z, now=T0)
    engine.dispose()
    failures, _notes = verify_bundle(out)
    assert len(failures) == 1, failures
    assert failures[0].startswith("events/g1.jsonl: CHAIN_BREAK BAD_SIGNATURE gate g1 seq 3: "), failures
