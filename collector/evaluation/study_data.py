"""A finished study as ``ranking``'s evaluation reads it: the gold ranking and the votes, and
whether people gave those votes (:func:`gold_provenance`).

Items are in ``Item.index`` order, so a model's per-item scores are a plain array in that order
(``Evaluation.item_scores``) and the gold's positions are the study's item ids. A target
study's gold is a target gold (its targets and candidate kinds): models are evaluated per target,
its votes are rescored per target (their groups) and give the binary comparisons.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.db.models import Count, Max, Q

from collector.models import Item, ItemScore, Study, Vote, Voter
from collector.studies import bulk_sql
from collector.studies.lifecycle import require_finished
from ranking.ballots import StudyVotes
from ranking.files import GoldStandard


def gold_provenance(study: Study) -> dict[str, Any]:
    """Who gave the study's votes, for whoever evaluates against its gold: ``votes``,
    ``simulated_votes`` (cast by ``manage.py simulate_votes``' crowd: its voters' source is
    ``simulated``), ``simulated`` (any such vote) and ``warning`` (what that means, or None).

    A ranking made of simulated votes follows the simulator's similarities: a model's scores
    against it say nothing of how people judge relatedness."""
    counted = Vote.objects.filter(ballot__study=study).aggregate(
        votes=Count("id"), simulated=Count("id", filter=Q(voter__source=Voter.Source.SIMULATED))
    )
    votes, simulated = counted["votes"], counted["simulated"]
    warning = None
    if simulated:
        which = f"all {votes:,}" if simulated == votes else f"{simulated:,} of the {votes:,}"
        warning = (
            f"Simulated gold: {which} votes of this study come from a simulated crowd "
            "(manage.py simulate_votes), not from people. A model's scores against it measure "
            "agreement with the simulator's similarities, not with human judgement."
        )
    return {
        "votes": votes,
        "simulated_votes": simulated,
        "simulated": bool(simulated),
        "warning": warning,
    }


def gold_of(study: Study) -> GoldStandard:
    """The study's final ranking. Raises :class:`NotFinished` before the study has one."""
    require_finished(study)
    rows = list(
        Item.objects.filter(study=study)
        .order_by("index")
        .values_list(
            "index",
            "token_a__text",
            "token_b__text",
            "area__name",
            "final_rank",
            "final_score",
            "kind",
        )  # fmt: skip
    )
    last = dict(
        ItemScore.objects.filter(ballot__study=study)
        .values("item__index")
        .annotate(k=Max("ballot__number"))
        .values_list("item__index", "k")
    )
    index = np.array([r[0] for r in rows], dtype=np.int64)
    return GoldStandard(
        format="study",
        token_a=tuple(r[1] for r in rows),
        token_b=tuple(r[2] for r in rows),
        ranks=np.array([r[4] for r in rows], dtype=np.float64),
        item_ids=index,
        scores=np.array([np.nan if r[5] is None else r[5] for r in rows], dtype=np.float64),
        areas=tuple(r[3] for r in rows),
        last_ballot=np.array([last.get(int(i), 1) for i in index], dtype=np.int64),
        source=f"study {study.slug}",
        targets=tuple(r[3] for r in rows) if study.targets else None,  # area = target
        kinds=tuple(r[6] for r in rows) if study.targets else None,
    )


def votes_of(study: Study, gold: GoldStandard) -> StudyVotes | None:
    """The study's answered comparisons with each ballot's items (None: no votes), without the
    votes of excluded voters: the agreement with the votes and the voter bootstrap leave them
    out. A target study's votes carry its targets as groups (``gold.groups``)."""
    rows = bulk_sql.study_votes(study.pk).trusted()
    numbers, pairs, first_score, voter_ids = rows.ballot, rows.pairs, rows.first_score, rows.voter
    if numbers.size == 0:
        return None
    # Voters numbered in the order of their first vote, as ranking.files.read_votes numbers the
    # votes export's (both by vote id): the same seed then resamples the same voters.
    _, first, inverse = np.unique(voter_ids, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    voters = rank[inverse]
    ballots = int(gold.last_ballot.max()) if gold.last_ballot is not None else 1
    members = []
    for number in range(1, max(ballots, int(numbers.max())) + 1):
        inside = np.zeros(gold.n_items, dtype=bool)
        if gold.last_ballot is not None:
            inside |= gold.last_ballot >= number
        inside[pairs[numbers == number].ravel()] = True
        members.append(np.flatnonzero(inside))
    return StudyVotes(
        n_items=gold.n_items,
        ballot=numbers - 1,
        pairs=pairs,
        first_score=first_score,
        voter=voters.astype(np.int64),
        ballot_items=tuple(members),
        groups=gold.groups,
    )
