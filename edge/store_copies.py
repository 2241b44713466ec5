"""The office's copies in the gate's local store (``edge.store``): the roster of workers and cards,
the escala, the presence relayed by the office and the office's blocklist, replaced by snapshots
and changed by deltas (called by the MQTT downlink, ``edge.sync.apply_downlink``, and by
``load_csv_files``). A mixin of ``edge.store.Store``: it works on the store's connection, lock and
caches.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

import structlog

from edge.rules.model import OpenShift
from edge.store_rows import (
    _INSERT_CARD,
    _INSERT_ESCALA,
    _INSERT_OFFICE_BLOCK,
    _INSERT_OPEN,
    _INSERT_WORKER,
    _UPSERT_BLOCK,
    _UPSERT_CARD,
    _UPSERT_OFFICE_BLOCK,
    _UPSERT_VERSION,
    _UPSERT_WORKER,
    _as_records,
    _card_row,
    _dedupe,
    _escala_row,
    _iso,
    _open_row,
    _worker_row,
    escala_key,
)
from portgate.errors import StoreError
from portgate.records import Card, CardStatus, EscalaEntry, Worker, load_csv, load_roster_csv

log = structlog.get_logger("edge.store")


class OfficeCopies:
    """The office's copies of ``edge.store.Store`` (see there for the attributes they share)."""

    # -- office copies (called by the MQTT downlink and by load_csv_files) -------------------------

    def versions(self) -> dict[str, tuple[int, dt.datetime | None]]:
        """``{copy: (version, updated_at)}`` for roster, cards, escala, presence ((0, None) if never)."""
        return dict(self._versions)

    def replace_roster(self, version: int, workers: Iterable, cards: Iterable, at: dt.datetime) -> None:
        """Replace the whole roster copy (workers and cards) with a snapshot at ``version``.

        ``workers``/``cards``: ``Worker``/``Card`` records or mappings with the CSV columns. Raises
        ``BadInput`` naming every bad row; then nothing is changed (the old copy stays in force).
        """
        ws = _as_records(workers, Worker, "roster.workers")
        cs = _as_records(cards, Card, "roster.cards")
        self._write(lambda c: (
            c.execute("DELETE FROM workers"), c.execute("DELETE FROM cards"),
            ws and c.executemany(_INSERT_WORKER, [_worker_row(w) for w in ws]),
            cs and c.executemany(_INSERT_CARD, [_card_row(x) for x in cs]),
            self._settle_blocklist(c, cs),
            self._set_version(c, "roster", version, at), self._set_version(c, "cards", version, at),
        ))
        log.info("roster_replaced", version=version, workers=len(ws), cards=len(cs))

    def apply_roster_delta(
        self, from_version: int, to_version: int, workers_upsert: Iterable, cards_upsert: Iterable,
        at: dt.datetime,
    ) -> bool:
        """Apply a delta on top of ``from_version``. Returns False (and changes nothing) when the
        copy is not at ``from_version``: the caller then asks the office for a snapshot."""
        if self._versions["roster"][0] != from_version:
            log.warning("roster_delta_out_of_order", have=self._versions["roster"][0], base=from_version)
            return False
        ws = _as_records(workers_upsert, Worker, "roster_delta.workers")
        cs = _as_records(cards_upsert, Card, "roster_delta.cards")
        self._write(lambda c: (
            ws and c.executemany(_UPSERT_WORKER, [_worker_row(w) for w in ws]),
            cs and c.executemany(_UPSERT_CARD, [_card_row(x) for x in cs]),
            self._settle_blocklist(c, cs),
            self._set_version(c, "roster", to_version, at), self._set_version(c, "cards", to_version, at),
        ))
        return True

    def replace_escala(self, version: int, entries: Iterable, at: dt.datetime) -> None:
        """Replace the escala copy (all gates: other gates' entries are needed for G5). Raises
        ``BadInput`` naming every bad row; then nothing changes."""
        es = _dedupe(_as_records(entries, EscalaEntry, "escala"))
        self._write(lambda c: (
            c.execute("DELETE FROM escala"), es and c.executemany(_INSERT_ESCALA, [_escala_row(e) for e in es]),
            self._set_version(c, "escala", version, at),
        ))
        self._index_escala(es)
        mine = sum(len(v) for (g, _), v in self._by_gate.items() if g == self.gate_id)
        (log.warning if es and not mine else log.info)(
            "escala_replaced", version=version, entries=len(es), for_this_gate=mine, gate_id=self.gate_id
        )

    def apply_escala_delta(
        self, from_version: int, to_version: int, upsert: Iterable, remove: Iterable, at: dt.datetime
    ) -> bool:
        """Upsert and remove escala entries (identity: date, period, ship, post, registration).
        Returns False when the copy is not at ``from_version`` (caller asks for a snapshot)."""
        if self._versions["escala"][0] != from_version:
            return False
        ups = _as_records(upsert, EscalaEntry, "escala_delta.upsert")
        rms = _as_records(remove, EscalaEntry, "escala_delta.remove")
        current = dict(self._escala_keys)
        for e in rms:
            current.pop(escala_key(e), None)
        for e in ups:
            current[escala_key(e)] = e
        es = list(current.values())
        self._write(lambda c: (
            c.execute("DELETE FROM escala"), es and c.executemany(_INSERT_ESCALA, [_escala_row(e) for e in es]),
            self._set_version(c, "escala", to_version, at),
        ))
        self._index_escala(es)
        return True

    def block_card(self, uid: str, reason: str, at: dt.datetime) -> None:
        """Block a card confiscated at this gate at once (G10, 83.611 art. 20 §1; the gate loop
        does the same through ``apply_event``). The block stays until the office shows it knows of
        the confiscation: a roster copy shows the card as not active, or an office blocklist
        snapshot lists the card (from then on the office's blocklist governs, so a card the office
        returns is admitted again). ``at``: aware UTC. Raises ``StoreError``."""
        self._write(lambda c: c.execute(_UPSERT_BLOCK, {"uid": uid, "reason": reason, "at": _iso(at)}))
        self._blocked[uid] = reason
        log.warning("card_blocked", uid=uid, reason=reason)

    def replace_office_blocks(self, blocked: Iterable) -> None:
        """Replace the office's blocklist copy with a snapshot (downlink ``cards``, G2/G10):
        ``blocked`` holds ``wire.downlink.BlockedCard`` (uid, reason, aware UTC ``at``). A card the
        office no longer lists (returned, found) is admitted again, unless it was confiscated here
        and the office does not know yet; a card confiscated here that the office now lists is its
        block from now on. One transaction; raises ``StoreError`` (the old copy stays)."""
        rows = {b.uid: {"uid": b.uid, "reason": b.reason, "at": _iso(b.at)} for b in blocked}
        with self._lock:  # (re-entrant) no confiscation here may slip between the read and the write
            known_here = [uid for uid in self._blocked if uid in rows]
            self._write(lambda c: (
                c.execute("DELETE FROM office_blocks"),
                rows and c.executemany(_INSERT_OFFICE_BLOCK, list(rows.values())),
                known_here and c.executemany("DELETE FROM blocklist WHERE uid = ?", [(u,) for u in known_here]),
            ))
            released = [uid for uid in self._office_blocked if uid not in rows]
            self._office_blocked = {uid: r["reason"] for uid, r in rows.items()}
            for uid in known_here:
                self._blocked.pop(uid, None)
        log.info("blocklist_replaced", blocked=len(rows), released=len(released), taken_over=len(known_here))

    def add_office_blocks(self, blocked: Iterable, unblocked: Iterable[str] = ()) -> None:
        """Apply a blocklist delta to the office's copy: add ``blocked`` (``BlockedCard`` as above)
        and lift the office's blocks of the ``unblocked`` UIDs (cards returned or found; a card
        confiscated here stays blocked until the office shows it knows, see ``block_card``). One
        transaction; raises ``StoreError`` (nothing changed)."""
        rows = {b.uid: {"uid": b.uid, "reason": b.reason, "at": _iso(b.at)} for b in blocked}
        lifted = [uid for uid in unblocked if uid not in rows]
        if not rows and not lifted:
            return
        with self._lock:
            self._write(lambda c: (
                lifted and c.executemany("DELETE FROM office_blocks WHERE uid = ?", [(u,) for u in lifted]),
                rows and c.executemany(_UPSERT_OFFICE_BLOCK, list(rows.values())),
            ))
            for uid in lifted:
                if self._office_blocked.pop(uid, None) is not None:
                    log.info("card_unblocked", uid=uid, by="office")
            for r in rows.values():
                self._office_blocked[r["uid"]] = r["reason"]
                log.warning("card_blocked", uid=r["uid"], reason=r["reason"], by="office")

    def set_presence(
        self, registration: str, shift: OpenShift | None, version: int, at: dt.datetime | None = None
    ) -> None:
        """Record (or clear, with None) a worker's open shift as relayed by the office (G5)."""
        def work(c):
            c.execute("DELETE FROM open_shifts WHERE registration = ? AND origin = 'presence'", (registration,))
            if shift is not None:
                c.execute(_INSERT_OPEN, _open_row(shift, "presence"))
            self._set_version(c, "presence", version, at or (shift.admitted_at if shift else None))

        self._write(work)
        if shift is None:
            self._open.pop((registration, "presence"), None)
        else:
            self._open[(registration, "presence")] = shift

    def load_csv_files(self, workers: str | Path, cards: str | Path, escala: str | Path | None = None,
                       *, version: int = 1, at: dt.datetime | None = None) -> None:
        """Seed the copies from the data files of DESIGN.md (demo, tests, a gate without office).
        Raises ``BadInput`` naming every bad row of every file (a repeated registration or UID
        too, ``cards.csv:5: uid 04A1 repeats line 2``; a card's registration that is none, or differs
        only in letter case from a worker's: ``portgate.records.load_roster_csv``)."""
        at = at or dt.datetime.now(dt.UTC)
        roster, entries = read_seed(workers, cards, escala)
        self.replace_roster(version, *roster, at)
        if entries is not None:
            self.replace_escala(version, entries, at)

    def _write(self, work) -> None:
        with self._lock:
            self._last_card = self._last_worker = self._ahead = None
            try:
                work(self._db)
                self._db.commit()
            except sqlite3.Error as exc:
                self._db.rollback()
                raise StoreError(f"store write failed: {exc}") from exc
            except BaseException:
                self._db.rollback()
                raise

    def _set_version(self, c, name: str, version: int, at: dt.datetime | None) -> None:
        c.execute(_UPSERT_VERSION, {"name": name, "version": version, "updated_at": _iso(at)})
        self._versions[name] = (version, at)

    def _settle_blocklist(self, c, cards: Sequence[Card]) -> None:
        # Once the office's roster itself shows a card confiscated here as not active, the roster governs.
        done = [x.uid for x in cards if x.uid in self._blocked and x.status is not CardStatus.ACTIVE]
        if done:
            c.executemany("DELETE FROM blocklist WHERE uid = ?", [(u,) for u in done])
            for uid in done:
                self._blocked.pop(uid, None)


def read_seed(workers: str | Path, cards: str | Path, escala: str | Path | None = None):
    """The seed files read and checked, nothing stored: ((workers, cards), escala entries or None).
    The one reading of ``[seed]`` for ``load_csv_files`` (``edge run``) and ``edge check-config``
    (``app.checkconfig.check_gate``). Raises ``BadInput`` as ``load_csv_files`` says."""
    roster = load_roster_csv(workers, cards)
    return roster, (load_csv(escala, EscalaEntry) if escala is not None else None)
