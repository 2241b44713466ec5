"""Statement lines and money rounding shared by every pay engine (watchmen P1-P7, production E/C).

Money is ``Decimal`` in BRL. Each line is rounded to the cent, half up, when it is built; a total is
the sum of the already-rounded lines (RULES.md P: "each line is rounded to the cent, half up ...
the total is the sum of the rounded lines").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")


def to_money(value: Decimal | int | str) -> Decimal:
    """Round ``value`` to the cent, half up (R$ 1.005 -> 1.01). Floats are refused (``TypeError``):
    build Decimals from strings or ints so no binary rounding sneaks in."""
    if isinstance(value, float):
        raise TypeError("money must not be a float; use Decimal(str) or int")
    try:
        return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)
    except InvalidOperation as exc:
        raise ValueError(f"not a money amount: {value!r}") from exc


def money_sum(amounts: Iterable[Decimal]) -> Decimal:
    """Sum already-rounded amounts; the result is quantized to the cent (``Decimal('0.00')`` if empty)."""
    return to_money(sum(amounts, Decimal(0)))


def money_str(value: Decimal) -> str:
    """Money as printed in reports: always two decimals (``'180.00'``)."""
    return str(to_money(value))


@dataclasses.dataclass(frozen=True, slots=True)
class StatementLine:
    """One line of a pay statement: the rule that produced it (``"P2"``, ``"E2"``), the legal
    article (``"83.611 art. 26 a"``), a plain description and the amount, already rounded to the cent.

    Building a line rounds ``amount`` half up to the cent, so every line in a statement is in cents.
    """

    rule: str
    article: str
    description: str
    amount: Decimal

    def __post_init__(self) -> None:
        object.__setattr__(self, "amount", to_money(self.amount))

    @classmethod
    def in_cents(cls, rule: str, article: str, description: str, amount: Decimal) -> StatementLine:
        """A line whose ``amount`` is already whole cents (``central.pay.cents.to_brl``): built
        without rounding it again (the engines' hot path)."""
        line = object.__new__(cls)
        _set_rule(line, rule)
        _set_article(line, article)
        _set_description(line, description)
        _set_amount(line, amount)
        return line


_set_rule = StatementLine.rule.__set__  # type: ignore[attr-defined]  # slot descriptors
_set_article = StatementLine.article.__set__  # type: ignore[attr-defined]
_set_description = StatementLine.description.__set__  # type: ignore[attr-defined]
_set_amount = StatementLine.amount.__set__  # type: ignore[attr-defined]
