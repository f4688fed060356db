"""Top-rank-focused adaptive pairwise comparisons (the paper's Sections 2-4) in numpy/scipy.

Flat public API: ballots (Eq. 2), Borda scores and rescaling (Eqs. 1, 5, 6), closing a
ballot, a pooled Bradley-Terry estimator, rank metrics (Eqs. 7-9), study planning
(Eqs. 3, 4, 10 and Section 2.7), the stochastic voters of Section 4.1 and the simulator of
Section 4.2. No Django import anywhere in this package.
"""

from .ballots import ballot_pairs, ballot_sizes
from .bradley_terry import DEFAULT_BT_ALPHA, bradley_terry
from .budget import (
    StudyPlan,
    ballot_comparisons,
    comparisons_per_ballot,
    plan_study,
    uniform_m,
)
from .metrics import (
    kendall,
    rank_weights,
    ranks_from_scores,
    spearman,
    weighted_kendall,
    weighted_spearman,
)
from .scores import borda_counts, borda_scores, rescale, rescale_slope, running_mean
from .simulated_studies import (
    DESIGNS,
    METRICS,
    PUBLISHED_TABLE2,
    VARIANTS,
    SimulationSummary,
    Variant,
    rank_metrics,
    run_simulations,
    similarity_for,
    simulate_study,
    table2,
)
from .simulated_voters import (
    SimulatedCrowd,
    assign_voters,
    load_similarities,
    true_ranks,
    underlying_similarity,
)
from .study import ESTIMATORS, BallotOutcome, Estimator, StudyState, close_ballot, final_ranking

__all__ = [
    "DEFAULT_BT_ALPHA",
    "DESIGNS",
    "ESTIMATORS",
    "METRICS",
    "PUBLISHED_TABLE2",
    "VARIANTS",
    "BallotOutcome",
    "Estimator",
    "SimulatedCrowd",
    "SimulationSummary",
    "StudyPlan",
    "StudyState",
    "Variant",
    "assign_voters",
    "ballot_pairs",
    "ballot_sizes",
    "borda_counts",
    "borda_scores",
    "bradley_terry",
    "close_ballot",
    "ballot_comparisons",
    "comparisons_per_ballot",
    "final_ranking",
    "kendall",
    "load_similarities",
    "plan_study",
    "rank_metrics",
    "rank_weights",
    "ranks_from_scores",
    "rescale",
    "rescale_slope",
    "run_simulations",
    "running_mean",
    "similarity_for",
    "simulate_study",
    "spearman",
    "table2",
    "true_ranks",
    "underlying_similarity",
    "uniform_m",
    "weighted_kendall",
    "weighted_spearman",
]
