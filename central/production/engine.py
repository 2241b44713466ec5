"""The production-pay engine (RULES.md E1-E9, C1-C9). Pure: no I/O, no clock, no environment.

``pay_gang(work, rulebook, tariffs)`` turns what one gang did (members who boarded, cargo tallied,
waits and stoppages) into per-member statement lines, a gang summary and the shipowner's billing
lines. ``monthly_top_up`` is C6.

Rounding (RULES.md "Rounding (E and C)", documented in docs/production.md):
- each E1 labour line (quantity × tariff) is a printed line rounded to the cent, half up; the labour
  amount is the sum of those rounded lines;
- each member's share is labour amount × own quotas ÷ total quotas, divided last, rounded half up;
  the quota value (labour amount ÷ total quotas) is shown exact (28 significant digits), never
  rounded. The shares may differ from the labour amount by at most half a cent per member; the
  summary reports that ``rounding_difference``;
- amounts by time are SD × fraction × minutes ÷ (hours per day × 60) (÷ 480 for the 8-hour day),
  divided last, so an exact half cent rounds up; each interruption is its own line;
- every other line (guarantee top-up, billing) is computed exactly and rounded half up once, as a
  line; totals are sums of rounded (printed) lines.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from decimal import ROUND_CEILING, ROUND_HALF_UP, Context, Decimal, localcontext

import msgspec

from central.pay.cents import cents_of, half_up, ratio, to_brl
from central.pay.lines import CENT, StatementLine, money_sum, to_money
from central.production.composition import Composition, composition_problem
from central.production.model import (
    GangResult,
    GangSummary,
    GangWork,
    Member,
    MemberStatement,
    Tariff,
    TariffTable,
)
from central.production.rulebook import Rulebook, RulebookVersion
from portgate.errors import BadInput
from portgate.gctune import paused as gc_paused
from portgate.records import parse_period

ZERO = Decimal(0)
ONE = Decimal(1)
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
        "per_fraction": " (pesado {qty} t: tonelada ou fração, {rule})",
        "extra_share": "{share} — membro extra (condições especiais): cota calculada sem os extras, "
                       "custo da administração do porto",
        "class_surcharge": " + {pct}% ({rule}, obs. {note})",
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
        "per_fraction": " (weighed {qty} t: per tonne or fraction, {rule})",
        "extra_share": "{share} — extra member (special conditions): share computed without the "
                       "extras, the port administration's cost",
        "class_surcharge": " + {pct}% surcharge ({rule}, note {note})",
    },
}


#: A tariff's unit (tariffs.csv ``unit``) as a labour line names it in each language.
UNIT_WORDS = {"pt-BR": {"t": "t", "unit": "unid."}, "en": {"t": "t", "unit": "unit(s)"}}


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


class _Prices:
    """What a rulebook version prices the same for every gang, in integer centavos, worked out
    once per ``pay_gangs`` call: member quotas per (role, holds) (None for a role the quota table
    does not have, or a per-hold role with no hold), the guarantees, the interruption lines per
    (kind, minutes, language), the tariff in force per (cargo class, date) with its printed rate."""

    def __init__(self, version: RulebookVersion) -> None:
        self.version = version
        self.sd = ratio(version.day_wage)
        self.per_day_minutes = version.hours_per_day * 60
        g = version.guarantee
        fraction = ratio(g.minimum_day_fraction)
        self.half_day = half_up(self.sd[0] * fraction[0] * 100, self.sd[1] * fraction[1])
        self.full_day = half_up(self.sd[0] * 100, self.sd[1])
        self.hourly_text = str(to_money(version.hourly_wage))
        self.deadline = dt.timedelta(hours=version.payment.deadline_hours)
        self.context = Context(prec=28)  # the exact quota value: 28 significant digits
        self.quotas: dict[tuple[str, int], Decimal | None] = {}
        #: quotas of the roles that are not paid per hold (the same whatever the holds)
        self.fixed: dict[str, Decimal] = {role: member_quotas(Member("", role), version)
                                          for role, rule in version.shares.quotas.items() if not rule.per_hold}
        self.stops: dict[tuple[str, Decimal, str], tuple[int, StatementLine]] = {}
        self.tariffs: TariffTable | None = None
        self.in_force: dict[tuple[str, dt.date], tuple | None] = {}
        self.texts: dict[tuple, tuple] = {}
        self.guaranteed: dict[int, Decimal] = {}  # BRL of a guaranteed total, by centavos

    def share_text(self, lang: str, quotas: Decimal) -> tuple[str, str, int, int]:
        """``(head, tail, n, d)``: the share line's text of ``quotas`` around its quota value
        (``head + value + tail`` is ``TEXT[lang]["share"]`` formatted) and ``quotas == n / d``."""
        key = ("share", lang, quotas)
        found = self.texts.get(key)
        if found is None:
            head, tail = TEXT[lang]["share"].replace("{quotas}", _num(quotas)).split("{value}")
            found = self.texts[key] = (head, tail, *ratio(quotas))
        return found

    def labour_text(self, lang: str, cargo_class: str, unit: str, tariff_text: str) -> tuple[str, str]:
        """A labour line's text around its quantity: ``head + quantity + tail``."""
        key = ("labour", lang, cargo_class, unit, tariff_text)
        found = self.texts.get(key)
        if found is None:
            head, tail = TEXT[lang]["labour"].replace("{cls}", cargo_class).replace(
                "{unit}", UNIT_WORDS[lang].get(unit, unit)).replace(
                "{tariff}", tariff_text).split("{qty}")
            found = self.texts[key] = (head, tail)
        return found

    def top_up_text(self, lang: str, key: str, guarantee: int, minutes: Decimal) -> str:
        """The text of a guarantee top-up (``key`` is ``guarantee_half|day|hourly``); the
        half-day and full-day texts are one per version."""
        tkey = ("top_up", lang, key, guarantee, minutes if key == "guarantee_hourly" else None)
        found = self.texts.get(tkey)
        if found is None:
            found = TEXT[lang][key].format(amount=to_brl(guarantee), hours=_num(minutes / SIXTY),
                                           hourly=self.hourly_text)
            self.texts[tkey] = found
        return found

    def quotas_of(self, member: Member) -> Decimal | None:
        """``member_quotas`` of ``member``, or None when its role is not in the quota table or is
        paid per hold and ``holds_worked`` < 1 (``_check`` names the row)."""
        key = (member.role, member.holds_worked)
        try:
            return self.quotas[key]
        except KeyError:
            pass
        rule = self.version.shares.quotas.get(member.role)
        valid = rule is not None and not (rule.per_hold and member.holds_worked < 1)
        found = self.quotas[key] = member_quotas(member, self.version) if valid else None
        return found

    def tariff(self, tariffs: TariffTable, cargo_class: str, day: dt.date, lang: str) -> tuple | None:
        """``(unit, n, d, head, tail, rules)`` of the tariff of ``cargo_class`` in force on ``day``
        (labour tariff = n / d; a labour line's text is ``head + quantity + tail``; ``rules`` the
        C7/C8 rules of ``tariff_rules``, None for a plain tariff), or None when there is none or
        its surcharge is not in the rulebook."""
        if tariffs is not self.tariffs:
            self.tariffs, self.in_force = tariffs, {}
        key = (cargo_class, day, lang)
        try:
            return self.in_force[key]
        except KeyError:
            pass
        found = tariffs.lookup(cargo_class, day)
        if found is None or (found.surcharge is not None and found.surcharge not in self.version.surcharges):
            entry = None  # ``_check`` names the row
        else:
            entry = (found.unit, *ratio(found.labour_tariff),
                     *self.labour_text(lang, cargo_class, found.unit, _brl(found.labour_tariff)),
                     tariff_rules(found, self.version))
        self.in_force[key] = entry
        return entry

    def by_time(self, fraction: Decimal, minutes: Decimal) -> int:
        """Centavos of SD × ``fraction`` × ``minutes`` ÷ (hours per day × 60), one rounding half up
        (``by_time`` exactly, rounded as a line)."""
        f_n, f_d = ratio(fraction)
        m_n, m_d = ratio(minutes)
        return half_up(self.sd[0] * f_n * m_n * 100, self.sd[1] * f_d * m_d * self.per_day_minutes)

    def stop_line(self, stop, lang: str) -> tuple[int, StatementLine]:
        """(centavos, line) of a paid interruption: the same for every member of the gang."""
        key = (stop.kind, stop.minutes, lang)
        found = self.stops.get(key)
        if found is None:
            rule = self.version.interruptions[stop.kind]
            cents = self.by_time(rule.wage_fraction, stop.minutes)
            found = self.stops[key] = (cents, StatementLine.in_cents(
                rule.rule, rule.article,
                TEXT[lang][stop.kind].format(minutes=_num(stop.minutes), fraction=_num(rule.wage_fraction)),
                to_brl(cents)))
        return found


def _version(rulebook: Rulebook, work: GangWork, cache: dict) -> RulebookVersion:
    """``rulebook.version_for(work.date)``, looked up once per (rulebook, date) of the batch."""
    entry = cache.get(("book", id(rulebook)))
    if entry is None or entry[0] is not rulebook:
        entry = cache[("book", id(rulebook))] = (rulebook, {})
    version = entry[1].get(work.date)
    if version is None:
        version = entry[1][work.date] = rulebook.version_for(
            work.date, where=work.tally[0].source if work.tally else work.gang_id)
    return version


def pay_gang(work: GangWork, rulebook: Rulebook, tariffs: TariffTable, *, lang: str = "pt-BR",
             composition: Composition | None = None, _prices: dict | None = None) -> GangResult:
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
    art. 3); pay is unchanged. Issue 31: C7 per tonne or fraction and C8 class surcharges on the
    labour lines (``labour_by_rules``); the E7 travel and E8 stoppage as work time in the E3/C2
    duration test (``work_time_extra``); EXTENSION_OVER_CAP (E9/C9, ``extension_over_cap``); C9
    extra members apart (``extras_apart``).

    Money is integer centavos inside (``central.pay.cents``): each printed line is one rounding half
    up of an exact integer fraction; amounts are ``Decimal`` BRL on the way out. Members with the
    same quotas and guarantee get the same (immutable) line objects and total; only their identity
    fields differ.
    """
    text = TEXT[lang]
    version, prices = _version_prices(rulebook, work, _prices)
    in_force, boarded, boarded_quotas, absent, quotas, extras = _checked_members(
        work, version, prices, tariffs, lang)

    # E1: labour amount = Σ quantity × labour tariff, each tally line rounded half up (C7, C8).
    labour_lines, tonnes, labour = _labour(work, in_force, version, text)
    labour_amount = to_brl(labour)

    total_quotas, quota_value, value_text = _quota_value(prices, labour_amount, quotas, boarded, extras)
    paid_stops, stop_lines, stop_cents, billed = _paid_stops(work, version, prices, lang)
    work_extra = work_time_extra(work, version)  # E7, E9: travel, E8 stoppage are work time
    due_at = work.service_end + prices.deadline
    gang = (labour, *ratio(total_quotas), value_text, stop_lines, stop_cents)
    statements, priced, shares_cents = _price_members(
        work, version, prices, lang, boarded, boarded_quotas, quotas, tonnes, work_extra, due_at, gang)

    members = _settle(work, due_at, priced, quotas) if work.disputes else tuple(statements)
    billing, billing_cents = _billing(work, version, paid_stops, len(boarded), text) if billed else _NO_BILLING
    members, flags, extra_shares, administration = _apart_and_flagged(
        work, version, members, extras, work_extra, composition, text)
    shares_total = to_brl(shares_cents - extra_shares)
    summary = GangSummary(  # positional, in field order (the hot path)
        work.gang_id, work.ship, work.date, work.period, rulebook.id, version.effective_from,
        tuple(labour_lines), labour_amount, tonnes, total_quotas, quota_value, shares_total,
        labour_amount - shares_total, tuple(absent), flags, tuple(m.registration for m in extras),
        administration)
    return GangResult(summary, members, billing, to_brl(billing_cents) if billing else _NO_DISPUTE)


def _quota_value(prices: _Prices, labour_amount: Decimal, quotas: dict[str, Decimal], boarded: list,
                 extras: list) -> tuple[Decimal, Decimal, str]:
    """E2 / C1: ``(total quotas, exact quota value, the value as printed)``; the labour amount in
    BRL divided by the quotas of the boarded members, C9 extra members left out."""
    total_quotas = sum(quotas.values(), ZERO) if not extras else sum(
        (quotas[m.registration] for m in boarded if not m.extra), ZERO)  # C9: without the extras
    quota_value = prices.context.divide(labour_amount, total_quotas)
    value_text = _num(quota_value.quantize(CENT, rounding=ROUND_HALF_UP))
    return total_quotas, quota_value, value_text


def _version_prices(rulebook: Rulebook, work: GangWork, _prices: dict | None) -> tuple[RulebookVersion, _Prices]:
    """The rulebook version in force on ``work``'s date and its ``_Prices``, both kept in the
    batch's cache ``_prices`` (None: a cache for this gang only)."""
    cache = {} if _prices is None else _prices
    version = _version(rulebook, work, cache)
    prices = cache.get(id(version))
    if prices is None or prices.version is not version:
        prices = cache[id(version)] = _Prices(version)
    return version, prices


def _checked_members(work: GangWork, version: RulebookVersion, prices: _Prices, tariffs: TariffTable,
                     lang: str) -> tuple[list, list, list, list, dict[str, Decimal], list]:
    """``(in_force, boarded, boarded_quotas, absent, quotas, extras)``: the ``_Prices.tariff`` entry
    of each tally row, the members who boarded and their quotas, the registrations of those who
    did not, quotas by registration and the C9 extra members. Raises ``BadInput`` as ``pay_gang``."""
    # The checks of ``_check`` as one pass that also gathers what pricing needs; on any problem
    # ``_check`` lists them all, each naming its row.
    in_force = []
    ok = True
    for row in work.tally:
        quantity = row.quantity
        if not quantity.is_finite() or quantity < ZERO:
            ok = False
        entry = prices.tariff(tariffs, row.cargo_class, work.date, lang)
        ok = ok and entry is not None
        in_force.append(entry)
    paid_kinds = version.interruptions
    for stop in work.interruptions:
        rule = paid_kinds.get(stop.kind)
        if rule is None or stop.minutes <= ZERO or (stop.transport is not None and not rule.billed_to_shipowner):
            ok = False
    boarded = []
    boarded_quotas = []
    absent = []
    quotas: dict[str, Decimal] = {}
    fixed = prices.fixed
    for m in work.members:
        q = fixed.get(m.role)
        if q is None:
            q = prices.quotas_of(m)  # per hold, or None: not in the quota table
        if q is None or m.minutes_worked < ZERO:
            ok = False
        elif m.boarded:
            quotas[m.registration] = q
            boarded.append(m)
            boarded_quotas.append(q)
        else:
            absent.append(m.registration)
    extras = [m for m in boarded if m.extra]  # C9
    if extras and (version.extra_members is None or len(extras) == len(boarded)):
        ok = False
    if not ok or not boarded:
        errors = _check(work, version, tariffs)
        assert errors, "the one-pass checks and _check disagree"
        raise BadInput("\n".join(errors))
    return in_force, boarded, boarded_quotas, absent, quotas, extras


def _paid_stops(work: GangWork, version: RulebookVersion, prices: _Prices,
                lang: str) -> tuple[list, tuple[StatementLine, ...], int, bool]:
    """``(paid_stops, stop_lines, stop_cents, billed)``: the interruptions paid (E4 / E5 / C3 / C4 /
    E7) as ``(index, billed to the shipowner, centavos, line)``, their lines and centavos (the same
    for every member) and whether any is billed to the shipowner (C5)."""
    paid_kinds = version.interruptions
    # E4 / E5 / C3 / C4 / E7: each paid interruption is the same line for every member.
    paid_stops = []
    stop_lines: tuple[StatementLine, ...] = ()
    stop_cents = 0
    billed = False
    if work.interruptions:
        for i, stop in enumerate(work.interruptions):
            rule = paid_kinds[stop.kind]
            if stop.minutes <= rule.paid_when_over_minutes:
                continue  # E4 tide ≤ 2 h, C3 third party ≤ 20 min: not paid
            paid_stops.append((i, rule.billed_to_shipowner, *prices.stop_line(stop, lang)))
            billed = billed or rule.billed_to_shipowner
        stop_lines = tuple(line for _i, _b, _c, line in paid_stops)
        stop_cents = sum(c for _i, _b, c, _line in paid_stops)
    return paid_stops, stop_lines, stop_cents, billed


def _price_members(work: GangWork, version: RulebookVersion, prices: _Prices, lang: str, boarded: list,
                   boarded_quotas: list, quotas: dict[str, Decimal], tonnes: Decimal, work_extra: Decimal,
                   due_at: dt.datetime, gang: tuple) -> tuple[list, list, int]:
    """``(statements, priced, shares_cents)``: each boarded member's statement (no disputes) or
    ``(member, lines, total centavos, share centavos)`` to settle (disputes), and the shares'
    centavos. E2/C1 share, E3/C2 guarantee top-up (paid max(share, guarantee); both limits
    strict), the paid stops; members with the same quotas (and minutes, hourly) share one memo."""
    g = version.guarantee
    over_tonnes, full_day = tonnes > g.over_tonnes, g.above == "day"
    over_minutes = g.over_minutes - work_extra
    shares: dict[Decimal, tuple[int, StatementLine]] = {}
    top_ups: dict[tuple, StatementLine] = {}
    # quotas (and minutes, hourly) -> (lines, total centavos, share centavos, total BRL), per guarantee
    half_memo: dict[Decimal, tuple] = {}
    day_memo: dict[Decimal, tuple] = {}
    hourly_memo: dict[tuple, tuple] = {}
    priced = []  # (member, lines, total centavos, share centavos): settled below if disputed
    statements = []
    shares_cents = 0
    disputes = work.disputes
    append = statements.append
    # a registration twice among the boarded: each gets the quotas of the last (``quotas``)
    pairs = zip(boarded, boarded_quotas if len(quotas) == len(boarded) else
                [quotas[m.registration] for m in boarded])
    for m, q in pairs:
        minutes = m.minutes_worked
        # E3 / C2 (RULES.md E3): paid max(share, guarantee); both limits are strict.
        if over_tonnes and minutes > over_minutes:
            if full_day:
                memo, mkey, key = day_memo, q, "guarantee_day"
            else:
                memo, mkey, key = hourly_memo, (q, minutes), "guarantee_hourly"
        else:
            memo, mkey, key = half_memo, q, "guarantee_half"
        found = memo.get(mkey)
        if found is None:
            found = memo[mkey] = _member_lines(version, prices, lang, q, minutes, key, shares, top_ups, gang)
        lines, cents, share, total = found
        shares_cents += share
        if disputes:
            priced.append((m, lines, cents, share))
        else:
            append(MemberStatement(m.registration, m.role, q, minutes, lines, total,
                                   _NO_DISPUTE, total, due_at, (), m.minutes_typed))
    return statements, priced, shares_cents


def _member_lines(version: RulebookVersion, prices: _Prices, lang: str, q: Decimal, minutes: Decimal,
                  key: str, shares: dict, top_ups: dict, gang: tuple) -> tuple:
    """``(lines, total centavos, share centavos, total BRL)`` of a member with ``q`` quotas and
    ``minutes`` worked under the guarantee ``key`` (``guarantee_half``, ``guarantee_day`` or
    ``guarantee_hourly``): the E2/C1 share line (one per quotas, kept in ``shares``), the E3/C2
    top-up when the guarantee is higher (kept in ``top_ups``), then the paid stops."""
    labour, tq_n, tq_d, value_text, stop_lines, stop_cents = gang
    g = version.guarantee
    share_found = shares.get(q)
    if share_found is None:
        head, tail, q_n, q_d = prices.share_text(lang, q)
        cents = half_up(labour * q_n * tq_d, tq_n * q_d)  # labour × q ÷ total, divided last
        share_found = shares[q] = (cents, StatementLine.in_cents(
            version.shares.rule, version.shares.article, head + value_text + tail, to_brl(cents)))
    share, share_line = share_found
    if key == "guarantee_half":
        guarantee = prices.half_day
    elif key == "guarantee_day":
        guarantee = prices.full_day
    else:
        guarantee = prices.by_time(ONE, minutes)
    if guarantee > share:
        tkey = (key, guarantee, share, minutes if key == "guarantee_hourly" else None)
        top_up = top_ups.get(tkey)
        if top_up is None:
            top_up = top_ups[tkey] = StatementLine.in_cents(
                g.rule, g.article, prices.top_up_text(lang, key, guarantee, minutes),
                to_brl(guarantee - share))
        lines = (share_line, top_up, *stop_lines)
        cents = guarantee + stop_cents
        total = prices.guaranteed.get(cents)  # a guarantee (+ the stops): the same in many gangs
        if total is None:
            total = prices.guaranteed[cents] = to_brl(cents)
    else:
        lines = (share_line, *stop_lines)
        cents = share + stop_cents
        total = to_brl(cents)
    return lines, cents, share, total


def _labour(work: GangWork, in_force: list, version: RulebookVersion, text: dict) -> tuple[list, Decimal, int]:
    """E1: the labour lines of ``work``'s tally (``in_force``: the ``_Prices.tariff`` entry of each
    row), the tonnes as weighed (the 30 t of E3/C2, C7) and the labour amount in centavos (the sum
    of the lines, each rounded half up; C7 and C8 by ``labour_by_rules``)."""
    labour_lines = []
    tonnes = ZERO
    labour = 0
    cite = version.labour
    for row, (unit, t_n, t_d, head, tail, rules) in zip(work.tally, in_force):
        quantity = row.quantity
        if unit == "t":
            tonnes += quantity  # C7: the 30 t test of E3/C2 uses the weighed tonnage
        if rules is not None:
            cents, description = labour_by_rules(quantity, t_n, t_d, head, tail, rules, text)
        else:
            q_n, q_d = quantity.as_integer_ratio()
            cents = half_up(q_n * t_n * 100, q_d * t_d)
            description = head + format(quantity.normalize(), "f") + tail
        labour += cents
        labour_lines.append(StatementLine.in_cents(cite.rule, cite.article, description, to_brl(cents)))
    return labour_lines, tonnes, labour


def _apart_and_flagged(work: GangWork, version: RulebookVersion, members: tuple, extras: list,
                       work_extra: Decimal, composition: Composition | None, text: dict
                       ) -> tuple[tuple[MemberStatement, ...], tuple[str, ...], int, Decimal]:
    """The statements after C9 and E9/C9, and what the summary takes from them: the extras' share
    lines and pay apart (``extras_apart``), the EXTENSION_OVER_CAP flags on the members' statements
    (``extension_over_cap``); returns (members, the gang's flags with GANG_COMPOSITION first, the
    extras' shares in centavos, the administration's cost in BRL)."""
    extra_shares, administration = 0, _NO_DISPUTE
    if extras:  # C9: their pay apart, the port administration's cost
        members, extra_shares, administration = extras_apart(members, extras, version.extra_members, text)
    flags = () if composition is None else _composition_flags(work, composition)
    if version.working_day is not None:  # E9 / C9: flagged on the gang and the member's statement
        over_cap = extension_over_cap(work, version, work_extra)
        if over_cap:
            members = tuple(msgspec.structs.replace(st, flags=st.flags + (over_cap[st.registration],))
                            if st.registration in over_cap else st for st in members)
            flags += tuple(over_cap.values())
    return members, flags, extra_shares, administration


def tariff_rules(tariff: Tariff, version: RulebookVersion) -> tuple | None:
    """What C7 and C8 change in a tariff's labour lines under ``version``, or None for neither:
    ``(per_fraction_rule, surcharge)`` where ``per_fraction_rule`` is the C7 rule id when a tariff
    per tonne applies per tonne or fraction (the tariff row's ``per_fraction``, else the rulebook's
    ``per_tonne_or_fraction``; model table note a) and ``surcharge`` is ``(percent, rule, note)``
    of the class's C8 surcharge (notes d-f). The caller has checked the surcharge exists."""
    cite = version.per_tonne_or_fraction
    fraction = None
    if tariff.unit == "t":
        if tariff.per_fraction is None:
            fraction = None if cite is None else cite.rule
        elif tariff.per_fraction:
            fraction = cite.rule if cite is not None else "C7"
    surcharge = None
    if tariff.surcharge is not None:
        spec = version.surcharges[tariff.surcharge]
        surcharge = (spec.percent, spec.rule, tariff.surcharge)
    return None if fraction is None and surcharge is None else (fraction, surcharge)


def labour_by_rules(quantity: Decimal, t_n: int, t_d: int, head: str, tail: str, rules: tuple,
                    text: dict) -> tuple[int, str]:
    """(centavos, description) of one E1 labour line under C7 and C8 (``tariff_rules``): the
    quantity in tonnes rounded up to the whole tonne when the tariff applies per tonne or fraction
    (10.2 t → 11 t; the line says the weighed figure), times the tariff (``t_n / t_d`` BRL), times
    1 + the class's surcharge percent ÷ 100; one rounding half up, as every labour line."""
    fraction, surcharge = rules
    billed = quantity
    note = ""
    if fraction is not None:
        billed = quantity.to_integral_value(rounding=ROUND_CEILING)
        if billed != quantity:
            note = text["per_fraction"].format(qty=_num(quantity), rule=fraction)
    b_n, b_d = billed.as_integer_ratio()
    s_n = s_d = 1
    extra = ""
    if surcharge is not None:
        percent, rule, key = surcharge
        p_n, p_d = ratio(percent)
        s_n, s_d = p_d * 100 + p_n, p_d * 100  # 1 + percent / 100
        extra = text["class_surcharge"].format(pct=_num(percent), rule=rule, note=key)
    cents = half_up(b_n * t_n * s_n * 100, b_d * t_d * s_d)
    return cents, head + _num(billed) + tail + note + extra


EXTENSION_OVER_CAP = "EXTENSION_OVER_CAP"


def ordinary_minutes(work: GangWork) -> Decimal:
    """The ordinary duration of the gang's period in minutes: ``work.ordinary_minutes`` (its hours
    on its date in the port's time zone, set by ``csvio.assemble``), else from the period's hours
    (``07-13``: 360, ``19-01``: 360, ``07-15``: 480). Raises ``BadInput`` for a malformed period."""
    if work.ordinary_minutes is not None:
        return work.ordinary_minutes
    start, end = parse_period(work.period)
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


def _composition_flags(work: GangWork, composition: Composition | None) -> tuple[str, ...]:
    if composition is None or work.unit is None:
        return ()
    problem = composition_problem(composition, work.unit, work.units,
                                  (m.role for m in work.members if m.boarded and not m.extra))  # C9
    return () if problem is None else (problem,)


def extras_apart(members: tuple[MemberStatement, ...], extras: list[Member], cite, text: dict
                 ) -> tuple[tuple[MemberStatement, ...], int, Decimal]:
    """C9 (DL 3.844 art. 3 sole paragraph): the statements with each extra member's share line cited
    ``cite`` (C9) and saying it is the share a normal member of his role gets computed without the
    extras, at the port administration's cost; the extras' shares in centavos (to take out of the
    gang's shares total) and their pay in BRL (the sum of their totals: the administration's cost).
    The amounts are unchanged: each extra's share was computed on the quotas of the normal members
    only, as theirs."""
    regs = {m.registration for m in extras}
    out = []
    shares = 0
    cost = 0
    for st in members:
        if st.registration in regs:
            share = st.lines[0]
            line = StatementLine(cite.rule, cite.article, text["extra_share"].format(share=share.description),
                                 share.amount)
            st = msgspec.structs.replace(st, lines=(line, *st.lines[1:]), extra=True)
            shares += cents_of(share.amount)
            cost += cents_of(st.total)
        out.append(st)
    return tuple(out), shares, to_brl(cost)


_NO_DISPUTE = to_brl(0)
_NO_BILLING: tuple[tuple, int] = ((), 0)


def _settle(work: GangWork, due_at: dt.datetime, priced, quotas) -> tuple[MemberStatement, ...]:
    """The statements of a gang with disputes: totals, disputed and payable parts (E6, art. 10
    §1) of each member; ``priced`` is ``(member, lines, total centavos, share centavos)`` per
    member who boarded, ``due_at`` the E6 deadline. Raises ``BadInput`` naming each bad dispute."""
    by_member = {m.registration: lines for m, lines, _c, _s in priced}
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
    for m, lines, cents, _share in priced:
        total = to_brl(cents)
        held = to_money(min(disputed.get(m.registration, ZERO), total))
        out.append(MemberStatement(
            registration=m.registration, role=m.role, quotas=quotas[m.registration],
            minutes_worked=m.minutes_worked, lines=lines, total=total, disputed=held,
            payable=total - held, due_at=due_at,
            disputes=tuple(d for d in work.disputes if d.registration == m.registration),
            minutes_typed=m.minutes_typed))
    return tuple(out)


def _billing(work: GangWork, version: RulebookVersion, paid_stops, members: int, text) -> tuple:
    """The shipowner's billing and its total in centavos: per billed interruption what was paid
    for it to the ``members`` who boarded (C5, DL 3.844 art. 8: art. 4 §2 waits and meal hours; E7,
    DL 2.032 art. 16: the travel wages), then the surcharge on their sum (C5 10%; none printed when
    the rulebook's surcharge is 0), then the transport of each trip to an anchored ship (E7). Each a
    printed line rounded half up."""
    spec = version.shipowner_billing
    billed = [(i, cents) for i, is_billed, cents, _line in paid_stops if is_billed]
    if spec is None or not billed:
        return (), 0
    lines = []
    base = 0
    for i, cents in billed:
        stop = work.interruptions[i]
        rule = version.interruptions[stop.kind]
        base += cents * members
        lines.append(StatementLine.in_cents(spec.rule, spec.article, text["billing"].format(
            what=f"{rule.rule} {stop.kind} {_num(stop.minutes)} min", source=stop.source,
            n=members), to_brl(cents * members)))
    total = base
    if spec.surcharge:
        s_n, s_d = ratio(spec.surcharge)
        surcharge = half_up(base * s_n, s_d)
        total += surcharge
        lines.append(StatementLine.in_cents(spec.rule, spec.article, text["surcharge"].format(
            pct=_num(spec.surcharge * 100), base=to_brl(base)), to_brl(surcharge)))
    for i, _cents in billed:
        stop = work.interruptions[i]
        if stop.transport is not None:
            fare = cents_of(stop.transport)
            total += fare
            lines.append(StatementLine.in_cents(spec.rule, spec.article, text["transport"].format(
                source=stop.source, amount=to_money(stop.transport)), to_brl(fare)))
    return tuple(lines), total


def pay_gangs(works: Iterable[GangWork], rulebook: Rulebook, tariffs: TariffTable,
              *, lang: str = "pt-BR", composition: Composition | None = None) -> list[GangResult]:
    """``pay_gang`` for each gang; raises one ``BadInput`` listing the problems of every gang, so a
    batch is either wholly computed or not at all."""
    results, errors = [], []
    prices: dict = {}  # per rulebook version, for the whole batch
    with gc_paused(long_lived=True):  # ~10^5 acyclic statements kept: no collector passes over them
        for work in works:
            try:
                results.append(pay_gang(work, rulebook, tariffs, lang=lang, composition=composition,
                                        _prices=prices))
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
