"""The Decimal reference of the production-pay engine (RULES.md E1-E8, C1-C6): the engine as it
computed before integer centavos (every amount a ``Decimal`` rounded half up by ``StatementLine``,
one line object per member), kept verbatim as the oracle of the property test in
tests/central/production/test_cents_property.py. Not used by the product.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from decimal import ROUND_CEILING, Decimal, localcontext

import msgspec

from central.pay.lines import StatementLine, money_sum, to_money
from central.production.composition import Composition, composition_problem
from central.production.engine import TEXT as ENGINE_TEXT
from central.production.engine import UNIT_WORDS, extension_over_cap, tariff_rules, work_time_extra
from central.production.model import (
    GangResult,
    GangSummary,
    GangWork,
    Member,
    MemberStatement,
    TariffTable,
)
from central.production.rulebook import Rulebook, RulebookVersion
from portgate.errors import BadInput

ZERO = Decimal(0)
SIXTY = Decimal(60)

TEXT = {
    "pt-BR": {
        "labour": "{cls}: {qty} {unit} × R$ {tariff}",
        "share": "Cota de produção: {quotas} cota(s) × R$ {value}",
        "guarantee_half": "Garantia mínima de meio dia (R$ {amount}): complemento",
        "guarantee_day": "Garantia de um dia de salário (R$ {amount}): complemento",
        "guarantee_hourly": "Garantia por hora: {hours} h × R$ {hourly} (R$ {amount}): complemento",
        "late_start": "Espera por início atrasado: {minutes} min × {fraction} do salário-hora",
        "rain": "Paralisação por chuva: {minutes} min × {fraction} do salário-hora",
        "rough_water": "Paralisação por agitação das águas: {minutes} min × {fraction} do salário-hora",
        "tide": "Espera de maré: {minutes} min × {fraction} do salário-hora",
        "third_party": "Paralisação por terceiros: {minutes} min × {fraction} do salário-hora",
        "meal_worked": "Horário de refeição trabalhado: {minutes} min × {fraction} do salário-hora",
        "anchorage_travel": "Viagem ao navio ao largo e volta (tempo de trabalho): {minutes} min × "
                            "{fraction} do salário-hora",
        "no_equipment": "Paralisação por falta de aparelhamento: {minutes} min × {fraction} do salário-hora",
        "workers_fault": "Paralisação imputada aos trabalhadores: {minutes} min, não remunerada",
        "transport": "Condução ao navio ao largo ({source}): R$ {amount}",
        "billing": "Reembolso ao concessionário — {what} ({source}), {n} trabalhador(es)",
        "surcharge": "Acréscimo de {pct}% sobre R$ {base}",
        "top_up": "Complemento do mínimo mensal {month}: R$ {minimum} − R$ {earned}",
    },
    "en": {
        "labour": "{cls}: {qty} {unit} × R$ {tariff}",
        "share": "Production share: {quotas} quota(s) × R$ {value}",
        "guarantee_half": "Half-day minimum (R$ {amount}): top-up",
        "guarantee_day": "Full-day guarantee (R$ {amount}): top-up",
        "guarantee_hourly": "Hourly guarantee: {hours} h × R$ {hourly} (R$ {amount}): top-up",
        "late_start": "Waiting for a late start: {minutes} min × {fraction} of the hourly wage",
        "rain": "Rain stoppage: {minutes} min × {fraction} of the hourly wage",
        "rough_water": "Rough-water stoppage: {minutes} min × {fraction} of the hourly wage",
        "tide": "Tide wait: {minutes} min × {fraction} of the hourly wage",
        "third_party": "Stoppage by third parties: {minutes} min × {fraction} of the hourly wage",
        "meal_worked": "Meal interval worked: {minutes} min × {fraction} of the hourly wage",
        "anchorage_travel": "Travel to the anchored ship and back (work time): {minutes} min × "
                            "{fraction} of the hourly wage",
        "no_equipment": "Stoppage for want of equipment: {minutes} min × {fraction} of the hourly wage",
        "workers_fault": "Stoppage proven caused by the workers: {minutes} min, not paid",
        "transport": "Transport to the anchored ship ({source}): R$ {amount}",
        "billing": "Reimbursement — {what} ({source}), {n} worker(s)",
        "surcharge": "Surcharge {pct}% on R$ {base}",
        "top_up": "Monthly minimum top-up {month}: R$ {minimum} − R$ {earned}",
    },
}


#: Kinds that only a stevedoring rulebook pays, with their rule and article (for the refusal).
KIND_RULES = {"anchorage_travel": "E7 (DL 2.032 art. 16)", "no_equipment": "E8 (DL 2.032 art. 12 §6)",
              "workers_fault": "E8 (DL 2.032 art. 26)"}


def _num(value: Decimal) -> str:
    """A quantity as typed by a human: no exponent, no trailing zeros (``30.001``, ``1.5``, ``4``)."""
    text = format(value.normalize(), "f")
    return text


def _brl(value: Decimal) -> str:
    """A tariff or rate in BRL: at least two decimals, more only if it has them (``3.20``, ``3.125``)."""
    return format(value, "f") if value.as_tuple().exponent < -2 else str(to_money(value))


def by_time(version: RulebookVersion, fraction: Decimal, minutes: Decimal) -> Decimal:
    """An amount by time, exact: SD × ``fraction`` × ``minutes`` ÷ (hours per day × 60), divided
    last (RULES.md rounding: SD × minutes ÷ 480 for the 8-hour day), so rounding the line half up
    rounds an exact half cent up."""
    with localcontext() as ctx:
        ctx.prec = 28
        return version.day_wage * fraction * minutes / (version.hours_per_day * SIXTY)


def member_quotas(member: Member, version: RulebookVersion) -> Decimal:
    """Quotas of ``member`` (E2 art. 24 / C1 art. 4): the role's quota, per hold for per-hold roles,
    capped at ``max``. The caller has checked the role exists."""
    rule = version.shares.quotas[member.role]
    quotas = rule.quota * member.holds_worked if rule.per_hold else rule.quota
    if rule.max is not None:
        quotas = min(quotas, rule.max)
    return quotas


def _check(work: GangWork, version: RulebookVersion, tariffs: TariffTable) -> list[str]:
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
    for row in work.tally:
        if not row.quantity.is_finite() or row.quantity < 0:
            errors.append(f"{row.source}: quantity {row.quantity} must be a number ≥ 0")
        elif tariffs.lookup(row.cargo_class, work.date) is None:
            known = "|".join(sorted(tariffs.classes())) or "none"
            errors.append(f"{row.source}: cargo class {row.cargo_class!r} has no tariff in force on "
                          f"{work.date} (known: {known})")
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


def pay_gang(work: GangWork, rulebook: Rulebook, tariffs: TariffTable, *, lang: str = "pt-BR",
             composition: Composition | None = None) -> GangResult:
    """Pay one gang (terno) under ``rulebook`` (E1-E8 or C1-C6) with the port's ``tariffs``.

    Returns a ``GangResult``: per member who boarded, statement lines (E2/C1 share, E3/C2
    guarantee top-up, E4/C3 waits and stoppages, E5/C4 meal worked), total, disputed and payable
    parts and the due time (E6); the gang summary (E1 labour lines and amount, tonnes, total quotas,
    exact quota value, rounding difference); the shipowner's billing lines (C5).

    Raises ``BadInput`` listing every problem, each naming its row: nobody boarded, a role not in the
    quota table, an unknown cargo class or one with no tariff on the date, a negative quantity, an
    interruption kind the rulebook does not pay, a dispute that matches no line. The caller fixes
    the input; nothing is computed partially.

    With a ``composition`` table and a gang that names its ``unit``, a gang whose boarded members
    depart from the table is flagged GANG_COMPOSITION on its summary (DL 2.032 art. 13; DL 3.844
    art. 3); pay is unchanged.
    """
    text = TEXT[lang]
    version = rulebook.version_for(work.date, where=work.tally[0].source if work.tally else work.gang_id)
    errors = _check(work, version, tariffs)
    if errors:
        raise BadInput("\n".join(errors))

    # E1: labour amount = Σ quantity × labour tariff, each tally line rounded half up.
    labour_lines = []
    tonnes = ZERO
    for row in work.tally:
        tariff = tariffs.lookup(row.cargo_class, work.date)
        assert tariff is not None  # checked above
        if tariff.unit == "t":
            tonnes += row.quantity
        # C7 / C8 (issue 31): per tonne or fraction, class surcharge, in Decimal
        rules = tariff_rules(tariff, version) or (None, None)
        quantity, note, factor, extra = row.quantity, "", Decimal(1), ""
        if rules[0] is not None:
            quantity = row.quantity.to_integral_value(rounding=ROUND_CEILING)
            if quantity != row.quantity:
                note = ENGINE_TEXT[lang]["per_fraction"].format(qty=_num(row.quantity), rule=rules[0])
        if rules[1] is not None:
            percent, rule, key = rules[1]
            factor = 1 + percent / 100
            extra = ENGINE_TEXT[lang]["class_surcharge"].format(pct=_num(percent), rule=rule, note=key)
        labour_lines.append(StatementLine(
            version.labour.rule, version.labour.article,
            text["labour"].format(cls=row.cargo_class, qty=_num(quantity),
                                  unit=UNIT_WORDS[lang].get(tariff.unit, tariff.unit),
                                  tariff=_brl(tariff.labour_tariff)) + note + extra,
            quantity * tariff.labour_tariff * factor))
    labour_amount = money_sum(line.amount for line in labour_lines)

    # E2 / C1: quotas and the exact quota value.
    boarded = [m for m in work.members if m.boarded]
    quotas = {m.registration: member_quotas(m, version) for m in boarded}
    total_quotas = sum(quotas.values(), ZERO)
    with localcontext() as ctx:
        ctx.prec = 28
        quota_value = labour_amount / total_quotas

    billed: dict[int, list[Decimal]] = {}
    statements = []
    for m in boarded:
        lines = [StatementLine(version.shares.rule, version.shares.article,
                               text["share"].format(quotas=_num(quotas[m.registration]),
                                                    value=_num(to_money(quota_value))),
                               labour_amount * quotas[m.registration] / total_quotas)]
        share = lines[0].amount
        guarantee, key = _guarantee(m, version, tonnes, work_time_extra(work, version))
        if guarantee > share:
            g = version.guarantee
            lines.append(StatementLine(g.rule, g.article, text[key].format(
                amount=guarantee, hours=_num(m.minutes_worked / SIXTY), hourly=to_money(version.hourly_wage)),
                guarantee - share))
        for i, stop in enumerate(work.interruptions):
            rule = version.interruptions[stop.kind]
            if stop.minutes <= rule.paid_when_over_minutes:
                continue  # E4 tide ≤ 2 h, C3 third party ≤ 20 min: not paid
            line = StatementLine(rule.rule, rule.article, text[stop.kind].format(
                minutes=_num(stop.minutes), fraction=_num(rule.wage_fraction)),
                by_time(version, rule.wage_fraction, stop.minutes))
            lines.append(line)
            if rule.billed_to_shipowner:
                billed.setdefault(i, []).append(line.amount)
        statements.append((m, tuple(lines)))

    members = _settle(work, version, statements, quotas)
    billing = _billing(work, version, billed, text)
    shares_total = money_sum(s.lines[0].amount for s in members)
    summary = GangSummary(
        gang_id=work.gang_id, ship=work.ship, date=work.date, period=work.period,
        rulebook=rulebook.id, rulebook_version=version.effective_from,
        labour_lines=tuple(labour_lines), labour_amount=labour_amount, tonnes=tonnes,
        total_quotas=total_quotas, quota_value=quota_value, shares_total=shares_total,
        rounding_difference=labour_amount - shares_total,
        absent=tuple(m.registration for m in work.members if not m.boarded),
        flags=_composition_flags(work, composition),
    )
    # E9 / C9 (issue 31): EXTENSION_OVER_CAP on the gang and the member's statement (flags only)
    over_cap = extension_over_cap(work, version, work_time_extra(work, version))
    if over_cap:
        members = tuple(msgspec.structs.replace(st, flags=(over_cap[st.registration],))
                        if st.registration in over_cap else st for st in members)
        summary = msgspec.structs.replace(summary, flags=summary.flags + tuple(over_cap.values()))
    return GangResult(summary=summary, members=members, billing=billing,
                      billing_total=money_sum(line.amount for line in billing))


def _composition_flags(work: GangWork, composition: Composition | None) -> tuple[str, ...]:
    if composition is None or work.unit is None:
        return ()
    problem = composition_problem(composition, work.unit, work.units,
                                  (m.role for m in work.members if m.boarded))
    return () if problem is None else (problem,)


def _guarantee(m: Member, version: RulebookVersion, tonnes: Decimal,
               extra: Decimal = ZERO) -> tuple[Decimal, str]:
    """E3 / C2: the member's minimum, rounded to the cent, and which text describes it.

    Reading (RULES.md E3): paid max(share, guarantee). Both limits are strict: exactly 240 min or
    exactly 30 t stays at the half-day minimum."""
    g = version.guarantee
    if m.minutes_worked + extra > g.over_minutes and tonnes > g.over_tonnes:
        if g.above == "day":
            return to_money(version.day_wage), "guarantee_day"
        return to_money(by_time(version, Decimal(1), m.minutes_worked)), "guarantee_hourly"
    return to_money(version.day_wage * g.minimum_day_fraction), "guarantee_half"


def _settle(work: GangWork, version: RulebookVersion, statements, quotas) -> tuple[MemberStatement, ...]:
    """Totals, disputed and payable parts and the due time (E6, art. 10 §1) of each member."""
    due_at = work.service_end + dt.timedelta(hours=version.payment.deadline_hours)
    by_member = {m.registration: lines for m, lines in statements}
    disputed: dict[str, Decimal] = {}
    errors = []
    for d in work.disputes:
        lines = by_member.get(d.registration)
        if lines is None:
            errors.append(f"{d.source}: {d.registration} is not a member of gang {work.gang_id} who boarded")
            continue
        on_rule = money_sum(line.amount for line in lines if line.rule == d.rule)
        if on_rule == 0:
            errors.append(f"{d.source}: {d.registration} has no line of rule {d.rule} to dispute")
            continue
        amount = on_rule if d.amount is None else d.amount
        if amount <= 0 or amount > on_rule:
            errors.append(f"{d.source}: disputed amount {amount} must be > 0 and ≤ {on_rule} "
                          f"(the {d.rule} lines)")
            continue
        disputed[d.registration] = disputed.get(d.registration, ZERO) + to_money(amount)
    if errors:
        raise BadInput("\n".join(errors))
    out = []
    for m, lines in statements:
        total = money_sum(line.amount for line in lines)
        held = min(disputed.get(m.registration, ZERO), total)
        out.append(MemberStatement(
            registration=m.registration, role=m.role, quotas=quotas[m.registration],
            minutes_worked=m.minutes_worked, lines=lines, total=total, disputed=to_money(held),
            payable=total - to_money(held), due_at=due_at,
            disputes=tuple(d for d in work.disputes if d.registration == m.registration),
            minutes_typed=m.minutes_typed))
    return tuple(out)


def _billing(work: GangWork, version: RulebookVersion, billed: dict[int, list[Decimal]], text) -> tuple:
    """The shipowner's billing: per billed interruption what was paid for it to the members (C5,
    DL 3.844 art. 8: art. 4 §2 waits and meal hours; E7, DL 2.032 art. 16: the travel wages), then
    the surcharge on their sum (C5 10%; none printed when the rulebook's surcharge is 0), then the
    transport of each trip to an anchored ship (E7). Each a printed line rounded half up."""
    spec = version.shipowner_billing
    if spec is None or not billed:
        return ()
    lines = []
    for i in sorted(billed):
        stop = work.interruptions[i]
        rule = version.interruptions[stop.kind]
        lines.append(StatementLine(spec.rule, spec.article, text["billing"].format(
            what=f"{rule.rule} {stop.kind} {_num(stop.minutes)} min", source=stop.source,
            n=len(billed[i])), money_sum(billed[i])))
    base = money_sum(line.amount for line in lines)
    if spec.surcharge:
        lines.append(StatementLine(spec.rule, spec.article, text["surcharge"].format(
            pct=_num(spec.surcharge * 100), base=base), base * spec.surcharge))
    for i in sorted(billed):
        stop = work.interruptions[i]
        if stop.transport is not None:
            lines.append(StatementLine(spec.rule, spec.article, text["transport"].format(
                source=stop.source, amount=to_money(stop.transport)), stop.transport))
    return tuple(lines)


def pay_gangs(works: Iterable[GangWork], rulebook: Rulebook, tariffs: TariffTable,
              *, lang: str = "pt-BR", composition: Composition | None = None) -> list[GangResult]:
    """``pay_gang`` for each gang; raises one ``BadInput`` listing the problems of every gang, so a
    batch is either wholly computed or not at all."""
    results, errors = [], []
    for work in works:
        try:
            results.append(pay_gang(work, rulebook, tariffs, lang=lang, composition=composition))
        except BadInput as exc:
            errors.append(str(exc))
    if errors:
        raise BadInput("\n".join(errors))
    return results


def monthly_top_up(registration: str, month: str, lines: Iterable[StatementLine], minimum: Decimal,
                   version: RulebookVersion, *, lang: str = "pt-BR") -> StatementLine | None:
    """C6 (DL 3.844 art. 4 §6): the difference between a worker's guaranteed monthly ``minimum`` and
    the month's production pay (the sum of the worker's ``lines`` whose rule is in the rulebook's
    ``monthly_minimum.counts``), or None when the pay reaches the minimum.

    Raises ``BadInput`` if the rulebook has no monthly minimum or ``minimum`` is negative."""
    spec = version.monthly_minimum
    if spec is None:
        raise BadInput("this rulebook has no monthly minimum (C6)", where=registration)
    if minimum < 0:
        raise BadInput(f"monthly minimum {minimum} must be ≥ 0", where=registration)
    earned = money_sum(line.amount for line in lines if line.rule in spec.counts)
    if earned >= minimum:
        return None
    return StatementLine(spec.rule, spec.article, TEXT[lang]["top_up"].format(
        month=month, minimum=to_money(minimum), earned=earned), minimum - earned)
