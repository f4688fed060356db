"""What the consent page tells a voter before they start: how many questions, and how long.

The number of questions is the quota of the store's rules (:mod:`collector.voting.store`):
``min(per_voter_cap, comparisons of the current ballot)``, the current ballot being the latest
one opened (before any is opened: the first one). The expected time is that number times the
study's time per comparison (:func:`collector.studies.pace.pace`: trusted voters only, the
median of their medians, never under the planning floor until enough of them have answered),
rounded up to whole minutes. The time is read at most five minutes ago: the study link is every
voter's first page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from collector.models import Ballot, Study
from collector.studies.pace import recent_pace

__all__ = ["Briefing", "briefing", "quota"]

PACE_MAX_AGE = 300  # seconds: the study link is every voter's first page


@dataclass(frozen=True)
class Briefing:
    questions: int
    minutes: int
    measured: bool  # the time comes from enough trusted voters (else the floor bounds it)


def quota(study: Study) -> int:
    """The comparisons a new voter would answer in the study's current ballot."""
    ballots = Ballot.objects.filter(study=study)
    current = (
        ballots.exclude(status=Ballot.Status.PENDING).order_by("-number").first()
        or ballots.order_by("number").first()
    )
    if current is None:
        return study.per_voter_cap
    return min(study.per_voter_cap, current.n_comparisons)


def briefing(study: Study) -> Briefing:
    questions = quota(study)
    current = recent_pace(study, PACE_MAX_AGE)
    minutes = max(1, math.ceil(questions * current.seconds / 60))
    return Briefing(questions, minutes, current.settled)
