"""What a rulebook version prices the same for every gang (RULES.md E1, E2, E4-E8, C1, C7, C8): member
quotas, amounts by time, tariffs in force with their C7/C8 rules, in integer centavos, worked out
once per batch by ``GangPrices``. Pure: no I/O, no clock."""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_CEILING, Context, Decimal, localcontext

from central.pay.cents import half_up, ratio, to_brl
from central.pay.lines import StatementLine, to_money
from central.production.line_texts import TEXT, UNIT_WORDS
from central.production.line_texts import quantity_text as _num
from central.production.line_texts import rate_text as _brl
from central.production.model import Member, Tariff, TariffTable
from central.production.rulebook import RulebookVersion

ZERO = Decimal(0)


ONE = Decimal(1)


SIXTY = Decimal(60)


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


class GangPrices:
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

