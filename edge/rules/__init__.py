"""Gate rules G1-G11 (RULES.md), pure. ``decide`` lives in ``edge.rules.engine``."""

__all__ = ["decide"]


def __getattr__(name: str):
    """``edge.rules.decide``, imported when first asked for: the watchman's screen reads only the
    rulebook (``edge.rules.rulebook``) and does not load the engine (1 MB of its 40 MB)."""
    if name == "decide":
        from edge.rules.engine import decide  # lazy: see the docstring

        return decide
    raise AttributeError(f"module 'edge.rules' has no attribute {name!r}")
