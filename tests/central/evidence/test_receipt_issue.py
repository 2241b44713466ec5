"""``receipts.issue`` on both databases: a receipt only for a gate whose gapless prefix is beyond
its newest receipt and whose event at that prefix is linked (signed); one query per gate."""

from __future__ import annotations

import datetime as dt
import json

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import insert, select

from central.db import load_all_tables, make_engine
from central.ingest import receipts
from central.ledger.schema import chain_receipts, event_links, gate_progress

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def _progress(conn, gate_id: str, contiguous: int) -> None:
    conn.execute(insert(gate_progress).values(gate_id=gate_id, highest_seq=contiguous, contiguous_seq=contiguous,
                                              updated_at=NOW))


def _link(conn, gate_id: str, seq: int, head: str) -> None:
    conn.execute(insert(event_links).values(gate_id=gate_id, seq=seq, hash=bytes.fromhex(head),
                                            prev=b"\0" * 32, segment=False))


def test_a_receipt_only_where_the_linked_prefix_moved_beyond_the_last_one(db_url):
    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    key = Ed25519PrivateKey.generate()
    with engine.begin() as conn:
        _progress(conn, "signed", 3)
        _link(conn, "signed", 3, "a" * 64)
        _progress(conn, "hmac", 5)  # no link at its prefix: HMAC-only
        _progress(conn, "empty", 0)
        issued = receipts.issue(conn, key, "santos", ["signed", "hmac", "empty", "unknown"], NOW)
    assert [(r["gate_id"], r["seq"], r["head"]) for r in issued] == [("signed", 3, "a" * 64)]
    key.public_key().verify(bytes.fromhex(issued[0]["sig"]), issued[0]["body"])
    with engine.begin() as conn:
        assert receipts.issue(conn, key, "santos", ["signed"], NOW) == []  # not beyond the newest
        conn.execute(gate_progress.update().values(contiguous_seq=4).where(gate_progress.c.gate_id == "signed"))
        _link(conn, "signed", 4, "b" * 64)
        again = receipts.issue(conn, key, "santos", ["signed"], NOW)
    assert [(r["seq"], r["head"]) for r in again] == [(4, "b" * 64)]
    with engine.connect() as conn:
        assert conn.execute(select(chain_receipts.c.seq).order_by(chain_receipts.c.seq)).scalars().all() == [3, 4]
    engine.dispose()


def test_a_stored_receipt_reads_back_as_issued_with_the_gates_breaks_counted(db_url):
    """The row goes in by a plain driver statement: its instant, body and signature read back
    through the table's types as issued; the body counts the gate's chain breaks so far."""
    from central.ledger.schema import chain_breaks

    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    key = Ed25519PrivateKey.generate()
    at = dt.datetime(2026, 12, 1, 9, 30, 15, 123456, tzinfo=dt.timezone(dt.timedelta(hours=-3)))
    with engine.begin() as conn:
        _progress(conn, "signed", 2)
        _link(conn, "signed", 2, "c" * 64)
        for seq in (1, 2):
            conn.execute(insert(chain_breaks).values(gate_id="signed", seq_from=seq, seq_to=seq, kind="FORKED",
                                                     detail="x", event_id=None, recorded_at=NOW))
        conn.execute(insert(chain_breaks).values(gate_id="other", seq_from=1, seq_to=1, kind="FORKED",
                                                 detail="x", event_id=None, recorded_at=NOW))
        (issued,) = receipts.issue(conn, key, "santos", ["signed"], at)
    assert b'"breaks":2' in issued["body"]
    text = json.loads(issued["body"])["text"]  # a recorded break: never "íntegra" (issue 36)
    assert "íntegra" not in text and " held " not in text, text
    assert text == (f"cadeia do portão signed recebida até seq 2 com cabeça {'c' * 64}, com 2 quebra(s) "
                    f"registrada(s) / chain of gate signed received up to seq 2 with head {'c' * 64}, "
                    "2 break(s) recorded")
    with engine.connect() as conn:
        row = conn.execute(select(chain_receipts)).one()
    stored = row.issued_at if row.issued_at.tzinfo else row.issued_at.replace(tzinfo=dt.UTC)
    assert stored == at and (row.gate_id, row.seq, row.head) == ("signed", 2, "c" * 64)
    assert bytes(row.body) == issued["body"] and row.sig == issued["sig"]
    key.public_key().verify(bytes.fromhex(row.sig), bytes(row.body))
    engine.dispose()
