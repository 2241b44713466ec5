"""Billing to the shipowner, beside the workers' statements (pure: no clock, no I/O).

- P8 (83.611 art. 27 sole paragraph): the transport of a watchman from the quay to a ship at
  anchorage and back is the shipowner's cost. Reading (RULES.md P8): one round trip per continuous
  stay aboard, from the admit to the exit; an extension into the next period, or a new shift on the
  same ship that starts no more than ``STAY_GAP`` after the previous one ended, is the same stay.
  Each stay gives one billing line at the rulebook's ``anchorage_transport_fare`` (BRL per round
  trip); with no fare set, billing a trip is refused (``FareNotSet``), never billed at 0.00.
- E7 (DL 2.032 art. 16) and C5 (DL 3.844 art. 8): the production engine's billing lines of a gang
  (travel wages and transport; art. 4 §2 waits and meal hours plus 10%), stored with the gang.

``billing_statements`` groups lines per shipowner (a ship → shipowner table from the office; a ship
it does not list is billed under ``navio IMO``) over a period; a statement's total is the sum of
its printed lines (RULES.md rounding).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping
from decimal import Decimal

from central.pay.lines import money_sum, to_money
from central.pay.rulebook import Rulebook
from portgate.errors import BadInput

P8_ARTICLE = "83.611 art. 27 parágrafo único"
#: P8 reading: a watchman admitted again on the same anchored ship at most this long after his
#: previous shift there ended never went ashore (no launch round trip is made in 10 minutes).
STAY_GAP = dt.timedelta(minutes=10)
FARE_SETTING = "anchorage_transport_fare"


class FareNotSet(BadInput):
    """P8: trips to bill and the rulebook sets no ``anchorage_transport_fare``. The caller stops
    and tells the user to set the port's fare (0.00 explicitly if the transport is free)."""


@dataclasses.dataclass(frozen=True, slots=True)
class AnchoredShift:
    """A paid watchman's shift on a ship at anchorage, as P8 needs it. ``start``: the admit, or the
    period start when none was recorded; ``end``: the exit, or the period end (aware UTC)."""

    shift_id: str
    registration: str
    ship: str
    work_day: dt.date
    period: str
    start: dt.datetime
    end: dt.datetime


@dataclasses.dataclass(frozen=True, slots=True)
class BillingLine:
    """One line billed to a shipowner. ``source``: ``watchmen`` (P8) or ``production`` (E7, C5);
    ``ref``: the shift id or gang id it comes from; ``amount`` BRL, rounded half up to the cent."""

    billing_id: str
    source: str
    ship: str
    work_day: dt.date
    ref: str
    registration: str | None
    rule: str
    article: str
    description: str
    amount: Decimal

    def __post_init__(self) -> None:
        object.__setattr__(self, "amount", to_money(self.amount))


@dataclasses.dataclass(frozen=True, slots=True)
class BillingStatement:
    """What one shipowner owes for [date_from, date_to]: its lines and their total."""

    shipowner: str
    date_from: dt.date
    date_to: dt.date
    lines: tuple[BillingLine, ...]
    total: Decimal


def stays(shifts: Iterable[AnchoredShift]) -> list[tuple[AnchoredShift, ...]]:
    """P8 reading: ``shifts`` grouped into continuous stays aboard, per registration and ship in
    start order: a shift that starts no later than ``STAY_GAP`` after the end of the stay so far
    continues it (an extension into the next period, a re-admit at the period change). Pure."""
    ordered = sorted(shifts, key=lambda x: (x.registration, x.ship, x.start, x.shift_id))
    out: list[list[AnchoredShift]] = []
    end: dt.datetime | None = None
    for shift in ordered:
        last = out[-1][-1] if out else None
        if (last is not None and (last.registration, last.ship) == (shift.registration, shift.ship)
                and end is not None and shift.start <= end + STAY_GAP):
            out[-1].append(shift)
            end = max(end, shift.end)
            continue
        out.append([shift])
        end = shift.end
    return [tuple(stay) for stay in out]


def watchmen_billing(shifts: Iterable[AnchoredShift], rulebook: Rulebook) -> list[BillingLine]:
    """P8 (83.611 art. 27 sole paragraph): one billing line per continuous stay (``stays``) at the
    rulebook's ``anchorage_transport_fare`` (BRL per round trip); the line's id and ``ref`` are
    the stay's first shift, its description names every period of the stay.

    Raises ``FareNotSet`` (naming the setting and the rulebook) when there is a stay to bill and
    the fare is not set; no shifts give no lines whatever the fare."""
    found = stays(shifts)
    if not found:
        return []
    fare = rulebook.anchorage_transport_fare
    if fare is None:
        raise FareNotSet(
            f"P8: {len(found)} round trip(s) quay ↔ ship at anchorage to bill, but the rulebook "
            f"{rulebook.id!r} does not set {FARE_SETTING}: set the port's fare per round trip (BRL) "
            f"in the rulebook, {FARE_SETTING} = \"0.00\" if the transport is free (RULES.md P8)")
    out = []
    for stay in found:
        first = stay[0]
        periods = " + ".join(dict.fromkeys(x.period for x in stay))
        out.append(BillingLine(
            billing_id=f"P8:{first.shift_id}", source="watchmen", ship=first.ship,
            work_day=first.work_day, ref=first.shift_id, registration=first.registration, rule="P8",
            article=P8_ARTICLE,
            description=(f"Transporte cais ↔ navio ao largo {first.ship} (ida e volta), vigia "
                         f"{first.registration}, período {periods}"),
            amount=fare))
    return out


def billing_statements(lines: Iterable[BillingLine], shipowners: Mapping[str, str],
                       date_from: dt.date, date_to: dt.date) -> list[BillingStatement]:
    """Group ``lines`` of work days [date_from, date_to] per shipowner (``shipowners`` maps ship →
    name; an unlisted ship is billed as ``navio <ship>``), lines by day, ship and reference;
    statements by shipowner name."""
    groups: dict[str, list[BillingLine]] = {}
    for line in lines:
        if date_from <= line.work_day <= date_to:
            groups.setdefault(shipowners.get(line.ship, f"navio {line.ship}"), []).append(line)
    out = []
    for owner in sorted(groups):
        items = tuple(sorted(groups[owner], key=lambda x: (x.work_day, x.ship, x.ref, x.billing_id)))
        out.append(BillingStatement(owner, date_from, date_to, items, money_sum(x.amount for x in items)))
    return out
