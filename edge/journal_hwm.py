"""The high-water mark file ``<journal>.hwm`` of the gate's journal (``edge.journal``): the last
seq journaled, the highest seq sent and (signed journals) the chain's head, kept beside the file so
numbering continues after a quarantine (see the journal's module doc, "Sequence numbering and
quarantine"). A mixin of ``edge.journal.Journal``.
"""

from __future__ import annotations

import os

import structlog

log = structlog.get_logger("edge.journal")

HWM_EVERY = 64  # the .hwm file is also rewritten every this many appended seqs (cheap: no fsync)
# ... and after a mark_sent at most this often (seconds): its rename costs more than the mark's own
# UPDATE on a busy SD card; a sent seq it misses in a crash only makes lost_after lower (the office
# then counts as lost only seqs that never arrived)
HWM_SENT_EVERY_S = 1.0
SALVAGE_SLACK = 1024  # a seq salvaged from a corrupt file is believed only up to hwm + this


class HighWaterMark:
    """The ``.hwm`` file of ``edge.journal.Journal`` (see there for the attributes it shares)."""

    def _read_hwm(self, *, sent: bool = False) -> int:
        try:
            last, sent_max = self._hwm_path.read_text().split()[:2]
            return int(sent_max if sent else last)
        except (OSError, ValueError):
            return 0

    def _read_hwm_head(self) -> tuple[int, str | None]:
        """(seq, head hash) kept in the ``.hwm`` file (its first and third words), or (0, None)."""
        try:
            found = self._hwm_path.read_text().split()
            head = found[2]
            if len(head) == 64 and int(head, 16) >= 0:
                return int(found[0]), head
        except (OSError, ValueError, IndexError):
            pass
        return 0, None

    def _hwm_valid(self) -> bool:
        try:
            return len([int(w) for w in self._hwm_path.read_text().split()[:2]]) == 2
        except (OSError, ValueError):
            return False

    def _write_hwm(self, sent_seq: int | None) -> None:
        sent_max = self._sent_hwm = max(self._sent_hwm, sent_seq or 0)
        tmp = self._hwm_path.with_suffix(".hwm.tmp")
        try:
            head = f" {self._head}" if self._signer is not None else ""
            tmp.write_text(f"{self._last_seq} {sent_max}{head}\n")
            os.replace(tmp, self._hwm_path)
            self._hwm_written = self._last_seq
        except OSError as exc:  # not fatal: only used to continue numbering after a quarantine
            log.warning("journal_hwm_write_failed", error=str(exc))



def recovered_floor(salvaged: int | None, hwm: int | None) -> int:
    """The sequence number to continue after when a corrupt journal was quarantined.

    ``hwm``: the last seq of the ``.hwm`` file (None if there is no readable file); it is
    authoritative. ``salvaged``: ``max(seq)`` read best-effort from the corrupt file, which can be
    garbage (a torn page read as a huge number). With an hwm file the salvaged value is believed only
    if ``hwm <= salvaged <= hwm + SALVAGE_SLACK`` (the file lags the journal by at most ``HWM_EVERY``
    appends plus a batch); otherwise the hwm wins. Without one, a non-negative salvaged value is all
    there is. Returns >= 0.
    """
    if hwm is None:
        return max(salvaged or 0, 0)
    if salvaged is not None and hwm <= salvaged <= hwm + SALVAGE_SLACK:
        return salvaged
    return max(hwm, 0)
