"""The crowd page and the staff API's view of the crowd's measured noise (the fit and its
predictions: :mod:`collector.reports.crowd`). ``GET /api/v1/staff/studies/<slug>/crowd?predict=1``
is the staff API's view of the fit (with the study's own plan predicted when asked; 409 before
enough votes).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import PARTICIPANTS, get_study, refusal, staff_required, visible_studies
from collector.models import Study, Vote
from collector.reports.crowd import NotEnoughVotes, fitted_crowd, predict_plan, simulator_command
from collector.staff.study_api import ERRORS, Conflict, StudyView
from collector.studies.designs import study_design


def crowd_choices(user: Any) -> list[tuple[str, str]]:
    """The studies whose crowd a staff member may plan with: theirs, with votes."""
    studies = visible_studies(user).filter(
        Exists(Vote.objects.filter(ballot__study=OuterRef("pk")))
    )
    return [(s.slug, s.name) for s in studies.order_by("-created_at")]


def spread(bounds: list[float], mean: float) -> str:
    """A fitted range as the page says it (3 decimals): ``uniform on [a, b], mean m``, or
    ``a for every voter`` when the fit found no spread at that precision."""
    low, high = (f"{v:.3f}" for v in bounds)
    if low == high:
        return f"{low} for every voter (the fit finds no spread between voters)"
    return f"uniform on [{low}, {high}], mean {mean:.3f}"


def _context(study: Study, predict_own: bool, per_voter: bool) -> dict[str, Any]:
    try:
        crowd = fitted_crowd(study)
    except NotEnoughVotes as exc:
        return {"study": study, "refused": str(exc)}
    summary = crowd["summary"]
    context: dict[str, Any] = {"study": study, "summary": summary}
    context["sigma_text"] = spread(summary["sigma_range"], summary["sigma_mean"])
    context["eps_text"] = spread(summary["eps_range"], summary["eps_mean"])
    # Each voter's noise is participant data (as crowd.csv): a viewer sees the summary only.
    context["voters"] = crowd["model"]["voters"] if per_voter else []
    context["command"] = simulator_command("run", [study_design(study)])
    if predict_own:
        context["prediction"] = predict_plan(crowd, study)
    return context


@staff_required
def crowd_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study(request, slug)
    per_voter = request.user.has_perm(PARTICIPANTS, study)
    context = _context(study, "predict" in request.GET, per_voter)
    context["hidden"] = "" if per_voter else refusal(request.user, study, PARTICIPANTS)
    return render(request, "staff/crowd.html", context)


class CrowdView(StudyView):
    @extend_schema(
        operation_id="staff_crowd",
        parameters=[OpenApiParameter("predict", bool, description="Simulate the study's plan")],
        responses={200: dict, **ERRORS, 409: dict},
    )
    def get(self, request: Request, slug: str) -> Response:
        """The paper's voter model fitted to the study's votes: the crowd file (per-voter
        sigma* and epsilon, the crowd's ranges) and its summary; with ``predict``, what the
        study's plan reaches with this crowd (every design, the study's estimator, and the
        smallest M with which each reaches the rho_w of the reference design: the paper's
        adaptive one, or the study's when adaptive is not registered)."""
        study = self.study(request, slug)
        try:
            fitted = fitted_crowd(study)
        except NotEnoughVotes as exc:
            raise Conflict(str(exc)) from None
        crowd = fitted["model"]
        if not request.user.has_perm(PARTICIPANTS, study):  # each voter's noise: as crowd.json
            crowd = {k: v for k, v in crowd.items() if k != "voters"}
        body = {"summary": fitted["summary"], "crowd": crowd}
        if request.query_params.get("predict") in ("1", "true", "yes"):
            body["prediction"] = predict_plan(fitted, study)
        return Response(body)
