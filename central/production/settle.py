"""A gang's disputes and the shipowner's billing (RULES.md E6 art. 10 §1; C5, DL 3.844 art. 8; E7,
DL 2.032 art. 16): the statements' disputed and payable parts, and the billing lines with their
total in centavos. Pure."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from central.pay.cents import cents_of, half_up, ratio, to_brl
from central.pay.lines import StatementLine, money_sum, to_money
from central.production.line_texts import quantity_text as _num
from central.production.model import GangWork, MemberStatement
from central.production.prices import ZERO
from central.production.rulebook import RulebookVersion
from portgate.errors import BadInput

NO_DISPUTE = to_brl(0)


NO_BILLING: tuple[tuple, int] = ((), 0)


def settle_disputes(work: GangWork, due_at: dt.datetime, priced, quotas) -> tuple[MemberStatement, ...]:
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


def shipowner_billing(work: GangWork, version: RulebookVersion, paid_stops, members: int, text) -> tuple:
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

