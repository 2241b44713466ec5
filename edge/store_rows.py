"""Rows of the gate's local store (``edge.store``): how a record becomes a row of ``edge.store_schema``
and back (ISO 8601 texts, dispatches as JSON), the records a copy accepts (records or mappings,
validated), and the SQL the office's copies are written with.

Shared by the store's parts (``edge.store``, ``edge.store_copies``, ``edge.store_apply``) and by
nothing else: the names stay private to the store.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping

from edge import store_schema as t
from edge.rules.model import OpenShift
from portgate.errors import BadInput
from portgate.records import COLUMNS, Card, EscalaEntry, Worker, parse_rows


def _iso(value: dt.datetime | None) -> str | None:
    return None if value is None else value.astimezone(dt.UTC).isoformat()


def _dt(text: str | None) -> dt.datetime | None:
    return None if text is None else dt.datetime.fromisoformat(text)


def _d(text: str | None) -> dt.date | None:
    return None if not text else dt.date.fromisoformat(text)


def _as_records(items: Iterable, record: type, source: str) -> list:
    """Accept records or mappings (rows from a CSV or a decoded JSON message); rows are validated
    with the record's ``from_row`` and every bad row is named in one ``BadInput``."""
    items = list(items)
    rows = [i for i in items if not isinstance(i, record)]
    if not rows:
        return items
    if any(not isinstance(r, Mapping) for r in rows):
        raise BadInput(f"{source}: expected {record.__name__} records or mappings")
    required = [c for c in COLUMNS[record] if c in _REQUIRED[record]]
    text_rows = [{k: ("" if v is None else str(v)) for k, v in r.items()} for r in rows]
    parsed = iter(parse_rows(text_rows, record.from_row, source=source, required=required, first_line=1))
    return [i if isinstance(i, record) else next(parsed) for i in items]


_REQUIRED = {
    Worker: {"registration", "name", "category", "status"},
    Card: {"uid", "kind", "registration", "status"},
    EscalaEntry: set(COLUMNS[EscalaEntry]) - {"ship_name"},
}


_INSERT_WORKER = t.workers.insert_sql()
_UPSERT_WORKER = t.workers.insert_sql(replace=True)
_INSERT_CARD = t.cards.insert_sql()
_UPSERT_CARD = t.cards.insert_sql(replace=True)
_INSERT_ESCALA = t.escala.insert_sql(skip=("id",))
_UPSERT_BLOCK = t.blocklist.insert_sql(replace=True)
_INSERT_OFFICE_BLOCK = t.office_blocks.insert_sql()
_UPSERT_OFFICE_BLOCK = t.office_blocks.insert_sql(replace=True)
_INSERT_OPEN = t.open_shifts.insert_sql()
_UPSERT_VERSION = t.versions.insert_sql(replace=True)


def _worker_row(w: Worker) -> dict:
    return {
        "registration": w.registration, "name": w.name, "category": w.category,
        "status": w.status.value, "suspended_from": w.suspended_from and w.suspended_from.isoformat(),
        "suspended_until": w.suspended_until and w.suspended_until.isoformat(),
        "health_exam_date": w.health_exam_date and w.health_exam_date.isoformat(),
        "booklet_revalidated_year": w.booklet_revalidated_year, "rotation_number": w.rotation_number,
    }


def _card_row(c: Card) -> dict:
    return {"uid": c.uid, "kind": c.kind.value, "registration": c.registration, "status": c.status.value}


def _escala_row(e: EscalaEntry) -> dict:
    return {
        "date": e.date.isoformat(), "period": e.period, "ship": e.ship, "ship_name": e.ship_name,
        "voyage": e.voyage.value, "berth": e.berth.value, "gate_id": e.gate_id, "post": e.post,
        "function": e.function, "registration": e.registration,
    }


def _escala_from_row(r: Mapping) -> EscalaEntry:
    return EscalaEntry.from_row({k: str(v) for k, v in r.items() if k != "id"})


def escala_key(e: EscalaEntry) -> tuple:
    """The identity of an escala entry (one worker on one post of one ship in one period)."""
    return (e.date, e.period, e.ship, e.post, e.registration)


def _dispatch_json(e: EscalaEntry | None) -> str | None:
    return None if e is None else json.dumps(_escala_row(e))


def _dispatch_from_json(text: str | None) -> EscalaEntry | None:
    return None if not text else _escala_from_row(json.loads(text))


def _open_row(s: OpenShift, origin: str) -> dict:
    return {
        "registration": s.registration, "origin": origin, "gate_id": s.gate_id, "ship": s.ship,
        "admitted_at": _iso(s.admitted_at), "dispatch": _dispatch_json(s.dispatch),
    }


def _dedupe(entries: list[EscalaEntry]) -> list[EscalaEntry]:
    return list({escala_key(e): e for e in entries}.values())
