"""A study's figures on the web: the figures page, each figure as a file (SVG, PNG, PDF) and
``GET /api/v1/staff/studies/<slug>/figures`` (every figure's name, title, text alternative and
file URLs). The figures are drawn by :mod:`collector.reports.figures`. A target study's top
figures are of one target: ``?target=NAME`` (a picker on the page; the first target by default).
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.utils.text import slugify
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import get_study, staff_required
from collector.reports import figures as study_figures
from collector.staff.study_api import ERRORS, StudyView
from collector.studies import vote_sets


@staff_required
def figures_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study(request, slug)
    targets = study_figures.targets_of(study)
    target = _target(request.GET.get("target"), targets)
    shown = [
        {"name": f.name, "title": f.title, "text": f.text, "svg": mark_safe(f.svg())}  # noqa: S308
        for f in study_figures.study_figures(study, target)
    ]
    context = {
        "study": study, "figures": shown, "targets": targets, "target": target,
        "stale": vote_sets.stale_figures(study),
    }  # fmt: skip
    return render(request, "staff/study_figures.html", context)


def _target(asked: str | None, targets: list[str]) -> str | None:
    """The target a request asks for, else the first (None for an area study)."""
    if not targets:
        return None
    return asked if asked in targets else targets[0]


@staff_required
def figure_file(request: HttpRequest, slug: str, name: str, fmt: str) -> HttpResponseBase:
    study = get_study(request, slug)
    target = _target(request.GET.get("target"), study_figures.targets_of(study))
    found = {f.name: f for f in study_figures.study_figures(study, target)}
    if fmt not in study_figures.FORMATS or name not in found:
        return HttpResponse("No such figure (formats: svg, png, pdf).", status=404)
    response = HttpResponse(found[name].render(fmt), content_type=study_figures.FORMATS[fmt])
    which = "" if target is None else "-" + slugify(target)
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{name}{which}.{fmt}"'
    return response


class FiguresView(StudyView):
    @extend_schema(
        operation_id="staff_figures",
        parameters=[OpenApiParameter("target", str, description="A target study's target")],
        responses={200: dict, **ERRORS},
    )
    def get(self, request: Request, slug: str) -> Response:
        """The study's figures: name, title, text alternative and a URL per format."""
        study = self.study(request, slug)
        targets = study_figures.targets_of(study)
        target = _target(request.query_params.get("target"), targets)
        base = request.build_absolute_uri(f"/staff/{study.slug}/figures/")
        query = "" if target is None else "?" + urlencode({"target": target})
        return Response(
            {
                "target": target,
                "targets": targets,
                "figures": [
                    {
                        "name": f.name,
                        "title": f.title,
                        "text": f.text,
                        "files": {
                            fmt: f"{base}{f.name}.{fmt}{query}" for fmt in study_figures.FORMATS
                        },
                    }
                    for f in study_figures.study_figures(study, target)
                ],
                "stale": vote_sets.as_json(vote_sets.stale_figures(study)),
            }
        )
