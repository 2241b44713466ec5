"""The signed chain of the gate's journal (``edge.journal``, docs/evidence.md): key events and key
rollover, the chain's head, the office's receipts of the chain and the newest issue number of each
signed downlink topic, kept across restarts. A mixin of ``edge.journal.Journal``.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import structlog

from edge.journal_batch import PRIORITY_HIGH
from edge.rules.model import Now
from wire import chain
from wire import events as wire

log = structlog.get_logger("edge.journal")

_decoder = msgspec.json.Decoder(wire.Event)


class JournalChain:
    """The signed chain of ``edge.journal.Journal`` (see there for the attributes it shares)."""

    def rotate_key(self, new_signer, *, now: Now) -> wire.Event:
        """Key rollover: append a ``SIGNING_KEY`` event naming ``new_signer``'s public key, signed
        by the current key, then sign with the new key. Raises ``StoreError`` as ``append``."""
        old = self._signer
        event = self._append_key_event(new_signer, old, now)
        self._signer = new_signer
        self._set_meta("signing_key", chain.public_raw(new_signer.public_key()))
        return event

    def keep_receipt(self, raw: bytes) -> bool:
        """Keep the office's receipt of this gate's chain (``{"body": <JSON text>, "sig": hex}``,
        central/ingest/receipts.py) in ``<journal>.receipt`` if it is for this gate, for a seq this
        journal has reached, and not older than the one kept. Returns True if kept; a malformed
        receipt is logged and ignored (the office sends the next one)."""
        try:
            msg = msgspec.json.decode(raw)
            body = msgspec.json.decode(msg["body"].encode("utf-8"))
            seq, gate, _sig = int(body["seq"]), body["gate_id"], str(msg["sig"])
        except (msgspec.DecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
            log.warning("journal_receipt_rejected", error=str(exc))
            return False
        kept = self.receipt()
        if gate != self.gate_id or seq > self._last_seq or (kept is not None and kept["seq"] > seq):
            log.warning("journal_receipt_rejected", gate_id=gate, seq=seq, last_seq=self._last_seq)
            return False
        path = Path(str(self.path) + ".receipt")
        tmp = path.with_suffix(".receipt.tmp")
        try:
            tmp.write_bytes(raw)
            os.replace(tmp, path)
        except OSError as exc:
            log.warning("journal_receipt_write_failed", error=str(exc))
            return False
        return True

    def downlink_issued(self) -> dict[str, int]:
        """Per downlink topic, the newest office issue number applied (``wire.signed_downlink.Forward``),
        kept across restarts so an older signed message replayed after one is still refused."""
        try:
            value = msgspec.json.decode((self._meta("downlink_issued") or "{}").encode(), type=dict[str, int])
        except (msgspec.DecodeError, msgspec.ValidationError):
            return {}
        return value

    def keep_downlink_issued(self, newest: dict[str, int]) -> None:
        """Store ``newest`` (topic -> issue number); ``StoreError`` if the journal cannot be written."""
        with self._lock:
            self._set_meta("downlink_issued", msgspec.json.encode(newest).decode())

    def receipt(self) -> dict | None:
        """The newest receipt kept: ``{"seq", "head", "body", "sig"}``, or None."""
        try:
            msg = msgspec.json.decode(Path(str(self.path) + ".receipt").read_bytes())
            body = msgspec.json.decode(msg["body"].encode("utf-8"))
            return {"seq": int(body["seq"]), "head": body["head"], "body": msg["body"], "sig": msg["sig"]}
        except (OSError, msgspec.DecodeError, KeyError, TypeError, ValueError):
            return None

    def head(self) -> tuple[int, str]:
        """``(seq, hash)`` of the newest event (``(0, GENESIS)`` for an empty chain)."""
        with self._lock:
            return self._last_seq, self._head

    def _key_event(self, signer, known_key: str | None, clock) -> None:
        """At start: the journal is unsigned (a gate migrated to signing) or was signed with
        another key whose private half is gone: the new key is named and signs its own event."""
        self._append_key_event(signer, None, _now(clock), previous=known_key)
        self._signer = signer

    def _append_key_event(self, new_signer, old_signer, now: Now, previous: str | None = None):
        from wire.events import AlertPayload

        pub = new_signer.public_key()
        if old_signer is not None:
            previous = chain.fingerprint(old_signer.public_key())
        elif previous is not None:
            previous = chain.fingerprint(chain.load_public(previous)) + " (old private key unavailable)"
        detail = (f"public_key={chain.public_raw(pub)} fingerprint={chain.fingerprint(pub)} "
                  f"previous={previous or 'none'}")
        self._signer = old_signer or new_signer
        return self.append(AlertPayload(code=chain.KEY_EVENT, detail=detail), now=now, priority=PRIORITY_HIGH)

    def _hash_of(self, seq: int) -> str:
        body = self._conn.execute("SELECT body FROM journal WHERE seq = ?", (seq,)).fetchone()[0]
        try:
            return chain.event_hash(_decoder.decode(body))
        except msgspec.DecodeError:
            return chain.GENESIS


def _now(clock) -> Now:
    if clock is not None:
        return clock.now()
    from edge.clock import SystemClock

    return SystemClock().now()
