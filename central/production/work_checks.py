"""The checks of one gang's work before it is priced (``work_problems``) and the work-time facts the
engine flags (RULES.md E3, E9, C2, C9: the ordinary duration of a period, the minutes of paid
interruptions that are work time, the extension over the cap, the gang's composition). Pure."""

from __future__ import annotations

import functools
from decimal import Decimal
from operator import attrgetter

from central.production.composition import Composition, composition_problem
from central.production.line_texts import KIND_RULES
from central.production.line_texts import quantity_text as _num
from central.production.model import GangWork, TariffTable
from central.production.prices import ZERO
from central.production.rulebook import RulebookVersion
from portgate.records import parse_period

def work_problems(work: GangWork, version: RulebookVersion, tariffs: TariffTable) -> list[str]:
    """Every problem of ``work`` against the rulebook and tariffs, each naming its row."""
    errors: list[str] = []
    quotas = version.shares.quotas
    boarded = [m for m in work.members if m.boarded]
    if not boarded:
        where = work.tally[0].source if work.tally else work.gang_id
        errors.append(f"{where}: tally for gang {work.gang_id}, but nobody of that gang boarded")
    for m in work.members:
        if m.role not in quotas:
            errors.append(f"{m.source}: role {m.role!r} is not in the quota table ({'|'.join(quotas)})")
        elif quotas[m.role].per_hold and m.holds_worked < 1:
            errors.append(f"{m.source}: role {m.role} is paid per hold; holds_worked must be ≥ 1")
        if m.minutes_worked < 0:
            errors.append(f"{m.source}: minutes_worked must not be negative")
        if m.extra and version.extra_members is None:
            errors.append(f"{m.source}: extra yes: members added for special conditions (C9, DL 3.844 "
                          f"art. 3 sole paragraph) are not in this rulebook; list him as a member")
    if boarded and all(m.extra for m in boarded) and version.extra_members is not None:
        errors.append(f"{boarded[0].source}: every member of gang {work.gang_id} who boarded is marked "
                      f"extra (C9); the extras are added to a gang of normal members")
    for row in work.tally:
        if not row.quantity.is_finite() or row.quantity < 0:
            errors.append(f"{row.source}: quantity {row.quantity} must be a number ≥ 0")
        elif (found := tariffs.lookup(row.cargo_class, work.date)) is None:
            known = "|".join(sorted(tariffs.classes())) or "none"
            errors.append(f"{row.source}: cargo class {row.cargo_class!r} has no tariff in force on "
                          f"{work.date} (known: {known})")
        elif found.surcharge is not None and found.surcharge not in version.surcharges:
            errors.append(f"{row.source}: cargo class {row.cargo_class!r} ({found.source or 'tariffs'}): "
                          f"surcharge {found.surcharge!r} is not in this rulebook's surcharge table "
                          f"({'|'.join(version.surcharges) or 'none'}; C8, DL 3.844 model table)")
    for stop in work.interruptions:
        if stop.kind not in version.interruptions:
            why = KIND_RULES.get(stop.kind)
            errors.append(f"{stop.source}: kind {stop.kind!r} is not paid under this rulebook "
                          f"({'|'.join(version.interruptions) or 'none'})"
                          + (f"; {why} is a rule of stevedoring (dl-2032-1940)" if why else ""))
        elif stop.minutes <= 0:
            errors.append(f"{stop.source}: minutes must be > 0")
        elif stop.transport is not None and not version.interruptions[stop.kind].billed_to_shipowner:
            errors.append(f"{stop.source}: transport is billed with a billed kind only; "
                          f"{stop.kind} is not billed under this rulebook")
    return errors


EXTENSION_OVER_CAP = "EXTENSION_OVER_CAP"
_MINUTES = attrgetter("minutes_worked")


def ordinary_minutes(work: GangWork) -> Decimal:
    """The ordinary duration of the gang's period in minutes: ``work.ordinary_minutes`` (its hours
    on its date in the port's time zone, set by ``csvio.assemble``), else from the period's hours
    (``07-13``: 360, ``19-01``: 360, ``07-15``: 480). Raises ``BadInput`` for a malformed period."""
    if work.ordinary_minutes is not None:
        return work.ordinary_minutes
    return _period_minutes(work.period)


@functools.lru_cache(maxsize=256)
def _period_minutes(period: str) -> Decimal:
    """A period's hours in minutes (``19-01``: 360), once per period text (a batch has a few)."""
    start, end = parse_period(period)
    return Decimal((end - start) % 24 * 60)


def extension_over_cap(work: GangWork, version: RulebookVersion, extra: Decimal) -> dict[str, str]:
    """E9 (DL 2.032 art. 27, §1) / C9 (DL 3.844 art. 7 §1): the EXTENSION_OVER_CAP flag of each
    member who boarded and whose work time (``minutes_worked`` + ``extra``, the gang's minutes that
    are work time, ``work_time_extra``) goes more than ``working_day.extension_cap_minutes`` beyond
    the ordinary duration of the gang's period, by registration; {} when none does. Pay is not
    changed: the extension is paid by the same tables."""
    spec = version.working_day
    if spec is None:
        return {}
    ordinary = ordinary_minutes(work)
    limit = ordinary + spec.extension_cap_minutes
    if not work.members or max(map(_MINUTES, work.members)) + extra <= limit:
        return {}  # nobody's work time is over (rounding of a sum is monotonic)
    out = {}
    for m in work.members:
        worked = m.minutes_worked + extra
        if m.boarded and worked > limit:
            out[m.registration] = (
                f"{EXTENSION_OVER_CAP}: {m.registration} worked {_num(worked)} min, {_num(worked - ordinary)} "
                f"min beyond the ordinary {_num(ordinary)} min of period {work.period} (cap "
                f"{_num(spec.extension_cap_minutes)} min; {spec.rule}, {spec.article})")
    return out


def work_time_extra(work: GangWork, version: RulebookVersion) -> Decimal:
    """Minutes of the gang's paid interruptions that are work time for the E3/C2 duration test and
    the E9/C9 working day (``guarantee.counts_as_work``: E7 the travel to an anchored ship and back,
    DL 2.032 art. 16; E9 an E8 stoppage for want of equipment, art. 27 with arts. 12 §5, §6), the
    same for every member who boarded; 0 when the rulebook lists none. An interruption not paid
    (at or under ``paid_when_over_minutes``) adds nothing."""
    kinds = version.guarantee.counts_as_work
    if not kinds or not work.interruptions:
        return ZERO
    paid = version.interruptions
    return sum((s.minutes for s in work.interruptions
                if s.kind in kinds and s.minutes > paid[s.kind].paid_when_over_minutes), ZERO)


def composition_flags(work: GangWork, composition: Composition | None) -> tuple[str, ...]:
    if composition is None or work.unit is None:
        return ()
    problem = composition_problem(composition, work.unit, work.units,
                                  (m.role for m in work.members if m.boarded and not m.extra))  # C9
    return () if problem is None else (problem,)

