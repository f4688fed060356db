"""``{% readable_exports study as files %}``: the names of the study's exports the page's user
may read (:func:`collector.exports.registry.readable`), so that a page lists only those (a
viewer sees no link to a participant-data file)."""

from __future__ import annotations

from typing import Any

from django import template

from collector.exports import registry
from collector.models import Study

register = template.Library()


@register.simple_tag(takes_context=True)
def readable_exports(context: dict[str, Any], study: Study) -> frozenset[str]:
    return registry.readable(context["request"].user, study)
