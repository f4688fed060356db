"""The study page's live figures (:func:`collector.reports.live.live_status`): what
``/staff/<slug>/live.json`` serves and the page polls every few seconds, with the pay rate from
the page. ``GET /api/v1/staff/studies/<slug>/live?rate=`` is the staff API's view of the same,
with the open ballot's items without an answered comparison, the interim ranking (each item's
probability of being in the top ``k``) and the full reliability report.
"""

from __future__ import annotations

import math

from django.http import HttpRequest, JsonResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import get_study, staff_required
from collector.reports.live import live_status
from collector.reports.reliability import annotate_interim
from collector.reports.tables import interim_ranking
from collector.staff.study_api import ERRORS, StudyView
from collector.studies.reliability import latest_report


def hourly_rate(text: str | None) -> float | None:
    """The pay rate given to the page or the API (None when absent or not a number >= 0)."""
    try:
        rate = float(text or "")
    except ValueError:
        return None
    return rate if math.isfinite(rate) and rate >= 0 else None


@staff_required
def live_json(request: HttpRequest, slug: str) -> JsonResponse:
    study = get_study(request, slug)
    return JsonResponse(live_status(study, hourly_rate(request.GET.get("rate"))))


class LiveView(StudyView):
    @extend_schema(
        operation_id="staff_live",
        parameters=[OpenApiParameter("rate", float, description="Pay per hour, for the cost")],
        responses={200: dict, **ERRORS},
    )
    def get(self, request: Request, slug: str) -> Response:
        """The open ballot's progress (with its items without an answered comparison), the
        projection of time and cost (Eq. 10), and the interim ranking."""
        study = self.study(request, slug)
        rate = hourly_rate(request.query_params.get("rate"))
        status = live_status(study, rate, unanswered=True)
        interim = interim_ranking(study)
        rows = interim.get("interim_rows", [])
        report = latest_report(study)
        settled = annotate_interim(report, rows) if rows else {}
        chances = settled.get("interim_probability") or [None] * len(rows)
        status["interim"] = {
            "after_ballot": interim.get("interim_after"),
            "score": interim.get("interim_field"),
            "settled": settled.get("interim_settled"),
            "rows": [
                {
                    **dict(zip(("item_id", "area", "token_a", "token_b", "score"), r, strict=True)),
                    "top_k": None if chance is None else chance[0],
                    "probability": None if chance is None else chance[1],
                }
                for r, chance in zip(rows, chances, strict=True)
            ],
        }
        status["reliability"]["report"] = report
        return Response(status)
