"""The office's Ed25519 key and its signed receipts of each gate's chain (docs/evidence.md).

The office key lives in ``<keys_dir>/office/signing.key`` (PKCS#8 PEM, 0600; made on first use),
its public half in ``<keys_dir>/office/signing.pub``. A receipt says "the chain of gate G held up to
seq N with head H": ``body`` is compact sorted-key UTF-8 JSON ``{"kind":
"portgate-chain-receipt/1", "port", "gate_id", "seq", "head", "breaks", "issued_at", "text"}``
(``breaks``: chain breaks recorded for the gate so far) and ``sig`` the hex Ed25519 signature of
``body``. ``issue`` stores one per gate whose gapless prefix advanced (in the ingest's batch
transaction); the newest is sent back to the gate, which keeps it (edge/sync). It lives in the
ingest, which issues the receipts; the evidence bundles (``central/evidence/``) read the office key
from here.
"""

from __future__ import annotations

import datetime as dt
import json

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy.engine import Connection

from central.ledger.schema import chain_breaks, chain_receipts, event_links, gate_progress
from central.office_key import office_key  # noqa: F401  (callers import it from here too)

KIND = "portgate-chain-receipt/1"


def receipt_text(gate_id: str, seq: int, head: str, breaks: int) -> str:
    """The receipt's readable ``text``, pt-BR then English. A gate with no recorded break: "cadeia
    do portão G íntegra até seq N com cabeça H / chain of gate G held up to seq N ..."; with
    ``breaks`` > 0 recorded so far it never says "íntegra" (held): "cadeia do portão G recebida até
    seq N com cabeça H, com K quebra(s) registrada(s) / chain of gate G received up to seq N with
    head H, K break(s) recorded" (the breaks are ``chain_breaks`` rows, each named there)."""
    if not breaks:
        return (f"cadeia do portão {gate_id} íntegra até seq {seq} com cabeça {head} / "
                f"chain of gate {gate_id} held up to seq {seq} with head {head}")
    return (f"cadeia do portão {gate_id} recebida até seq {seq} com cabeça {head}, com {breaks} "
            f"quebra(s) registrada(s) / chain of gate {gate_id} received up to seq {seq} with head "
            f"{head}, {breaks} break(s) recorded")


def receipt_body(port: str, gate_id: str, seq: int, head: str, breaks: int, issued_at: dt.datetime) -> bytes:
    """The receipt's body (compact sorted-key UTF-8 JSON, module docstring); ``breaks``: the
    chain breaks recorded for the gate so far (``receipt_text`` then names them, never "íntegra")."""
    text = receipt_text(gate_id, seq, head, breaks)
    body = {"kind": KIND, "port": port, "gate_id": gate_id, "seq": seq, "head": head, "breaks": breaks,
            "issued_at": issued_at.astimezone(dt.UTC).isoformat().replace("+00:00", "Z"), "text": text}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def issue(conn: Connection, key: Ed25519PrivateKey, port: str, gate_ids, now: dt.datetime) -> list[dict]:
    """In the caller's transaction: a receipt for each of ``gate_ids`` whose gapless prefix
    (``gate_progress.contiguous_seq``) is beyond its newest receipt and whose event at that seq is
    linked (signed). Returns the receipts issued as ``{gate_id, seq, head, body, sig}``."""
    out: list[dict] = []
    qmark = conn.dialect.paramstyle == "qmark"  # SQLite; PostgreSQL's driver takes %s
    sql, insert = (_STATE, _INSERT) if qmark else (_STATE.replace("?", "%s"), _INSERT.replace("?", "%s"))
    at = _sqlite_at(now) if qmark else now
    for gate_id in sorted(set(gate_ids)):
        state = conn.exec_driver_sql(sql, (gate_id,)).first()  # (one query per gate and batch)
        if state is None:
            continue
        contiguous, last, head, n_breaks = state
        if not contiguous or contiguous <= (last or 0) or head is None:
            continue
        head = bytes(head).hex()  # (event_links keeps the 32 bytes)
        body = receipt_body(port, gate_id, contiguous, head, n_breaks, now)
        row = {"gate_id": gate_id, "seq": contiguous, "head": head, "issued_at": now, "body": body,
               "sig": key.sign(body).hex()}
        conn.exec_driver_sql(insert, (gate_id, contiguous, head, at, body, row["sig"]))
        out.append(row)
    return out


# A gate's gapless prefix, its newest receipt's seq, the hash of its event at that prefix and the
# number of its chain breaks so far; plain driver statements (one query per gate and batch, and
# one insert per receipt: the ingest's per-batch cost).
_STATE = (
    f"SELECT p.contiguous_seq, (SELECT max(r.seq) FROM {chain_receipts.name} r WHERE r.gate_id = p.gate_id), "
    f"(SELECT l.hash FROM {event_links.name} l WHERE l.gate_id = p.gate_id AND l.seq = p.contiguous_seq), "
    f"(SELECT count(*) FROM {chain_breaks.name} b WHERE b.gate_id = p.gate_id) "
    f"FROM {gate_progress.name} p WHERE p.gate_id = ?"
)
_INSERT = f"INSERT INTO {chain_receipts.name} (gate_id, seq, head, issued_at, body, sig) VALUES (?, ?, ?, ?, ?, ?)"


def _sqlite_at(value: dt.datetime) -> str:
    """``issued_at`` as SQLAlchemy's SQLite ``DateTime`` stores it (``YYYY-MM-DD HH:MM:SS.ffffff``, UTC)."""
    return value.astimezone(dt.UTC).isoformat(" ", "microseconds")[:26]
