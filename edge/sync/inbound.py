"""What the office sends the gate: signed downlinks, commands and chain receipts.

A mixin of ``edge.sync.service.Sync`` (see there for the attributes it shares); the pump hands it
each message paho received (``_message``), on the pump's thread.

- Receipts: the office's signed receipt of the chain (``.../receipt``) is kept in the journal only
  if it verifies against the office public key (``office_public_key_file`` in gate.toml); a bad or
  unverifiable one is one ``receipt.rejected`` log line and the one held before stays.
- Signed downlinks (issue 36): with the office key, a command or downlink is applied only if
  signed by the office for its topic and newer than the newest applied there (kept in the
  journal); else ``downlink.refused`` and a ``DOWNLINK_REFUSED`` alert event (``_signed``).
- Commands: ``ReplayCommand(seq_from, seq_to)`` on ``.../cmd`` republishes ``events_between``;
  ``EnrolCommand`` (start or cancel enrol mode, issue 34) goes to ``on_enrol`` (the gate loop).
- Photos: ``down/photos/{snapshot,delta,file}`` go to ``edge.sync.photos.PhotoDownlink`` (files on
  disk in the state directory for the watchman's screen; a refused file is a ``downlink.rejected``).
- Downlinks: ``portgate/v1/{port}/down/#`` applied by ``edge.sync.apply_downlink.Downlink``; a delta that
  does not follow the held version makes the gate publish a ``SnapshotRequest`` to the office. A
  request the broker routed to nobody (the office not subscribed, e.g. just after a broker restart)
  is published again after the current unrouted pause (``edge.sync.uplink``).
"""

from __future__ import annotations

import datetime as dt
import time

import structlog

from portgate.errors import BadInput, StoreError
from wire import downlink as dl
from wire import topics
from wire.events import AlertPayload, encode
from wire.receipts import verify_receipt
from wire.signed_downlink import DownlinkRefused, body_of, open_envelope

log = structlog.get_logger("edge.sync")


class SyncInbound:
    """The office's messages to ``edge.sync.service.Sync``."""

    def _signed(self, topic: str, payload: bytes) -> bytes | None:
        """The body of a downlink or command when the gate holds the office key (``office_key``):
        only one signed by it for this topic and newer than any applied on it (``wire.signed_downlink``);
        ``None`` for the retained copy again. A refused one is not applied: one ``downlink.refused``
        error line and a ``DOWNLINK_REFUSED`` alert event for the office (once a minute per
        reason and topic). Without the office key the body is taken unverified (a test rig, or a
        gate not yet given the key: docs/operations.md "Downlink signing keys")."""
        if self.office_key is None:
            return body_of(payload)  # unverified, as an unsigned one would be
        try:
            issued, body = open_envelope(payload, self._office_keys, topic)
            if topic.endswith("/down/presence/delta"):
                # several ingest workers (processes) relay presence: their deltas may cross on the
                # way; each carries the ledger's version, which the downlink keeps moving forward
                return body
            if not self._forward.check(topic, issued):
                return None
            keep = getattr(self.journal, "keep_downlink_issued", None)
            if keep is not None:
                try:
                    keep(self._forward.newest)
                except StoreError as err:  # a full disk: applied; remembered in memory until the restart
                    log.warning("downlink.issued_not_kept", gate_id=self.gate_id, error=str(err))
            return body
        except DownlinkRefused as exc:
            self.stats["downlink_refused"] += 1
            log.error("downlink.refused", gate_id=self.gate_id, topic=topic, reason=exc.reason, error=str(exc)[:300])
            mark = (exc.reason, topic)
            now = time.monotonic()
            if now - self._refusal_alerted.get(mark, -1e9) >= 60.0:
                self._refusal_alerted[mark] = now
                try:
                    self.journal.append(AlertPayload(code="DOWNLINK_REFUSED", detail=f"{exc.reason}: {topic}"[:500]),
                                        now=self.now(), priority=1)
                    self.core.reread()
                except StoreError as err:
                    log.warning("downlink.refusal_not_journaled", gate_id=self.gate_id, error=str(err))
            return None

    def _message(self, topic: str, payload: bytes) -> None:
        if topic != self.t_receipt:
            payload = self._signed(topic, payload)
            if payload is None:
                return
        try:
            if topic == self.t_cmd:
                self._command(dl.decode(payload, dl.Command, where=topic))
            elif topic == self.t_receipt:
                self._receipt(payload)
            elif self.downlink is not None or self.photos is not None:
                _port, kind, form = topics.parse_downlink_topic(topic)
                msg = dl.decode_downlink(payload, kind, form, where=topic)
                if kind == "photos":
                    if self.photos is None:
                        return
                    request = self.photos.apply(form, msg, dt.datetime.now(dt.UTC))
                elif self.downlink is None:
                    return
                else:
                    request = self.downlink.apply(kind, form, msg, dt.datetime.now(dt.UTC))
                if request is not None:
                    self.core.request(dl.encode(request))
                    log.info("downlink.snapshot_requested", gate_id=self.gate_id, kind=kind)
        except BadInput as exc:
            self.stats["bad_downlink"] += 1
            log.warning("downlink.rejected", gate_id=self.gate_id, topic=topic, error=str(exc))

    def _receipt(self, payload: bytes) -> None:
        """Keep the office's receipt only if it verifies against ``office_key`` and names this gate
        (``wire.receipts.verify_receipt``); otherwise one ``receipt.rejected`` line and the receipt
        held before stays."""
        try:
            said = verify_receipt(payload, self.office_key, port=self.port, gate_id=self.gate_id)
        except BadInput as exc:
            self.stats["receipts_rejected"] += 1
            held = getattr(self.journal, "receipt", lambda: None)()
            log.warning("receipt.rejected", gate_id=self.gate_id, error=str(exc),
                        kept_seq=held["seq"] if held else None)
            return
        kept = bool(self.journal.keep_receipt(payload))
        self.stats["receipts_kept"] += kept
        if kept:
            log.info("receipt.kept", gate_id=self.gate_id, seq=said.seq, head=said.head)

    def _command(self, cmd) -> None:
        if isinstance(cmd, dl.EnrolCommand):  # issue 34: the gate loop applies it between reads
            log.info("downlink.enrol", gate_id=self.gate_id, session=cmd.session, action=cmd.action)
            if self.on_enrol is not None:
                self.on_enrol(cmd)
            return
        if isinstance(cmd, dl.ReplayCommand):
            events = self.journal.events_between(cmd.seq_from, cmd.seq_to)
            self.core.replay((e.seq, encode(e)) for e in events)
            log.info("uplink.replay", gate_id=self.gate_id, seq_from=cmd.seq_from, seq_to=cmd.seq_to, n=len(events))
