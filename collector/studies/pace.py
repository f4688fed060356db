"""The time per comparison that a study promises and projects with: one rule, read by the
consent page (how long taking part takes), the study page's Now box and the staff API (the time
and cost of the rest).

- Only *trusted* voters count: not excluded, and not flagged as a speeder (median response under
  ``ranking.crowd.SPEEDER_MS``), a straight-liner (``RUN_LENGTH`` answers on the same
  side in a row) or for failed attention checks (the study's ``check_fail_limit``), the voter
  table's flags at their default thresholds. Low agreement is left to the voter table: it needs a
  Bradley-Terry fit per voter, too slow for every voter's first page.
- The statistic (:func:`ranking.crowd.time_per_comparison`) is robust to any one voter: the
  median, over trusted voters, of each voter's median response time. A voter who answers 200
  times counts once, like one who answers twice.
- Until :data:`MIN_TRUSTED_VOTERS` trusted voters have answered, the time is at least
  :data:`FLOOR_SECONDS` (the planning default): a few quick first voters never shrink the
  promise, slow ones may raise it.

Reading it costs about a second per million votes (``benchmarks/bench_pace.py``), so the pages
read it through :func:`recent_pace`, kept in the cache for a minute or a few.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from django.core.cache import cache

from collector.models import Study, Voter
from collector.studies import attention_checks, bulk_sql
from ranking.crowd import answer_patterns, time_per_comparison

__all__ = ["FLOOR_SECONDS", "MIN_TRUSTED_VOTERS", "Pace", "pace", "recent_pace"]

# The planning default: reading two pairs and answering on a first impression, with some margin
# (a promise to voters should rather be kept than beaten).
FLOOR_SECONDS = 6.0
MIN_TRUSTED_VOTERS = 5
KEEP_SECONDS = 3600  # how long the cache keeps a reading (each reader asks for its own age)


@dataclass(frozen=True)
class Pace:
    """The time per comparison and where it comes from."""

    seconds: float  # what the promises and projections use
    measured_seconds: float | None  # the median of the trusted voters' medians (None: none)
    trusted_voters: int  # voters with timed votes whose times count
    left_out_voters: int  # voters with timed votes left out: flagged or excluded

    @property
    def settled(self) -> bool:
        """Enough trusted voters: the floor no longer applies."""
        return self.trusted_voters >= MIN_TRUSTED_VOTERS

    def as_dict(self) -> dict[str, float | int | bool | None]:
        return {
            "seconds": self.seconds,
            "measured_seconds": self.measured_seconds,
            "trusted_voters": self.trusted_voters,
            "left_out_voters": self.left_out_voters,
            "settled": self.settled,
            "floor_seconds": FLOOR_SECONDS,
            "min_trusted_voters": MIN_TRUSTED_VOTERS,
        }


def pace(study: Study) -> Pace:
    """The study's time per comparison (see the module docstring)."""
    answers = bulk_sql.study_answers(study.pk)
    patterns = answer_patterns(answers.voter, answers.first_score, answers.response_ms)
    people = Voter.objects.filter(study=study).values_list("pk", "excluded_at", "checks_failed")
    left_out_ids = [
        pk
        for pk, excluded_at, failed in people
        if excluded_at is not None or attention_checks.failed_checks(failed, study.check_fail_limit)
    ]
    left_out = np.isin(patterns.voters, np.array(left_out_ids, dtype=np.int64))
    t = time_per_comparison(
        patterns.median_ms,
        patterns.longest_run,
        left_out,
        floor_seconds=FLOOR_SECONDS,
        min_voters=MIN_TRUSTED_VOTERS,
    )
    return Pace(t.seconds, t.measured_seconds, t.trusted_voters, t.left_out_voters)


def recent_pace(study: Study, max_age: float) -> Pace:
    """:func:`pace`, read at most ``max_age`` seconds ago (one cache entry per study, shared by
    the web processes when the cache is)."""
    key = f"studies:pace:{study.pk}"
    hit = cache.get(key)
    if hit is not None and time.time() - hit[0] <= max_age:
        return hit[1]
    fresh = pace(study)
    cache.set(key, (time.time(), fresh), KEEP_SECONDS)
    return fresh
