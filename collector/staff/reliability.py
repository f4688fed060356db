"""The study's reliability on the web: the study page's Reliability box, the Now box's settled-top
sentence and the interim ranking's probabilities (page parts, from
:mod:`collector.reports.reliability`), the box alone (the page's script
puts it in place when the figures change), a typed ``k`` and the settled threshold (POST), and
``/api/v1/staff/studies/<slug>/reliability`` (GET: the latest report; POST ``{"k": 30}``: a
typed top; PATCH ``{"threshold": 0.9}``). The figures are computed in the background after each
ballot's close (:mod:`collector.studies.reliability`); the page shows "computing…" until they
are stored.
"""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import CHANGE, get_study, staff_required
from collector.audit.trail import record
from collector.models import Study
from collector.reports.reliability import box
from collector.staff.study_api import ERRORS, StudyView
from collector.studies import reliability, typed_tops


@staff_required
@require_POST
def top_k(request: HttpRequest, slug: str) -> HttpResponse:
    """A typed ``k``: its settled top is computed in the background (an editor's action)."""
    study = get_study(request, slug, CHANGE)
    try:
        k = int(request.POST.get("k", ""))
        with transaction.atomic():
            _, sent = typed_tops.request_k(study, k)
            if sent:
                record(request, "reliability.top_k", study, k=k)
    except ValueError as exc:
        text = str(exc) if isinstance(exc, reliability.ReliabilityRefused) else "k must be a number"
        messages.error(request, f"Top k not computed: {text}.")
    else:
        messages.success(request, f"The top {k} is being computed; it appears here when ready.")
    return redirect(f"/staff/{study.slug}/#reliability")


@staff_required
@require_GET
def reliability_box(request: HttpRequest, slug: str) -> HttpResponse:
    """The Reliability box as the study page shows it (an HTML fragment): the page's script puts
    it in place of its own when the figures change (a report stored, a typed top computed)."""
    study = get_study(request, slug)
    return render(request, "staff/_reliability.html", {"study": study, **box(study)})


@staff_required
@require_POST
def threshold(request: HttpRequest, slug: str) -> HttpResponse:
    """The probability every item of a top needs for the top to be settled (an editor's)."""
    study = get_study(request, slug, CHANGE)
    try:
        value = _set_threshold(request, study, request.POST.get("threshold", ""))
    except reliability.ReliabilityRefused as exc:
        messages.error(request, f"Threshold not changed: {exc}.")
    else:
        messages.success(request, f"A top is now settled when every item in it is at {value}.")
    return redirect(f"/staff/{study.slug}/#reliability")


def _set_threshold(request: HttpRequest | Request, study: Study, value: object) -> float:
    """Set the study's threshold and record who did (one transaction); the threshold it has
    already changes nothing and records nothing."""
    before = study.settled_threshold
    with transaction.atomic():
        threshold = reliability.set_threshold(study, value)
        if threshold != before:
            record(request, "reliability.threshold", study, threshold=threshold, before=before)
    return threshold


class ReliabilityView(StudyView):
    @extend_schema(operation_id="staff_reliability", responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        """The study's latest reliability report (``report``: None until the first ballot's
        figures are stored), the ballot whose figures are computing (``pending_ballot``) and an
        error when the newest figures could not be computed."""
        study = self.study(request, slug)
        return Response(reliability.status(study).as_dict())

    @extend_schema(
        operation_id="staff_reliability_k",
        request={"application/json": {"type": "object", "properties": {"k": {"type": "integer"}}}},
        responses={202: dict, **ERRORS},
    )
    def post(self, request: Request, slug: str) -> Response:
        """Ask for the settled top of a typed ``k`` (1 to 1,000, fewer than the study's items or
        a target's candidates) after the latest ballot: computed in the background, then part of
        ``report.settled_top`` (``custom``: true)."""
        study = self.study(request, slug, CHANGE)
        value = request.data.get("k") if hasattr(request.data, "get") else None
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValidationError({"detail": "k must be a whole number."})
        try:
            k = int(value)
            with transaction.atomic():
                _, sent = typed_tops.request_k(study, k)
                if sent:
                    record(request, "reliability.top_k", study, k=k)
        except ValueError as exc:
            text = str(exc) if isinstance(exc, reliability.ReliabilityRefused) else None
            raise ValidationError({"detail": text or "k must be a whole number."}) from None
        return Response(reliability.status(study).as_dict(), status=202)

    @extend_schema(
        operation_id="staff_reliability_threshold",
        request={
            "application/json": {"type": "object", "properties": {"threshold": {"type": "number"}}}
        },
        responses={200: dict, **ERRORS},
    )
    def patch(self, request: Request, slug: str) -> Response:
        """Set the probability every item of a top needs for the top to be settled (0.5 to 1):
        every stored top is judged at it from then on (``report.threshold``)."""
        study = self.study(request, slug, CHANGE)
        value = request.data.get("threshold") if hasattr(request.data, "get") else None
        try:
            _set_threshold(request, study, value)
        except reliability.ReliabilityRefused as exc:
            raise ValidationError({"detail": f"{exc}."}) from None
        return Response(reliability.status(study).as_dict())
