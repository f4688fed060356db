"""Evaluating models against a study's ranking: the rank metrics (Eqs. 7-9, with ties), the
voter bootstrap, agreement with the votes, retrieval, a target study's per-target figures and
Avraham & Goldberg's score over its binary comparisons, and the whole evaluation.
"""

from __future__ import annotations

from .agreement import (
    crowd_certainty,
    vote_agreement,
    vote_outcomes,
)
from .bootstrap import (
    ELEMENTS_PER_CHUNK,
    Scope,
    centred_interval,
    default_workers,
    interval,
    item_bootstrap,
    paired_comparison,
    scope_key,
    scope_metrics,
    voter_bootstrap,
)
from .chance import (
    CHANCE_METRICS,
    chance_baseline,
    default_chance_permutations,
)
from .comparisons import (
    AG_TYPES,
    ag_resampler,
    ag_score,
    comparisons_from_votes,
    pair_counts,
)
from .metrics import (
    kendall,
    rank_weights,
    spearman,
    weighted_kendall,
    weighted_spearman,
)
from .model_evaluation import (
    MISSING_POLICIES,
    MissingPolicy,
    evaluate,
    scopes_of,
)
from .reliability import (
    HalfCorrelation,
    SplitHalf,
    StudyReliability,
    VoteAlpha,
    split_half,
    vote_alpha,
)
from .retrieval import (
    HITS_AT,
    MAX_PAIRS,
    retrieval_metrics,
    target_retrieval,
)
from .sentence_scores import (
    MiniLMOnnx,
    SentenceEmbeddings,
    sentence_extra_available,
)
from .targets import (
    MACRO_MIN,
    macro,
    macro_samples,
)
from .tied_metrics import (
    METRIC_NAMES,
    mid_ranks,
    rank_correlations,
    rank_rows,
)

__all__ = [
    "CHANCE_METRICS",
    "AG_TYPES",
    "ag_resampler",
    "ag_score",
    "comparisons_from_votes",
    "ELEMENTS_PER_CHUNK",
    "HITS_AT",
    "MAX_PAIRS",
    "METRIC_NAMES",
    "MISSING_POLICIES",
    "centred_interval",
    "chance_baseline",
    "crowd_certainty",
    "default_chance_permutations",
    "default_workers",
    "evaluate",
    "interval",
    "item_bootstrap",
    "kendall",
    "MACRO_MIN",
    "macro",
    "macro_samples",
    "mid_ranks",
    "MissingPolicy",
    "paired_comparison",
    "pair_counts",
    "rank_correlations",
    "rank_rows",
    "rank_weights",
    "retrieval_metrics",
    "Scope",
    "scope_key",
    "HalfCorrelation",
    "SplitHalf",
    "StudyReliability",
    "VoteAlpha",
    "split_half",
    "vote_alpha",
    "scope_metrics",
    "scopes_of",
    "MiniLMOnnx",
    "sentence_extra_available",
    "SentenceEmbeddings",
    "spearman",
    "target_retrieval",
    "vote_agreement",
    "vote_outcomes",
    "voter_bootstrap",
    "weighted_kendall",
    "weighted_spearman",
]
