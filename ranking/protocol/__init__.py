"""The ballot mathematics: sizes and budget (Eqs. 2-4, 10, Section 2.7), Borda scores,
rescaling and running means (Eqs. 1, 5, 6), closing a ballot and the pooled Bradley-Terry fit.
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
    close_ballot,
    final_ranking,
    select_top,
)
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
    "ballot_sizes",
    "BallotOutcome",
    "borda_counts",
    "borda_scores",
    "bradley_terry",
    "close_ballot",
    "comparisons_per_ballot",
    "Estimator",
    "final_ranking",
    "group_members",
    "group_slopes",
    "plan_study",
    "ranks_from_scores",
    "ranks_within_groups",
    "rescale",
    "rescale_slope",
    "running_mean",
    "select_top",
    "strength_intervals",
    "StudyPlan",
    "StudyState",
    "uniform_m",
]
