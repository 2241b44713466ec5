"""Gate rules G1-G11 (RULES.md), pure. ``decide`` lives in ``edge.rules.engine``."""

from edge.rules.engine import decide

__all__ = ["decide"]
