"""Integer centavos: the money arithmetic inside the pay engines (pure).

Rulebook figures (wages, rates, multipliers, tariffs) are ``Decimal`` at the edge; the engines turn
each into an exact integer fraction ``n / 10**k`` (``scaled``), multiply integers, and round once
to whole centavos half up (``half_up``: RULES.md, "each line is rounded to the cent, half up"; an
exact half centavo goes away from zero, as ``Decimal.quantize(ROUND_HALF_UP)``). Results go back
to ``Decimal`` BRL with two places (``to_brl``), so statements print and store as before.
"""

from __future__ import annotations

from decimal import Decimal


def scaled(value: Decimal) -> tuple[int, int]:
    """``value`` as ``(n, k)`` with ``value == n / 10**k`` exactly, ``k >= 0``
    (``Decimal("1.20") -> (120, 2)``, ``Decimal("180") -> (180, 0)``). Raises ``ValueError`` for
    an infinite or NaN value."""
    if not value.is_finite():
        raise ValueError(f"not a finite amount: {value}")
    exponent = value.as_tuple().exponent
    if exponent >= 0:
        return int(value), 0
    return int(value.scaleb(-exponent)), -exponent


def half_up(numerator: int, denominator: int) -> int:
    """``numerator / denominator`` rounded to an integer, an exact half away from zero
    (``half_up(1225, 200) == 6``, ``half_up(-5, 10) == -1``). ``denominator`` must be positive."""
    if numerator >= 0:
        return (2 * numerator + denominator) // (2 * denominator)
    return -((2 * -numerator + denominator) // (2 * denominator))


def cents_of(value: Decimal, times: int = 1, per: int = 1) -> int:
    """Centavos of ``value × times ÷ per`` (BRL), rounded once, half up."""
    n, k = scaled(value)
    return half_up(n * times * 100, per * 10 ** k)


def to_brl(cents: int) -> Decimal:
    """Centavos as ``Decimal`` BRL with two places (``18000 -> Decimal('180.00')``)."""
    return Decimal(cents).scaleb(-2)
