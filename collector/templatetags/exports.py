"""The study's exports a page lists, from :mod:`collector.exports.registry` (a page lists only
those its user may read, so a viewer sees no link to a participant-data file):

- ``{% readable_exports study as files %}``: the names of the files the user may read
  (:func:`collector.exports.registry.readable`);
- ``{% study_exports study as files %}``: the files the user may read and the study has now, in
  the registry's order, each with its download URL and the URL of its rows in the API (or
  None): the study page's list of files."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import template
from django.urls import reverse

from collector.exports import registry
from collector.models import Study

register = template.Library()


@register.simple_tag(takes_context=True)
def readable_exports(context: dict[str, Any], study: Study) -> frozenset[str]:
    return registry.readable(context["request"].user, study)


@register.simple_tag(takes_context=True)
def study_exports(context: dict[str, Any], study: Study) -> list[dict[str, Any]]:
    readable = registry.readable(context["request"].user, study)
    asked: dict[Callable[[Study], bool], bool] = {}
    return [
        {
            "export": export,
            "url": reverse(export.url_name, args=[study.slug]),
            "api": reverse(export.api.url_name, args=[study.slug]) if export.api else None,
        }
        for export in registry.EXPORTS
        if export.name in readable and export.listed(study, asked)
    ]
