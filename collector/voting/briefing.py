"""What the consent page tells a voter before they start: how many questions, and how long.

The number of questions is the quota of the store's rules (:mod:`collector.voting.store`):
``min(per_voter_cap, comparisons of the current ballot)``, the current ballot being the latest
one opened (before any is opened: the first one). The expected time is that number times the
measured time per comparison (the median response time of the study's votes,
:func:`collector.studies.bulk_sql.seconds_per_comparison`, cached for a few minutes: the study
link is every voter's first page), or :data:`DEFAULT_SECONDS_PER_COMPARISON` before there are votes,
rounded up to whole minutes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.core.cache import cache

from collector.models import Ballot, Study
from collector.studies.bulk_sql import seconds_per_comparison

__all__ = ["DEFAULT_SECONDS_PER_COMPARISON", "Briefing", "briefing", "quota"]

# Before any vote is measured: reading two pairs and answering on a first impression, with some
# margin (the promise on the consent page should rather be kept than beaten).
DEFAULT_SECONDS_PER_COMPARISON = 6.0
CACHE_SECONDS = 300


@dataclass(frozen=True)
class Briefing:
    questions: int
    minutes: int
    measured: bool  # the time comes from this study's votes (else the default)


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


def _seconds(study: Study) -> float | None:
    key = f"voting:seconds-per-comparison:{study.pk}"
    cached = cache.get(key)
    if cached is None:
        cached = (seconds_per_comparison(study.pk),)
        cache.set(key, cached, CACHE_SECONDS)
    return cached[0]


def briefing(study: Study) -> Briefing:
    questions = quota(study)
    seconds = _seconds(study)
    per = DEFAULT_SECONDS_PER_COMPARISON if seconds is None else seconds
    minutes = max(1, math.ceil(questions * per / 60))
    return Briefing(questions, minutes, seconds is not None)
