"""Production reports from a terminal system (the cargo terminal's tally), on the bus.

Topic: ``portgate/v1/{port}/production/{terminal_id}/report`` (QoS 1, not retained). One message
per gang, ship, date and period: the members from the escala with whether they boarded and their
minutes of actual work, the tally per cargo class, and the gang's waits and stoppages. The office
pays it with the same validation as the CSV import (``central.production.ingest``).

Quantities, minutes and money travel as decimal strings (``"30.001"``), never JSON floats.
"""

from __future__ import annotations

import datetime as dt

import msgspec

from wire import SCHEMA_VERSION

TOPIC = "portgate/v1/{port}/production/{terminal_id}/report"


def topic(port: str, terminal_id: str) -> str:
    """The topic a terminal publishes its production reports on."""
    return TOPIC.format(port=port, terminal_id=terminal_id)


class ReportMember(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    registration: str
    role: str
    minutes_worked: str = "0"  # decimal text, minutes of actual work
    holds_worked: int = 1
    boarded: bool = True


class ReportTally(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    cargo_class: str
    quantity: str  # decimal text, in the tariff's unit (t or units), ≤ 3 decimal places


class ReportInterruption(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    kind: str  # late_start | rain | rough_water | tide | third_party | meal_worked
    minutes: str | None = None  # decimal text; or start and end
    start: dt.datetime | None = None  # aware
    end: dt.datetime | None = None


class ProductionReport(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="production_report"):
    """One gang's production on one ship, date and period."""

    message_id: str
    terminal_id: str
    gang_id: str
    ship: str  # IMO number
    date: dt.date  # local date of the period's start
    period: str  # e.g. "07-13"
    members: list[ReportMember]
    tally: list[ReportTally]
    interruptions: list[ReportInterruption] = []
    schema: int = SCHEMA_VERSION


def encode(report: ProductionReport) -> bytes:
    return msgspec.json.encode(report)


def decode(raw: bytes) -> ProductionReport:
    """Decode a report; raises ``msgspec.ValidationError`` / ``msgspec.DecodeError`` (the office's
    ingest translates them into ``BadInput``)."""
    return msgspec.json.decode(raw, type=ProductionReport)
