"""The staff's study list: each study the user is a member of, with its state, its current
ballot's progress, its voter link and the user's role, in two queries however many studies there
are. Archived studies have their own list.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Subquery
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from collector.access import staff_required, visible_studies
from collector.models import Ballot, Study
from collector.reports.tables import progress_counts


@dataclass(frozen=True)
class StudyRow:
    study: Study
    # The study's current ballot: the latest one (ballots are made one after the other, so the
    # open or pending ballot, if any, is the latest), annotated with reports.tables.progress_counts.
    ballot: Ballot | None
    voter_url: str


def study_rows(request: HttpRequest, *, archived: bool = False) -> list[StudyRow]:
    """The studies the user may see, newest first: archived ones, or all the others."""
    studies = list(
        visible_studies(request.user)
        .filter(archived_at__isnull=not archived)
        .order_by("-created_at", "-id")
    )
    latest = (
        Ballot.objects.filter(study__in=[s.pk for s in studies])
        .order_by("study_id", "-number")
        .distinct("study_id")
        .values("id")
    )
    ballots = {
        b.study_id: b
        for b in Ballot.objects.filter(id__in=Subquery(latest)).annotate(**progress_counts())
    }
    return [
        StudyRow(
            study=s,
            ballot=ballots.get(s.pk),
            voter_url=request.build_absolute_uri(reverse("voting:study", args=[s.slug])),
        )
        for s in studies
    ]


@staff_required
def study_list(request: HttpRequest) -> HttpResponse:
    archived = request.GET.get("show") == "archived"
    context = {"rows": study_rows(request, archived=archived), "archived": archived}
    return render(request, "staff/study_list.html", context)
