"""Ingest a production report arriving on the bus (``wire.production``): decode it, build the same
rows the CSV files give, validate them with the same row builders (``csvio``), pay the gang and
store it in one transaction. A bad message raises ``BadInput`` naming the message and the field
(``message m1 tally[2]: quantity '-1' must not be negative``); the caller dead-letters it.
"""

from __future__ import annotations

import datetime as dt

import msgspec
from sqlalchemy.engine import Engine

from central.production import csvio
from central.production.engine import pay_gang
from central.production.fromledger import ledger_checks, noted
from central.production.model import GangResult, GangWork, TariffTable
from central.production.rulebook import Rulebook
from central.production.store import import_results
from portgate.errors import BadInput
from portgate.timeutil import iso, zone
from wire.production import ProductionReport, decode


def work_from_message(raw: bytes, *, tz: str = "America/Sao_Paulo") -> GangWork:
    """Decode ``raw`` and build the gang's ``GangWork`` exactly as the CSV path would.

    Raises ``BadInput`` (where = ``message``) for malformed JSON, a wrong shape, or bad rows."""
    try:
        report: ProductionReport = decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise BadInput(f"malformed production report: {exc}", where="message") from exc
    tag = f"message {report.message_id}"
    head = {"gang_id": report.gang_id, "ship": report.ship, "date": report.date.isoformat(), "period": report.period}
    errors = []
    parts = {}
    jobs = {
        "members": ([(f"{tag} members[{i}]", {"gang_id": report.gang_id, "registration": m.registration,
                      "role": m.role, "holds_worked": str(m.holds_worked), "boarded": "yes" if m.boarded else "no",
                      "minutes_worked": m.minutes_worked}) for i, m in enumerate(report.members)],
                    csvio.member_from_row),
        "tally": ([(f"{tag} tally[{i}]", dict(head, cargo_class=t.cargo_class, quantity=t.quantity))
                   for i, t in enumerate(report.tally)], csvio.tally_from_row),
        "interruptions": ([(f"{tag} interruptions[{i}]", {
            "gang_id": report.gang_id, "kind": s.kind, "minutes": s.minutes or "",
            "start": iso(s.start) if s.start and s.start.tzinfo else (s.start.isoformat() if s.start else ""),
            "end": iso(s.end) if s.end and s.end.tzinfo else (s.end.isoformat() if s.end else "")})
            for i, s in enumerate(report.interruptions)], csvio.interruption_from_row),
    }
    for name, (rows, build) in jobs.items():
        try:
            parts[name] = csvio.build_rows(rows, build)
        except BadInput as exc:
            errors.append(str(exc))
    if not report.tally:
        errors.append(f"{tag}: tally is empty (send quantity 0 if the gang moved nothing)")
    if errors:
        raise BadInput("\n".join(errors))
    works = csvio.assemble(parts["members"], parts["tally"], parts["interruptions"], tz=tz)
    return works[0]


def ingest_report(raw: bytes, engine: Engine, rulebook: Rulebook, tariffs: TariffTable, *,
                  received_at: dt.datetime, tz: str = "America/Sao_Paulo") -> GangResult:
    """Pay the gang of one bus message and store it (one transaction); the members' minutes come
    from the ledger's gate taps when it holds them (``central.production.gate``); a member also in a gang
    already imported on another ship in an overlapping period is flagged DOUBLE_ASSIGNMENT on both
    (R10). Raises ``BadInput`` for a
    bad message or a gang already imported (dead-letter it), ``StoreError`` for a database failure
    (do not acknowledge; it is redelivered)."""
    work = work_from_message(raw, tz=tz)
    checks = ledger_checks(engine, [work], zone(tz, key="tz"))  # gate minutes; R10 on the ledger
    [work] = checks.works
    result = noted(pay_gang(work, rulebook, tariffs), checks.notes.get(work.gang_id, ()))
    message_id = decode(raw).message_id
    import_results(engine, [(work, result)], imported_at=received_at, source=f"bus:{message_id}",
                   on_stored=checks.on_stored)
    return result
