"""Downlink snapshots (roster, cards/blocklist, escala) built from the CSV data files
(``portgate.records``), published through ``central.broadcast.publisher`` — used by ``portgate
central publish``, by the ingest when a gate asks for a snapshot, and by the demo. The registry
(``central.broadcast.registry_source``) publishes the same messages from its versioned tables.

Version of a CSV-built snapshot: unless given, the newest modification time of its files in
milliseconds since the epoch (monotonic as long as files are only replaced by newer ones).
The roster carries the union inspectors' names from ``inspectors.csv`` beside ``cards.csv``
(``registration,name``; optional). Snapshots are published retained at QoS 1, so a gate that connects later gets the newest at once.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import msgspec
import paho.mqtt.client as mqtt

from central.broadcast import blocklist
from central.broadcast.publisher import Publisher
from portgate.errors import BadInput
from portgate.record_rows import line_of
from portgate.records import Card, CardStatus, EscalaEntry, load_csv, load_roster_csv
from central.registry.import_checks import text_problems
from portgate.registration import case_clashes
from portgate.tables import read_rows
from wire.downlink import BlockedCard, CardsSnapshot, EscalaSnapshot, InspectorRow, RosterSnapshot


def _version(*paths) -> int:
    return max(int(os.stat(p).st_mtime_ns // 1_000_000) for p in paths if p)


INSPECTORS_CSV = "inspectors.csv"  # beside cards.csv: registration,name of the union inspectors


def inspectors_csv(cards_csv) -> list[InspectorRow]:
    """The union inspectors' names (issue 33) from ``inspectors.csv`` beside ``cards_csv``
    (columns ``registration,name``), or none when there is no such file. Raises ``BadInput``
    naming the file and line of a bad row (a registration that is not an id or repeats an earlier
    line's exactly, a name over 255 or starting with a formula character, as the registry import
    refuses it: ``central.registry.import_checks.text_problems``)."""
    path = Path(cards_csv).with_name(INSPECTORS_CSV)
    if not path.exists():
        return []
    out, errors, placed, lines = [], [], [], {}
    for where, row in read_rows(path, ("registration", "name"), known=("registration", "name")):
        reg, name = (row.get("registration") or "").strip(), (row.get("name") or "").strip()
        problem = ("; ".join(text_problems(reg, name)) or None) if reg else "registration is required"
        if problem is None and reg in lines:  # one name per inspector: a second would be dropped unseen
            problem = f"registration {reg} repeats line {lines[reg]}"
        if problem is None and len(reg) > 64:
            problem = f"registration is longer than 64 characters ({len(reg)})"
        if problem is None and len(name) > 255:
            problem = "name is longer than 255 characters"
        if problem is not None:
            errors.append(f"{where}: {problem}")
            continue
        placed.append((where, reg))
        lines[reg] = line_of(where)
        out.append(InspectorRow(registration=reg, name=name))
    errors = sorted(errors + case_clashes(placed, ()), key=line_of)
    if errors:
        raise BadInput("\n".join(errors))
    return out


def roster_snapshot(workers_csv, cards_csv, *, version: int | None = None, at: dt.datetime) -> RosterSnapshot:
    """Workers and cards from CSV, and the union inspectors' names (``inspectors_csv``). Raises
    ``BadInput`` naming bad rows."""
    workers, cards = load_roster_csv(workers_csv, cards_csv)  # a card's registration by the registry's rule
    return RosterSnapshot(
        version=version if version is not None else _version(workers_csv, cards_csv),
        at=at,
        workers=workers,
        cards=cards,
        inspectors=inspectors_csv(cards_csv),
    )


def cards_snapshot(cards_csv, *, version: int | None = None, at: dt.datetime) -> CardsSnapshot:
    """The blocklist: every card whose status is not active (confiscated, lost, replaced)."""
    cards = load_csv(cards_csv, Card)
    return CardsSnapshot(
        version=version if version is not None else _version(cards_csv),
        at=at,
        blocked=[BlockedCard(uid=c.uid, reason=c.status.value, at=at) for c in cards if c.status != CardStatus.ACTIVE],
    )


def escala_snapshot(escala_csv, *, version: int | None = None, at: dt.datetime) -> EscalaSnapshot:
    """The dispatch roster from ``escala.csv``."""
    return EscalaSnapshot(
        version=version if version is not None else _version(escala_csv),
        at=at,
        entries=load_csv(escala_csv, EscalaEntry),
    )


class CsvSnapshots:
    """Builds snapshots of each kind from configured CSV files (None where not configured)."""

    def __init__(self, workers_csv=None, cards_csv=None, escala_csv=None) -> None:
        self.workers_csv, self.cards_csv, self.escala_csv = workers_csv, cards_csv, escala_csv

    def snapshot(self, kind: str, at: dt.datetime):
        if kind == "roster" and self.workers_csv and self.cards_csv:
            return roster_snapshot(self.workers_csv, self.cards_csv, at=at)
        if kind == "cards" and self.cards_csv:
            return cards_snapshot(self.cards_csv, at=at)
        if kind == "escala" and self.escala_csv:
            return escala_snapshot(self.escala_csv, at=at)
        return None


def publish_snapshot(client: mqtt.Client, port: str, kind: str, message, *, timeout: float = 10.0,
                     signer=None) -> None:
    """Publish ``message`` retained at QoS 1 on the ``kind`` snapshot topic and wait for the PUBACK.

    Raises ``BrokerUnavailable`` if the broker did not acknowledge it within ``timeout`` seconds or
    the connection was lost (the gates did not get it: publish again). A PUBACK with a failure
    reason (e.g. not authorised) is the caller's to see (``on_publish``)."""
    Publisher(client, port, signer).send(kind, "snapshot", message, wait=timeout)


def publish_files(client: mqtt.Client, port: str, *, workers=None, cards=None, escala=None,
                  version: int | None = None, at: dt.datetime | None = None, ledger=None,
                  signer=None) -> dict[str, int]:
    """Publish every snapshot the given files allow; return kind -> version published.

    ``ledger``: the office database's SQLAlchemy engine. The blocklist snapshot then also holds
    the cards confiscated at the gates (``central.broadcast.blocklist.snapshot``, the same list and
    version the ingest publishes). A gate replaces its copy of the office's blocklist with each
    snapshot, so without it those cards would be admitted again. Raises ``BadInput`` (bad CSV rows)
    and ``SQLAlchemyError`` (database)."""
    at = at or dt.datetime.now(dt.UTC)
    done: dict[str, int] = {}
    source = CsvSnapshots(workers, cards, escala)
    for kind in ("roster", "cards", "escala"):
        msg = source.snapshot(kind, at)
        if msg is not None and kind == "cards" and ledger is not None:
            with ledger.connect() as conn:
                msg = blocklist.snapshot(conn, at, msg)
        if msg is not None:
            if version is not None:
                msg = msgspec.structs.replace(msg, version=version)
            publish_snapshot(client, port, kind, msg, signer=signer)
            done[kind] = msg.version
    return done


def check_files(*, workers=None, cards=None, escala=None) -> None:
    """Build every snapshot the given files allow and drop it: raises ``BadInput`` naming bad rows,
    so ``central publish`` refuses bad files before it connects to the broker."""
    source = CsvSnapshots(workers, cards, escala)
    for kind in ("roster", "cards", "escala"):
        source.snapshot(kind, dt.datetime.now(dt.UTC))


def paths_exist(*paths) -> bool:
    return all(Path(p).exists() for p in paths if p)
