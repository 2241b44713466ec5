"""Card readers. Each reader family lives in one module and yields ``CardRead`` values; drivers know
nothing of rules (DESIGN.md). See ``drivers.base`` for the interface."""

from drivers.base import CardRead, Reader

__all__ = ["CardRead", "Reader"]
