"""A gang's disputes and the shipowner's billing (RULES.md E6 art. 10 §1; C5, DL 3.844 art. 8; E7,
DL 2.032 art. 16): the statements' disputed and payable parts, and the billing lines with their
total in centavos; the C9 extra members' pay apart, at the port administration's cost
(``extras_apart``). Pure."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import msgspec

from central.pay.cents import cents_of, half_up, ratio, to_brl
from central.pay.lines import StatementLine, money_sum, to_money
from central.production.line_texts import quantity_text as _num
from central.production.model import GangWork, Member, MemberStatement
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
