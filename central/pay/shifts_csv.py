"""``shifts.csv``: shifts given by hand (or exported) for the pay command.

Columns: registration, function, ship, berth (berthed|anchored), period_start, period_end (ISO 8601
with offset), admit_at (ISO 8601 with offset), exit_at (ISO 8601 with offset, empty = no exit:
closed at the period end), meal_worked (true/false/1/0/yes/no/sim/não, empty = false).
A bad row raises one ``BadInput`` naming every bad row ``shifts.csv:LINE``.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from zoneinfo import ZoneInfo

from central.ledger.shifts import shift_key
from central.pay.watchmen import WatchShift
from portgate.errors import BadInput
from portgate.records import parse_aware, parse_rows

COLUMNS = ("registration", "function", "ship", "berth", "period_start", "period_end", "admit_at",
           "exit_at", "meal_worked")
_TRUE = {"true", "1", "yes", "sim", "y", "s"}
_FALSE = {"false", "0", "no", "não", "nao", "n", ""}


def _text(row: Mapping[str, str], field: str) -> str:
    value = (row.get(field) or "").strip()
    if not value:
        raise BadInput(f"{field} is required")
    return value


def shift_from_row(row: Mapping[str, str], zone: ZoneInfo) -> WatchShift:
    """One ``WatchShift`` from a CSV row; its id is built as the ledger builds it."""
    registration, ship = _text(row, "registration"), _text(row, "ship")
    berth = _text(row, "berth")
    if berth not in ("berthed", "anchored"):
        raise BadInput(f"berth {berth!r} is not one of berthed|anchored")
    start = parse_aware(row.get("period_start"), "period_start")
    end = parse_aware(row.get("period_end"), "period_end")
    if end <= start:
        raise BadInput("period_end is not after period_start")
    admit = parse_aware(row.get("admit_at"), "admit_at")
    exit_text = (row.get("exit_at") or "").strip()
    exit_at = parse_aware(exit_text, "exit_at") if exit_text else None
    if exit_at is not None and exit_at < admit:
        raise BadInput("exit_at is before admit_at")
    meal = (row.get("meal_worked") or "").strip().lower()
    if meal not in _TRUE | _FALSE:
        raise BadInput(f"meal_worked {row.get('meal_worked')!r} is not true/false")
    local_start, local_end = start.astimezone(zone), end.astimezone(zone)
    period = f"{local_start.hour:02d}-{local_end.hour:02d}"
    return WatchShift(
        shift_id=shift_key(registration, ship, local_start.date(), period),
        registration=registration, function=_text(row, "function"), ship=ship, berth=berth,
        period_start=start, period_end=end, admit_at=admit, exit_at=exit_at,
        meal_worked=meal in _TRUE,
    )


def load_shifts_csv(path: str | Path, zone: ZoneInfo, build=None) -> list:
    """Read ``shifts.csv`` into ``WatchShift`` values (or ``build(shift)`` of each, e.g. its pay
    statement, so errors of ``build`` also name the row). Raises ``BadInput`` naming each bad row
    (and a missing column)."""
    path = Path(path)

    def one(row):
        shift = shift_from_row(row, zone)
        return shift if build is None else build(shift)

    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise BadInput(f"missing column(s): {', '.join(missing)}", where=f"{path.name}:1")
            return parse_rows(list(reader), one, source=path.name)
    except FileNotFoundError as exc:
        raise BadInput("file not found", where=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise BadInput(f"not UTF-8: {exc}", where=str(path)) from exc
