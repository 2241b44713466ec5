"""Ship calls the office keeps (G11 needs the whole stay, not only requisitioned periods).

``ships.csv`` columns: ship (IMO), ship_name, voyage (``long_haul|cabotage``), berth
(``berthed|anchored``), gate_id, arrival, departure (ISO 8601 with offset; departure empty while
the ship is in port). A call is keyed by (ship, arrival): importing the same call again updates it.
Every change is an ``audit_log`` row naming the actor. ``BadInput`` names the file and line (or
the form field) of a bad value; the caller rolls back, nothing is half-imported.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from central import bounds
from central.audit import ALL
from central.calls.schema import ship_calls
from central.ledger.object_ports import gate_port
from central.registry.changes import audit, utcnow
from portgate.cells import parse_aware
from portgate.errors import BadInput
from portgate.tables import iter_rows
from portgate.timeutil import PLAUSIBLE_FROM, PLAUSIBLE_UNTIL, as_utc
from wire.topics import check_id

COLUMNS = ("ship", "ship_name", "voyage", "berth", "gate_id", "arrival", "departure")
VOYAGES = ("long_haul", "cabotage")
BERTHS = ("berthed", "anchored")


@dataclasses.dataclass(frozen=True, slots=True)
class ShipCall:
    ship: str
    ship_name: str
    voyage: str
    berth: str
    gate_id: str | None
    arrival: dt.datetime
    departure: dt.datetime | None


def _when(text: str, where: str, *, optional: bool = False) -> dt.datetime | None:
    if not (text or "").strip():
        if optional:
            return None
        raise BadInput("a time is required", where=where)
    try:
        when = parse_aware(text, "time")
    except BadInput as exc:
        raise BadInput(exc.reason, where=where) from None
    if not PLAUSIBLE_FROM <= when < PLAUSIBLE_UNTIL:  # a typo such as 9999: the pay and escala bound
        raise BadInput(f"the year {when.year} is outside {PLAUSIBLE_FROM.year}..{PLAUSIBLE_UNTIL.year - 1}",
                       where=where)
    return when


def parse_time(text: str, where: str) -> dt.datetime:
    """An ISO 8601 time with offset in the years 2000..2100 (``portgate.timeutil.PLAUSIBLE_FROM``..
    ``PLAUSIBLE_UNTIL``, the escala and pay pages' range), as aware UTC; ``BadInput`` naming
    ``where`` otherwise."""
    return _when(text, where)


def parse_call(row: dict, where: str) -> ShipCall:
    """One call from a CSV row or a form (``where`` prefixes the field name in errors): the first
    bad field's ``BadInput`` (``read_call`` gives every one)."""
    call, problems = read_call(row)
    if problems:
        field, reason = next(iter(problems.items()))
        raise BadInput(reason, where=f"{where}{field}")
    return call


def read_call(row: dict, problems: dict[str, str] | None = None) -> tuple[ShipCall | None, dict[str, str]]:
    """One call from a CSV row or a form, and every bad field's English reason by field name
    (``problems``, in ``COLUMNS`` order, perhaps given with a caller's own, e.g. a form's time the
    clerk typed wrong; a field already in it is not checked again). The call is ``None`` when
    there is any problem; nothing raises for a bad value."""
    problems = dict(problems or {})

    def check(field: str, read):
        if field in problems:
            return None
        try:
            return read()
        except BadInput as exc:
            problems[field] = exc.reason
            return None

    ship = check("ship", lambda: _imo((row.get("ship") or "").strip()))
    voyage = check("voyage", lambda: _one_of("voyage", (row.get("voyage") or "").strip(), VOYAGES))
    berth = check("berth", lambda: _one_of("berth", (row.get("berth") or "").strip(), BERTHS))
    arrival = check("arrival", lambda: _when(row.get("arrival", ""), "arrival"))
    departure = check("departure", lambda: _when(row.get("departure", ""), "departure", optional=True))
    if departure is not None and arrival is not None and departure <= arrival:
        problems["departure"] = "departure is not after arrival"
    gate_id = check("gate_id", lambda: _gate((row.get("gate_id") or "").strip() or None))
    name = (row.get("ship_name") or "").strip()
    check("ship_name", lambda: bounds.check(ship_calls, {"ship_name": name}))  # refused, never cut
    problems = {k: problems[k] for k in sorted(problems, key=lambda k: _ORDER.get(k, len(_ORDER)))}
    if problems:
        return None, problems
    return ShipCall(ship, name, voyage, berth, gate_id, arrival, departure), {}


#: the order a call's problems are reported in (the first is ``parse_call``'s)
_ORDER = {k: i for i, k in enumerate(("ship", "voyage", "berth", "arrival", "departure", "gate_id", "ship_name"))}


def _imo(ship: str) -> str:
    if not ship.isdigit() or not 5 <= len(ship) <= 10:
        raise BadInput(f"ship {ship!r} is not an IMO number")
    return ship


def _one_of(field: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise BadInput(f"{field} {value!r} is not one of {'|'.join(allowed)}")
    return value


def _gate(gate_id: str | None) -> str | None:
    if gate_id is not None:
        check_id(gate_id, "gate_id")  # one MQTT topic level, as the gate's own check
    return gate_id


def save_call(session: Session, call: ShipCall, *, actor: str, now: dt.datetime | None = None) -> int:
    """Insert or update the call (ship, arrival); return its id."""
    now = now or utcnow()
    values = dataclasses.asdict(call) | {"updated_at": now, "actor": actor}
    found = session.execute(select(ship_calls.c.id).where(ship_calls.c.ship == call.ship,
                                                          ship_calls.c.arrival == call.arrival)).first()
    if found:
        session.execute(update(ship_calls).where(ship_calls.c.id == found.id).values(**values))
        call_id = int(found.id)
    else:
        call_id = int(session.execute(ship_calls.insert().values(**values)).inserted_primary_key[0])
    audit(session, actor=actor, action="ship_call.save", subject=call.ship,
          detail={"id": call_id, "arrival": call.arrival.isoformat(),
                  "departure": call.departure.isoformat() if call.departure else None,
                  "voyage": call.voyage, "gate_id": call.gate_id}, now=now,
          port=gate_port(session, call.gate_id) or ALL)  # the call's gate's port (audit_log.port, 0031)
    return call_id


def import_csv(session: Session, path: str | Path, *, actor: str, now: dt.datetime | None = None) -> int:
    """Import ``ships.csv`` (read by ``portgate.tables.iter_rows``); every bad row named ``file:line``
    (the file's base name), one line each with its every bad field (``field: reason`` joined by
    ``; ``), in one ``BadInput``, as is a file that is not UTF-8 or not CSV. Returns the count."""
    errors, calls = [], []
    for where, row in iter_rows(path, COLUMNS, known=COLUMNS):  # not UTF-8, bad CSV, missing columns: file:line
        cells = {k: (v if isinstance(v, str) else "") for k, v in row.items() if k is not None}
        call, problems = read_call(cells)
        if problems:  # the row's every bad field, on the row's one line
            errors.append(f"{where}: " + "; ".join(f"{k}: {reason}" for k, reason in problems.items()))
        else:
            calls.append(call)
    if errors:
        raise BadInput("\n".join(errors))
    for call in calls:
        save_call(session, call, actor=actor, now=now)
    return len(calls)


def set_departure(session: Session, call_id: int, departure: dt.datetime, *, actor: str,
                  now: dt.datetime | None = None) -> None:
    """Record the ship's departure. ``BadInput`` if the call is unknown or departure <= arrival."""
    now = now or utcnow()
    row = session.execute(select(ship_calls).where(ship_calls.c.id == call_id)).first()
    if row is None:
        raise BadInput(f"no ship call {call_id}", where="call")
    if departure <= as_utc(row.arrival):
        raise BadInput("departure is not after arrival", where="departure")
    session.execute(update(ship_calls).where(ship_calls.c.id == call_id)
                    .values(departure=departure, updated_at=now, actor=actor))
    audit(session, actor=actor, action="ship_call.departure", subject=row.ship,
          detail={"id": call_id, "departure": departure.isoformat()}, now=now,
          port=gate_port(session, row.gate_id) or ALL)


def list_calls(session: Session, limit: int = 500) -> list[dict]:
    """The newest calls first."""
    rows = session.execute(select(ship_calls).order_by(ship_calls.c.arrival.desc()).limit(limit))
    return [dict(r._mapping) | {"arrival": as_utc(r.arrival), "departure": as_utc(r.departure)} for r in rows]


def calls_in_port(session: Session, start: dt.datetime, end: dt.datetime) -> list[dict]:
    """The calls of ships in port at some time in [``start``, ``end``) (aware UTC, e.g. a local
    day's bounds): arrived before ``end`` and not departed by ``start``; by ship name, then IMO.
    Each a dict of the ``ship_calls`` row (``arrival``/``departure`` aware UTC or None): what the
    requisition form offers instead of a typed IMO, name and gate."""
    rows = session.execute(select(ship_calls).where(
        ship_calls.c.arrival < end, (ship_calls.c.departure.is_(None)) | (ship_calls.c.departure > start))
        .order_by(ship_calls.c.ship_name, ship_calls.c.ship, ship_calls.c.arrival))
    return [dict(r._mapping) | {"arrival": as_utc(r.arrival), "departure": as_utc(r.departure)} for r in rows]


def get_call(session: Session, call_id: int) -> dict:
    """One call by id (as ``calls_in_port`` gives it). ``BadInput`` naming ``call`` if there is none."""
    if bounds.problem(ship_calls, "id", call_id) is not None:
        raise BadInput(f"no ship call {call_id}", where="call")
    row = session.execute(select(ship_calls).where(ship_calls.c.id == call_id)).first()
    if row is None:
        raise BadInput(f"no ship call {call_id}", where="call")
    return dict(row._mapping) | {"arrival": as_utc(row.arrival), "departure": as_utc(row.departure)}
