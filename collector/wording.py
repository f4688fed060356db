"""How the pages, the card and the commands word a number: a share as a percentage that never
reads 0% or 100% unless it is exactly that, a count with its noun in the singular or plural, and
the number of errors a form's summary lists."""

from __future__ import annotations

from typing import Any

__all__ = ["count", "error_count", "percent"]


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


def error_count(form: Any) -> int:
    """How many errors a bound Django form has, its own and every field's."""
    return sum(len(errors) for errors in form.errors.values())
