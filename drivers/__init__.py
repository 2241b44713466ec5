"""Card readers. Each reader family lives in one module and yields ``CardRead`` values; drivers know
nothing of rules (DESIGN.md). See ``drivers.base`` for the interface."""

__all__ = ["CardRead", "Reader"]


def __getattr__(name: str):
    """``drivers.CardRead``, ``drivers.Reader`` (``drivers.base``), imported when first asked for:
    ``drivers.options`` (a gate config's check, the watchman's screen too) does not need the
    readers' types and ``portgate.records`` (0.8 MB of the screen's 40, issue 33)."""
    if name in __all__:
        from drivers import base

        return getattr(base, name)
    raise AttributeError(f"module 'drivers' has no attribute {name!r}")
