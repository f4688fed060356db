"""The leaderboard's paired difference between two models on the web: the study page's form
(POST, computed in the background) and ``/api/v1/staff/studies/<slug>/evaluations/paired``
(GET: every comparison; POST ``{"a": id, "b": id}``: A minus B). See
:mod:`collector.evaluation.paired`."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import CHANGE, get_study, staff_required
from collector.audit.trail import record
from collector.evaluation import paired
from collector.models import Evaluation, ModelComparison, Study
from collector.staff.study_api import ERRORS, StudyView


def _compare(request: HttpRequest, study: Study, a: int, b: int) -> ModelComparison:
    """Ask for A minus B; a new (or failed) comparison's job is recorded in the audit trail."""
    with transaction.atomic():
        pair, sent = paired.request(study, a, b)
        if sent:
            record(request, "evaluation.compare", study, a=a, b=b)
    return pair


def page_context(study: Study) -> dict[str, Any]:
    """The study page's comparison form (the finished models) and the comparisons made."""
    done = Evaluation.objects.filter(study=study, status=Evaluation.Status.DONE).order_by("name")
    return {
        "pair_choices": list(done.values_list("pk", "name")),
        "pairs": paired.rows(study),
        "pair_metrics": paired.metrics_of(study),
    }


MAX_ID = 2**63 - 1  # an id past PostgreSQL's bigint is no evaluation (not a database error)


def _ids(data: Any) -> tuple[int, int]:
    try:
        # A JSON list or number has no get: refused as well.
        ids = int(data.get("a")), int(data.get("b"))
    except (AttributeError, TypeError, ValueError):
        ids = (0, 0)
    if not all(1 <= i <= MAX_ID for i in ids):
        raise paired.PairRefused("choose two models (a and b: evaluation ids)")
    return ids


@staff_required
@require_POST
def compare(request: HttpRequest, slug: str) -> HttpResponse:
    """Compare two models (an editor's action): computed in the background."""
    study = get_study(request, slug, CHANGE)
    try:
        a, b = _ids(request.POST)
        _compare(request, study, a, b)
    except paired.PairRefused as exc:
        messages.error(request, f"Not compared: {exc}.")
    else:
        messages.success(request, "The two models are being compared; the result appears below.")
    return redirect(f"/staff/{study.slug}/#paired")


class PairedView(StudyView):
    @extend_schema(operation_id="staff_evaluations_paired", responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        """Every comparison of two models of the study: A minus B per metric (``difference``,
        the 2.5-97.5% interval over the voter resamples ``low``/``high``, ``a_better``: the
        share of resamples in which A scores higher), its status, resamples and seed."""
        return Response({"paired": paired.rows(self.study(request, slug))})

    @extend_schema(
        operation_id="staff_evaluations_paired_create",
        request={
            "application/json": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            }
        },
        responses={202: dict, **ERRORS},
    )
    def post(self, request: Request, slug: str) -> Response:
        """Compare model ``a`` with model ``b`` (evaluation ids, both finished, the same
        missing-score rule): computed in the background; GET shows it once done."""
        study = self.study(request, slug, CHANGE)
        try:
            a, b = _ids(request.data)
            pair = _compare(request, study, a, b)
        except paired.PairRefused as exc:
            raise ValidationError({"detail": str(exc)}) from None
        found = next(r for r in paired.rows(study) if r["id"] == pair.pk)
        return Response(found, status=202)
