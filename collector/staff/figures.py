"""A study's figures on the web: the figures page, each figure as a file (SVG, PNG, PDF) and
``GET /api/v1/staff/studies/<slug>/figures`` (every figure's name, title, text alternative and
file URLs). The figures are drawn by :mod:`collector.staff.study_figures`.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.utils.safestring import mark_safe
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import get_study, staff_required
from collector.staff import study_figures
from collector.staff.study_api import ERRORS, StudyView


@staff_required
def figures_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study(request, slug)
    shown = [
        {"name": f.name, "title": f.title, "text": f.text, "svg": mark_safe(f.svg())}  # noqa: S308
        for f in study_figures.study_figures(study)
    ]
    return render(request, "staff/study_figures.html", {"study": study, "figures": shown})


@staff_required
def figure_file(request: HttpRequest, slug: str, name: str, fmt: str) -> HttpResponseBase:
    study = get_study(request, slug)
    found = {f.name: f for f in study_figures.study_figures(study)}
    if fmt not in study_figures.FORMATS or name not in found:
        return HttpResponse("No such figure (formats: svg, png, pdf).", status=404)
    response = HttpResponse(found[name].render(fmt), content_type=study_figures.FORMATS[fmt])
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{name}.{fmt}"'
    return response


class FiguresView(StudyView):
    @extend_schema(operation_id="staff_figures", responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        """The study's figures: name, title, text alternative and a URL per format."""
        study = self.study(request, slug)
        base = request.build_absolute_uri(f"/staff/{study.slug}/figures/")
        return Response(
            {
                "figures": [
                    {
                        "name": f.name,
                        "title": f.title,
                        "text": f.text,
                        "files": {fmt: f"{base}{f.name}.{fmt}" for fmt in study_figures.FORMATS},
                    }
                    for f in study_figures.study_figures(study)
                ]
            }
        )
