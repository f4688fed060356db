"""The ballot mathematics: sizes and budget (Eqs. 2-4, 10, Section 2.7), Borda scores,
rescaling and running means (Eqs. 1, 5, 6), scoring a ballot, the paper's selection, the pooled
Bradley-Terry fit, and the pair helpers the designs build their ballots with (random pairs of
footnote 6, the cap on repeated pairs).

:mod:`ranking.protocol.advice` (which design a target study's pools call for, beside the plan)
names the designs, so this package does not import it: ``from ranking import advise_design``.
"""

from __future__ import annotations

from .bradley_terry import (
    DEFAULT_BT_ALPHA,
    bradley_terry,
    strength_intervals,
)
from .budget import (
    StudyPlan,
    alpha_lower_bound,
    ballot_comparisons,
    ballot_sizes,
    comparisons_per_ballot,
    plan_study,
    uniform_m,
)
from .closing import (
    ESTIMATORS,
    BallotOutcome,
    Estimator,
    StudyState,
    final_ranking,
    score_ballot,
    select_top,
)
from .random_pairs import ballot_pairs
from .repeats import cap_repeats, pair_cap
from .scores import (
    borda_counts,
    borda_scores,
    group_members,
    group_slopes,
    ranks_from_scores,
    ranks_within_groups,
    rescale,
    rescale_slope,
    running_mean,
)

__all__ = [
    "alpha_lower_bound",
    "DEFAULT_BT_ALPHA",
    "ESTIMATORS",
    "ballot_comparisons",
    "ballot_pairs",
    "ballot_sizes",
    "BallotOutcome",
    "borda_counts",
    "borda_scores",
    "bradley_terry",
    "cap_repeats",
    "comparisons_per_ballot",
    "Estimator",
    "final_ranking",
    "group_members",
    "group_slopes",
    "pair_cap",
    "plan_study",
    "ranks_from_scores",
    "ranks_within_groups",
    "rescale",
    "rescale_slope",
    "running_mean",
    "score_ballot",
    "select_top",
    "strength_intervals",
    "StudyPlan",
    "StudyState",
    "uniform_m",
]
