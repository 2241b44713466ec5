"""Integer centavos: the money arithmetic inside the pay engines (pure).

Rulebook figures (wages, rates, multipliers, tariffs) are ``Decimal`` at the edge; the engines turn
each into an exact integer fraction ``n / d`` (``ratio``), multiply integers, and round once to
whole centavos half up (``half_up``: RULES.md, "each line is rounded to the cent, half up"; an
exact half centavo goes away from zero, as ``Decimal.quantize(ROUND_HALF_UP)``). Results go back
to ``Decimal`` BRL with two places (``to_brl``), so statements print and store as before.
"""

from __future__ import annotations

from decimal import Decimal


def ratio(value: Decimal) -> tuple[int, int]:
    """``value`` as ``(n, d)`` with ``value == n / d`` exactly and ``d > 0``
    (``Decimal("1.20") -> (6, 5)``). Raises ``ValueError`` for an infinite or NaN value."""
    try:
        return value.as_integer_ratio()
    except (OverflowError, ValueError) as exc:
        raise ValueError(f"not a finite amount: {value}") from exc


def half_up(numerator: int, denominator: int) -> int:
    """``numerator / denominator`` rounded to an integer, an exact half away from zero
    (``half_up(1225, 200) == 6``, ``half_up(-5, 10) == -1``). ``denominator`` must be positive."""
    if numerator >= 0:
        return (2 * numerator + denominator) // (2 * denominator)
    return -((2 * -numerator + denominator) // (2 * denominator))


def cents_of(value: Decimal, times: int = 1, per: int = 1) -> int:
    """Centavos of ``value × times ÷ per`` (BRL), rounded once, half up."""
    n, d = ratio(value)
    return half_up(n * times * 100, d * per)


def to_brl(cents: int) -> Decimal:
    """Centavos as ``Decimal`` BRL with two places (``18000 -> Decimal('180.00')``). Not cached:
    a pay run's amounts are mostly distinct, and a cache's miss costs more than the conversion."""
    return Decimal(cents).scaleb(-2)
