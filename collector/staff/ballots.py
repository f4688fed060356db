"""Opening and closing a study's ballots by hand (the study page's buttons): each one
transition of :mod:`collector.studies.lifecycle`, its message or refusal flashed on the study
page."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from collector.access import CHANGE, get_study, staff_required
from collector.audit.trail import record
from collector.studies import lifecycle


def _ballot_action(
    request: HttpRequest, slug: str, number: int, act: Callable[[int], str], action: str
) -> HttpResponse:
    """Run a lifecycle transition on ballot ``number`` and record ``action`` in the audit trail;
    its message or its refusal is flashed."""
    study = get_study(request, slug, CHANGE)
    ballot = get_object_or_404(study.ballots, number=number)
    try:
        with transaction.atomic():
            messages.success(request, act(ballot.pk))
            record(request, action, study, ballot=number)
    except lifecycle.LifecycleError as exc:
        messages.error(request, str(exc))
    return redirect("staff-study", slug=slug)


@staff_required
@require_POST
def ballot_open(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    def act(ballot_id: int) -> str:
        lifecycle.open_ballot(ballot_id)
        return f"Ballot {number} is open."

    return _ballot_action(request, slug, number, act, "ballot.open")


@staff_required
@require_POST
def ballot_close(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    def act(ballot_id: int) -> str:
        voided = lifecycle.close_early(ballot_id)
        return f"Ballot {number} is closing ({voided} unanswered comparisons voided)."

    return _ballot_action(request, slug, number, act, "ballot.close")
