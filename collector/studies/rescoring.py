"""Scoring a study's closed ballots again from the votes it holds now: after a participant's
votes were deleted (:mod:`collector.participants.forgetting`), "Rescore without them".

Each closed ballot is scored again in order with the ballot driver's scoring, as its close
scored it (the same estimator, the same seeded stream, the state rebuilt from the ballots
before it), but **its members are kept as they were**: which items each later ballot held was
decided when the ballot before it closed, with the votes of that time, and stays so. A finished
study's final ranking and its pooled fit are stored again from the rescored last ballot. With
no vote deleted, rescoring gives exactly the stored scores. A rescore changes the study's vote
set (:mod:`collector.studies.vote_sets`): every figure derived from the ranking is computed again.

Locks, in the one order of every path that takes both (:func:`collector.studies.pooled_fit.lock`):
the pooled fit's advisory lock, the ballots, then the study row.
"""

from __future__ import annotations

import numpy as np
from django.db import transaction

from collector.models import Ballot, Study
from collector.studies import bulk_sql, lifecycle, pooled_fit, vote_sets
from collector.studies.designs import driver
from collector.studies.lifecycle import LifecycleError
from ranking.protocol import ranks_within_groups

__all__ = ["rescore_without_withdrawn"]

_SCORE_FIELDS = ("wins", "ties", "appearances", "x", "y", "ybar", "strength")


def rescore_without_withdrawn(study_id: int) -> int:
    """Score the study's closed ballots again from their remaining votes (module docstring) and
    clear ``Study.withdrawn_votes``. Returns the number of ballots rescored. Raises
    :class:`LifecycleError` while a ballot is closing (rescore once it has closed)."""
    with transaction.atomic():
        # One lock order (pooled_fit.lock): the fit's lock, the ballots, then the study row.
        pooled_fit.lock(study_id)
        ballots = list(
            Ballot.objects.select_for_update(no_key=True)
            .filter(study_id=study_id)
            .exclude(status=Ballot.Status.PENDING)
            .order_by("number")
        )
        study = Study.objects.select_for_update().filter(pk=study_id).first()
        if study is None:
            raise LifecycleError("this study no longer exists")
        if any(b.status == Ballot.Status.CLOSING for b in ballots):
            raise LifecycleError("a ballot is closing: rescore once it has closed")
        closed = [b for b in ballots if b.status == Ballot.Status.CLOSED]
        n_items = study.items.count()
        scoring = driver(study, n_items)
        item_ids = bulk_sql.item_ids_by_index(study.pk)
        score = None
        for ballot in closed:
            members = bulk_sql.ballot_members(ballot.pk)
            pairs, first_score = bulk_sql.answered_pairs(study.pk, [ballot.pk])
            state = lifecycle._study_state(study, ballot, n_items)  # as the close built it
            _state, out = scoring.score(state, members, pairs, first_score)
            bulk_sql.update_scores(
                ballot.pk,
                item_ids[members],
                {
                    name: np.asarray(getattr(out, name))[members]
                    for name in _SCORE_FIELDS
                    if getattr(out, name) is not None
                },
            )
            score = out.score
        if study.withdrawn_votes:  # the ranking changes: so does everything derived from it
            vote_sets.bump(study.pk, vote_sets.Kind.RESCORED)
        if study.status == Study.Status.FINISHED and score is not None:
            ranks = scoring.final_ranks(score)
            columns = {"final_rank": ranks, "final_score": score}
            if scoring.grouped:
                columns["rank_in_target"] = ranks_within_groups(ranks, scoring.groups)
            bulk_sql.update_items(study.pk, item_ids, columns)
            pooled_fit.store_pooled_fit(study.pk)
        Study.objects.filter(pk=study.pk).update(withdrawn_votes=0)
    return len(closed)
