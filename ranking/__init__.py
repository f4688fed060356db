"""Top-rank-focused adaptive pairwise comparisons (the paper's Sections 2-4) in numpy/scipy.

Flat public API: ballots (Eq. 2), Borda scores and rescaling (Eqs. 1, 5, 6), closing a
ballot, a pooled Bradley-Terry estimator, rank metrics (Eqs. 7-9), study planning
(Eqs. 3, 4, 10 and Section 2.7), the stochastic voters of Section 4.1 and their fit to a study's
votes (``fit_crowd``, ``CrowdModel`` crowd files, ``predict_study``: a pilot's prediction), the
simulator of Section 4.2, and the evaluation of relatedness models against a study's ranking (gold
files, model scores, word vectors, chance baseline, retrieval, vote agreement, voter
bootstrap: :func:`ranking.evaluation.evaluate`, also exported as ``evaluate_models`` since
the name ``ranking.evaluate`` is the command line module, ``python -m ranking.evaluate``).
No Django import anywhere in this package.
"""

from .ballots import ballot_pairs, ballot_sizes
from .bootstrap import Scope, interval, item_bootstrap, paired_comparison, voter_bootstrap
from .bradley_terry import DEFAULT_BT_ALPHA, bradley_terry, strength_intervals
from .budget import (
    StudyPlan,
    ballot_comparisons,
    comparisons_per_ballot,
    plan_study,
    uniform_m,
)
from .crowd_model import CROWD_FORMAT, CrowdModel, reference_relatedness
from .crowd_noise import CrowdFit, fit_crowd
from .crowd_prediction import Prediction, predict_study, prediction_similarities
from .evaluation import (
    MISSING_POLICIES,
    chance_baseline,
    default_chance_permutations,
    scopes_of,
)
from .evaluation import evaluate as evaluate_models
from .gold_standards import GOLD_FORMATS, GoldStandard, detect_gold_format, read_gold
from .input_files import InputFileError
from .metrics import (
    kendall,
    rank_weights,
    ranks_from_scores,
    spearman,
    weighted_kendall,
    weighted_spearman,
)
from .model_scores import PairScorer, ScoreTable, item_scores, pair_scorer_for, read_model_scores
from .retrieval import retrieval_metrics
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
    VoterSource,
    assign_voters,
    load_similarities,
    true_ranks,
    underlying_similarity,
)
from .study import ESTIMATORS, BallotOutcome, Estimator, StudyState, close_ballot, final_ranking
from .study_votes import StudyVotes, read_votes, rescore, simulate_study_votes
from .tied_metrics import METRIC_NAMES, mid_ranks, rank_correlations, rank_rows
from .vote_agreement import crowd_certainty, vote_agreement, vote_outcomes
from .voter_quality import VoterQuality, position_bias, voter_quality
from .word_vectors import VECTOR_FORMATS, WordVectors, load_word_vectors

__all__ = [
    "CROWD_FORMAT",
    "CrowdFit",
    "CrowdModel",
    "Prediction",
    "VoterSource",
    "fit_crowd",
    "predict_study",
    "prediction_similarities",
    "reference_relatedness",
    "DEFAULT_BT_ALPHA",
    "DESIGNS",
    "ESTIMATORS",
    "GOLD_FORMATS",
    "METRICS",
    "METRIC_NAMES",
    "MISSING_POLICIES",
    "PUBLISHED_TABLE2",
    "VARIANTS",
    "VECTOR_FORMATS",
    "BallotOutcome",
    "Estimator",
    "GoldStandard",
    "InputFileError",
    "PairScorer",
    "Scope",
    "ScoreTable",
    "SimulatedCrowd",
    "SimulationSummary",
    "StudyPlan",
    "StudyState",
    "StudyVotes",
    "Variant",
    "WordVectors",
    "assign_voters",
    "ballot_comparisons",
    "ballot_pairs",
    "ballot_sizes",
    "borda_counts",
    "borda_scores",
    "bradley_terry",
    "strength_intervals",
    "chance_baseline",
    "close_ballot",
    "comparisons_per_ballot",
    "crowd_certainty",
    "default_chance_permutations",
    "detect_gold_format",
    "evaluate_models",
    "final_ranking",
    "interval",
    "item_bootstrap",
    "item_scores",
    "kendall",
    "load_similarities",
    "load_word_vectors",
    "mid_ranks",
    "pair_scorer_for",
    "paired_comparison",
    "plan_study",
    "rank_correlations",
    "rank_metrics",
    "rank_rows",
    "rank_weights",
    "ranks_from_scores",
    "read_gold",
    "read_model_scores",
    "read_votes",
    "rescale",
    "rescale_slope",
    "rescore",
    "retrieval_metrics",
    "run_simulations",
    "running_mean",
    "scopes_of",
    "similarity_for",
    "simulate_study",
    "simulate_study_votes",
    "spearman",
    "table2",
    "true_ranks",
    "underlying_similarity",
    "uniform_m",
    "vote_agreement",
    "vote_outcomes",
    "voter_bootstrap",
    "weighted_kendall",
    "weighted_spearman",
    "VoterQuality",
    "position_bias",
    "voter_quality",
]
