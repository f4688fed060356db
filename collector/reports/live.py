"""The study page's live figures: how the open ballot is going, and what the rest will cost.

``live_status`` is what ``/staff/<slug>/live.json`` serves and the page polls every few seconds:
per ballot its answered, open, leased and voided comparisons; for the open ballot the votes per
minute and the active voters over the last ``WINDOW``, the time left at that rate (and, for the
API and CSV, its items without an answered comparison); and the study's time per comparison
(:func:`collector.studies.pace.pace`, the rule the consent page's promise uses: trusted voters
only, the median of their medians, the planning floor until enough have answered; read at most
a minute ago) with the time and cost it projects for every comparison still to come (Eq. 10:
person-hours = t_comp x comparisons), beside the plan's figure for the same time per comparison;
and the latest reliability figures in brief (:func:`collector.reports.reliability.live_summary`:
the settled top's sentence per ``k``).
The pay rate comes from the page (:mod:`collector.staff.live`, which also serves the staff
API's view of the same).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from collector.models import Ballot, Comparison, Study, Vote
from collector.reports.reliability import live_summary
from collector.studies import creating, lifecycle
from collector.studies.pace import recent_pace

WINDOW = timedelta(minutes=5)
PACE_MAX_AGE = 60  # seconds: the time per comparison moves slowly, the counts above are live


def live_status(
    study: Study, hourly_rate: float | None = None, *, unanswered: bool = False
) -> dict[str, Any]:
    """The figures above, as a JSON-ready dict; with ``unanswered``, the open ballot's items
    without an answered comparison too (it reads the ballot's votes: not for the page's poll)."""
    now = timezone.now()
    counts = (
        Comparison.objects.filter(ballot__study=study)
        .values("ballot__number")
        .annotate(
            answered=Count("id", filter=Q(status=Comparison.Status.ANSWERED)),
            voided=Count("id", filter=Q(status=Comparison.Status.VOID)),
            open=Count("id", filter=Q(status=Comparison.Status.OPEN)),
            leased=Count("id", filter=Q(status=Comparison.Status.OPEN, lease_expires_at__gt=now)),
        )
    )
    by_number = {c["ballot__number"]: c for c in counts}
    ballots: list[dict[str, Any]] = []
    open_ballot = None
    for ballot in Ballot.objects.filter(study=study).order_by("number"):
        c = by_number.get(ballot.number, {"answered": 0, "voided": 0, "open": 0, "leased": 0})
        row: dict[str, Any] = {
            "number": ballot.number,
            "status": ballot.status,
            "answered": c["answered"],
            "open": c["open"],
            "leased": c["leased"],
            "voided": c["voided"],
            "total": c["answered"] + c["open"] + c["voided"],  # as the ballots table counts
        }
        if ballot.status == Ballot.Status.OPEN:
            open_ballot = row
            recent = Vote.objects.filter(ballot=ballot, created_at__gte=now - WINDOW)
            n_recent = recent.count()
            row["votes_per_minute"] = n_recent / (WINDOW.total_seconds() / 60)
            row["active_voters"] = recent.values("voter_id").distinct().count()
            rate = row["votes_per_minute"]
            row["minutes_left"] = row["open"] / rate if rate else None
            if unanswered:  # what an early close would leave without a score from this ballot
                row["items_without_answer"] = lifecycle.items_without_answer(ballot.pk)
        ballots.append(row)
    measured = recent_pace(study, PACE_MAX_AGE)
    seconds = measured.seconds
    planned = [comparisons for _, _, comparisons in creating.study_plan(study).ballots]
    # Still to answer: the open comparisons of the open and pending ballots, and the planned
    # comparisons of the ballots not generated yet.
    waiting = (Ballot.Status.OPEN, Ballot.Status.PENDING)
    remaining = sum(b["open"] for b in ballots if b["status"] in waiting)
    remaining += sum(planned[len(ballots) :]) if study.status != Study.Status.FINISHED else 0
    projection: dict[str, Any] = {
        "comparisons_left": remaining,
        "seconds_per_comparison": seconds,
        "pace": measured.as_dict(),
        "person_hours_left": seconds * remaining / 3600,
        "planned_person_hours": seconds * sum(planned) / 3600,
        "hourly_rate": hourly_rate,
    }
    if hourly_rate is not None:
        projection["cost_left"] = projection["person_hours_left"] * hourly_rate
        projection["planned_cost"] = projection["planned_person_hours"] * hourly_rate
    return {
        "status": study.status,
        "ballots": ballots,
        "open_ballot": open_ballot["number"] if open_ballot else None,
        "projection": projection,
        "reliability": live_summary(study),
    }
