"""A study's tables as the study page, the live status and their files read them: each ballot's
progress, the interim ranking after the latest closed ballot, a target study's final ranking of
one target and its counts of targets and candidates."""

from __future__ import annotations

from typing import Any

import numpy as np
from django.db.models import Count, Max, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from collector.models import Area, Ballot, Comparison, Item, ItemScore, Study, VoidedVote, Vote

RANKING_ROWS_SHOWN = 200


TARGET_RANKING_HEADER = [
    "rank_in_target", "candidate", "kind", "score", "rank", "item_id", "last_ballot",
    "appearances", "wins", "ties",
]  # fmt: skip


def item_totals() -> dict[str, Any]:
    """An item's figures summed over the ballots it was in, as annotations: its last ballot, and
    its appearances, wins and ties (the ranking's columns, on the page and in ranking.csv)."""
    return {
        "last_ballot": Max("scores__ballot__number"),
        "n_appearances": Sum("scores__appearances"),
        "n_wins": Sum("scores__wins"),
        "n_ties": Sum("scores__ties"),
    }


def target_ranking(study: Study, target: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """One target's final ranking, best first, ``rank_in_target`` first (the page's table; the
    CSV has every column): its best ``RANKING_ROWS_SHOWN`` candidates."""
    area = Area.objects.get(study=study, name=target)
    rows = (
        Item.objects.filter(area=area, final_rank__isnull=False)  # type: ignore[misc]
        .annotate(**item_totals())
        .order_by("rank_in_target")
        .values_list("rank_in_target", "token_b__text", "kind", "final_score", "final_rank",
                     "index", "last_ballot", "n_appearances", "n_wins", "n_ties")
    )  # fmt: skip
    return TARGET_RANKING_HEADER, list(rows[:RANKING_ROWS_SHOWN])


def target_counts(sizes: np.ndarray) -> dict[str, int]:
    """A target study's targets, candidates, and the fewest and most candidates of a target,
    from its candidates per target (``Plan.targets``)."""
    return {"targets": sizes.size, "candidates": int(sizes.sum()), "fewest": int(sizes.min()),
            "most": int(sizes.max())}  # fmt: skip


def interim_ranking(study: Study, limit: int = 30) -> dict[str, Any]:
    """The best items after the latest closed ballot (by its running mean, or strength)."""
    latest = study.ballots.filter(status=Ballot.Status.CLOSED).order_by("-number").first()
    if latest is None:
        return {}
    field = "strength" if study.estimator == Study.Estimator.BRADLEY_TERRY else "ybar"
    rows = list(
        ItemScore.objects.filter(ballot__study=study, ballot__number=latest.number)
        .exclude(**{f"{field}__isnull": True})
        .order_by(f"-{field}", "item__index")
        .values_list("item__index", "item__area__name", "item__token_a__text",
                     "item__token_b__text", field)[:limit]
    )  # fmt: skip
    return {"interim_after": latest.number, "interim_rows": rows, "interim_field": field}


def progress_counts() -> dict[str, Any]:
    """A ballot's progress as annotations of Ballot rows: ``total`` comparisons (all it was
    given, void ones too: left unanswered by an early close or by votes withdrawn), ``answered``
    and ``voided``."""
    return {
        "total": Count("comparisons"),
        "answered": Count("comparisons", filter=Q(comparisons__status=Comparison.Status.ANSWERED)),
        "voided": Count("comparisons", filter=Q(comparisons__status=Comparison.Status.VOID)),
    }


def ballot_progress(study: Study) -> list[dict[str, Any]]:
    """Each ballot with its comparisons answered / total (void ones included), the comparisons
    voided by an early close (``voided``), the votes voided by excluding their voters
    (``votes_voided``, what the exclusion's message counts) and its voters."""
    voided_votes = (
        VoidedVote.objects.filter(ballot=OuterRef("pk"))
        .values("ballot")
        .annotate(n=Count("id"))
        .values("n")
    )
    ballots: list[Any] = list(
        Ballot.objects.filter(study=study)
        .annotate(**progress_counts(), votes_voided=Coalesce(Subquery(voided_votes), 0))
        .order_by("number")
    )
    voters = dict(
        Vote.objects.filter(ballot__study=study)
        .values("ballot_id")
        .annotate(n=Count("voter_id", distinct=True))
        .values_list("ballot_id", "n")
    )
    return [
        {
            "ballot": b,
            "answered": b.answered,
            "total": b.total,
            "voided": b.voided,
            "votes_voided": b.votes_voided,
            "voters": voters.get(b.pk, 0),
        }
        for b in ballots
    ]
