"""How the pages, the card and the commands word a number: a share as a percentage that never
reads 0% or 100% unless it is exactly that, and a count with its noun in the singular or plural.
"""

from __future__ import annotations

__all__ = ["count", "percent"]


def percent(share: float) -> str:
    """A share from 0 to 1 as a whole percentage: ``"88%"``; ``"over 99%"`` for 0.999 and
    ``"under 1%"`` for 0.001 (rounding never says "all" or "none" when it is not)."""
    value = float(share)
    shown = round(100 * value)
    if shown >= 100 and value < 1:
        return "over 99%"
    if shown <= 0 < value:
        return "under 1%"
    return f"{shown}%"


def count(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` and its noun: ``"1 comparison"``, ``"2 comparisons"``, ``"1,000 comparisons"``."""
    noun = singular if n == 1 else (plural or f"{singular}s")
    return f"{n:,} {noun}"
