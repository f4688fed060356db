"""``{% load wording %}``: the pages' words for numbers (:mod:`collector.wording`):
``{{ share|percent }}`` (``"over 99%"`` for 0.999, never ``"100%"`` unless it is) and
``{{ form|error_count }}`` (how many errors a form's summary lists, for any form)."""

from __future__ import annotations

from typing import Any

from django import template

from collector import wording

register = template.Library()


@register.filter
def percent(share: Any) -> str:
    """A share from 0 to 1 as :func:`collector.wording.percent` words it ("" when not a number)."""
    try:
        return wording.percent(float(share))
    except (TypeError, ValueError):
        return ""


@register.filter
def error_count(form: Any) -> int:
    """How many errors ``form`` has (every field's and the form's own)."""
    return wording.error_count(form)
