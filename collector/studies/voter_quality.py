"""How each voter of a study answered, with the flags: the voter table's rows and the crowd's
position bias, read by the staff's voter table (:mod:`collector.staff.voters`), its CSV file and
a participant's stored data (:mod:`collector.participants.data`).

Figures come from :func:`ranking.crowd.voter_quality` over the study's votes; the thresholds of the
flags (:data:`THRESHOLDS`, the defaults) are speeders: median response under ``speeder_ms``;
straight-liners: a run of ``run_length`` answers on the same side; low agreement: under
``min_agreement`` of the voter's votes predicted by everyone else's; failed checks: at least the
study's ``check_fail_limit`` attention checks failed. Excluded voters' votes are left out of
everyone else's consensus and of the position bias.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django.db.models import Count
from threadpoolctl import threadpool_limits

import ranking
from collector.models import Study, VoidedVote, Voter
from collector.studies import attention_checks, bulk_sql
from ranking.crowd import MIN_AGREEMENT, RUN_LENGTH, SPEEDER_MS

__all__ = ["FLAGS", "THRESHOLDS", "flagged", "voter_table"]

FLAGS = ("speeder", "straight_liner", "low_agreement", "failed_checks")
# The flags' default thresholds.
THRESHOLDS: dict[str, Any] = {
    "speeder_ms": int(SPEEDER_MS),
    "run_length": RUN_LENGTH,
    "min_agreement": MIN_AGREEMENT,
}


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def voter_table(study: Study, thresholds: Mapping[str, Any] = THRESHOLDS) -> dict[str, Any]:
    """Rows (every voter who voted, answered a check or was excluded; most votes first), the
    position bias and whether agreement is leave-one-voter-out.

    Parameters
    ----------
    study : Study
        The study whose voters are tabled.
    thresholds : Mapping
        ``speeder_ms``, ``run_length`` and ``min_agreement`` (default :data:`THRESHOLDS`).

    Returns
    -------
    dict
        ``rows`` (one dict per voter: ``voter`` (pseudonym), ``voter_id``, the figures, a bool
        per flag of :data:`FLAGS`, ``excluded``, ``excluded_reason``, ``voided``), ``bias`` (the
        position bias of the votes not excluded, None without) and ``leave_one_out``.
    """
    votes = bulk_sql.study_votes(study.pk)
    people = {
        v["id"]: v
        for v in Voter.objects.filter(study=study).values(
            "id",
            "pseudonym",
            "checks_passed",
            "checks_failed",
            "excluded_at",
            "excluded_reason",
            "forgotten_at",
        )
    }
    q = None
    if votes.voter.size:
        # Many small solves: BLAS threads would only contend with each other and the web node.
        with threadpool_limits(limits=1, user_api="blas"):
            q = ranking.crowd.voter_quality(
                study.items.count(), votes.pairs, votes.first_score, votes.voter,
                votes.response_ms, speeder_ms=thresholds["speeder_ms"],
                run_length=thresholds["run_length"], min_agreement=thresholds["min_agreement"],
                consensus=~votes.excluded,
            )  # fmt: skip
    figures: dict[int, dict[str, Any]] = {}
    if q is not None:
        for k, v in enumerate(q.voters):
            figures[int(v)] = {
                "votes": int(q.votes[k]),
                "median_response_ms": _number(float(q.median_ms[k])),
                "tie_rate": float(q.tie_rate[k]),
                "left_share": _number(float(q.left_share[k])),
                "longest_same_side_run": int(q.longest_run[k]),
                "agreement": _number(float(q.agreement[k])),
                "speeder": bool(q.speeder[k]),
                "straight_liner": bool(q.straight_liner[k]),
                "low_agreement": bool(q.low_agreement[k]),
            }
    shown = set(figures) | {
        i for i, p in people.items() if p["excluded_at"] or p["checks_passed"] or p["checks_failed"]
    }
    voided = dict(
        VoidedVote.objects.filter(voter__study=study)
        .values("voter_id")
        .annotate(n=Count("id"))
        .values_list("voter_id", "n")
    )
    rows = [
        {**_row(people[i], figures.get(i), study.check_fail_limit), "voided": voided.get(i, 0)}
        for i in shown
        if i in people
    ]
    rows.sort(key=lambda r: (-r["votes"], r["voter"]))
    trusted = votes.trusted()
    return {
        "rows": rows,
        "bias": ranking.crowd.position_bias(trusted.first_score) if trusted.voter.size else None,
        "leave_one_out": q.leave_one_out if q is not None else True,
    }


def _row(person: Any, figures: dict[str, Any] | None, fail_limit: int) -> dict[str, Any]:
    empty = {
        "votes": 0, "median_response_ms": None, "tie_rate": None, "left_share": None,
        "longest_same_side_run": 0, "agreement": None, "speeder": False,
        "straight_liner": False, "low_agreement": False,
    }  # fmt: skip
    failed = person["checks_failed"]
    return {
        "voter": person["pseudonym"],
        "voter_id": person["id"],
        **(figures or empty),
        "checks_passed": person["checks_passed"],
        "checks_failed": failed,
        "failed_checks": attention_checks.failed_checks(failed, fail_limit),
        "excluded": person["excluded_at"] is not None,
        "excluded_reason": person["excluded_reason"],
        # Deleted at their request (collector.participants.forgetting): withdrawn, not excluded.
        "withdrawn": person.get("forgotten_at") is not None,
    }


def flagged(row: Mapping[str, Any]) -> bool:
    """Whether a row of :func:`voter_table` carries a flag."""
    return any(row[f] for f in FLAGS)
