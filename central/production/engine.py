"""The production-pay engine (RULES.md E1-E9, C1-C9). Pure: no I/O, no clock, no environment.

``pay_gang(work, rulebook, tariffs)`` turns what one gang did (members who boarded, cargo tallied,
waits and stoppages) into per-member statement lines, a gang summary and the shipowner's billing
lines. ``monthly_top_up`` is C6. The priced parts live beside it: ``line_texts`` (the printed
words), ``prices`` (what a rulebook version prices once per batch), ``work_checks`` (the checks
and work-time facts), ``settle`` (disputes, the shipowner's billing, the C9 extras' pay apart).

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
from decimal import ROUND_HALF_UP, Decimal

import msgspec

from central.pay.cents import half_up, ratio, to_brl
from central.pay.lines import CENT, StatementLine, money_sum, to_money
from central.production.composition import Composition
from central.production.line_texts import TEXT, UNIT_WORDS  # noqa: F401 (UNIT_WORDS: re-exported)
from central.production.line_texts import quantity_text as _num
from central.production.model import GangResult, GangSummary, GangWork, MemberStatement, TariffTable
from central.production.prices import ONE, ZERO, by_time, labour_by_rules, tariff_rules  # noqa: F401 (tariff_rules: re-exported)
from central.production.prices import GangPrices as _Prices
from central.production.rulebook import Rulebook, RulebookVersion
from central.production.settle import NO_BILLING as _NO_BILLING
from central.production.settle import NO_DISPUTE as _NO_DISPUTE
from central.production.settle import extras_apart
from central.production.settle import settle_disputes as _settle
from central.production.settle import shipowner_billing as _billing
from central.production.work_checks import composition_flags as _composition_flags
from central.production.work_checks import extension_over_cap, work_time_extra
from central.production.work_checks import work_problems as _check
from portgate.errors import BadInput
from portgate.gctune import paused as gc_paused


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
    work_extra = work_time_extra(work, version)  # E7, E9: travel, E8 stoppage are work time
    members, billing, billing_cents, shares_cents = _pay_members(
        work, version, prices, lang, boarded, boarded_quotas, quotas, tonnes, work_extra,
        (labour, *ratio(total_quotas), value_text))
    members, flags, extra_shares, administration = _apart_and_flagged(
        work, version, members, extras, work_extra, composition, text)
    shares_total = to_brl(shares_cents - extra_shares)
    summary = GangSummary(  # positional, in field order (the hot path)
        work.gang_id, work.ship, work.date, work.period, rulebook.id, version.effective_from,
        tuple(labour_lines), labour_amount, tonnes, total_quotas, quota_value, shares_total,
        labour_amount - shares_total, tuple(absent), flags, tuple(m.registration for m in extras),
        administration)
    return GangResult(summary, members, billing, to_brl(billing_cents) if billing else _NO_DISPUTE)


def _pay_members(work: GangWork, version: RulebookVersion, prices: _Prices, lang: str, boarded: list,
                 boarded_quotas: list, quotas: dict[str, Decimal], tonnes: Decimal, work_extra: Decimal,
                 labour: tuple) -> tuple[tuple[MemberStatement, ...], tuple, int, int]:
    """``(members, billing lines, billing centavos, shares centavos)``: the paid stops (E4 / E5 / C3 /
    C4 / E7), each boarded member's statement due at the E6 deadline (``labour``: the labour
    centavos, the total quotas as a ratio and the quota value as printed), settled when the gang
    has disputes (E6), and the shipowner's billing of the billed stops (C5 / E7)."""
    paid_stops, stop_lines, stop_cents, billed = _paid_stops(work, version, prices, lang)
    due_at = work.service_end + prices.deadline
    statements, priced, shares_cents = _price_members(
        work, version, prices, lang, boarded, boarded_quotas, quotas, tonnes, work_extra, due_at,
        (*labour, stop_lines, stop_cents))
    members = _settle(work, due_at, priced, quotas) if work.disputes else tuple(statements)
    billing, billing_cents = (_billing(work, version, paid_stops, len(boarded), TEXT[lang]) if billed
                              else _NO_BILLING)
    return members, billing, billing_cents, shares_cents


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
    found = cache.get(work.date)  # the last rulebook's version and prices on this date
    if found is not None and found[0] is rulebook:
        return found[1], found[2]
    version = _version(rulebook, work, cache)
    prices = cache.get(id(version))
    if prices is None or prices.version is not version:
        prices = cache[id(version)] = _Prices(version)
    cache[work.date] = (rulebook, version, prices)
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
