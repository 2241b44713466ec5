"""Gate events through the office's ingest path as the writer runs it (verdicts, checks, insert,
links, chain breaks), without a broker: the audit and link tests' ledgers."""

from __future__ import annotations

import datetime as dt

from central.ingest import chain as chain_check
from central.ingest.event_store import Accepted, batch_verdicts, check, write_batch
from central.ingest.keys import add_gate, register_public_key
from edge.journal import Journal
from edge.rules.model import Now
from portgate.config import read_secret
from wire import chain
from wire import topics
from wire.events import encode


def ingest(engine, ring, evs, now: dt.datetime, port: str = "santos") -> list:
    """Ingest ``evs`` (each must be accepted) of ``port`` in one transaction at ``now``; the breaks recorded."""
    items = [(topics.gate_events(port, e.gate_id), encode(e)) for e in evs]
    memo: dict = {}
    pre, decoded = batch_verdicts(items, port, ring, memo)
    ok = [check(t, raw, port, ring, v, memo, e) for (t, raw), v, e in zip(items, pre, decoded)]
    assert all(isinstance(v, Accepted) for v in ok), [getattr(v, "reason", "") for v in ok]
    with engine.begin() as conn:
        inserted = write_batch(conn, ok, [], now)
        return chain_check.record(conn, inserted, [], now, ok)


def two_gates(tmp_path, tap, t0: dt.datetime) -> tuple:
    """``(keys dir, g1's HMAC key, g1's signing key, g1's events, g2's events)``: gate g1's six
    Ed25519-signed events and gate g2's three HMAC-only ones (``tap(i)`` each, at ``t0``), made by
    the gates' real journals; the keys dir holds both gates' keys and g1's public key."""
    keys = tmp_path / "keys"
    hkey = read_secret(add_gate(keys, "g1"))
    hkey2 = read_secret(add_gate(keys, "g2"))
    signer = chain.new_private_key()
    register_public_key(keys, "g1", chain.public_pem(signer.public_key()))
    j = Journal(tmp_path / "j.db", port="santos", gate_id="g1", key=hkey, boot_id="b1", signer=signer)
    signed = [j.append(tap(i), now=Now(t0, i, True)) for i in range(6)]
    j.close()
    j2 = Journal(tmp_path / "j2.db", port="santos", gate_id="g2", key=hkey2, boot_id="b1")
    plain = [j2.append(tap(i), now=Now(t0, i, True)) for i in range(3)]
    j2.close()
    return keys, hkey, signer, signed, plain
