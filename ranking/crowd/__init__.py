"""Voters: the simulated crowd of Section 4.1, a crowd file, the fit of the voter model to a
study's votes, and each voter's quality.
"""

from __future__ import annotations

from .model import (
    CROWD_FORMAT,
    CrowdModel,
    reference_relatedness,
)
from .noise import (
    CrowdFit,
    fit_crowd,
)
from .quality import (
    MIN_AGREEMENT,
    RUN_LENGTH,
    SPEEDER_MS,
    AnswerPatterns,
    ComparisonTime,
    VoterQuality,
    answer_patterns,
    position_bias,
    speed_flags,
    time_per_comparison,
    voter_quality,
)
from .voters import (
    SimulatedCrowd,
    VoterSource,
    assign_voters,
    load_similarities,
    paper_embedding_similarities,
    similarity_for,
    true_ranks,
    underlying_similarity,
)

__all__ = [
    "CROWD_FORMAT",
    "MIN_AGREEMENT",
    "RUN_LENGTH",
    "SPEEDER_MS",
    "AnswerPatterns",
    "answer_patterns",
    "assign_voters",
    "ComparisonTime",
    "CrowdFit",
    "CrowdModel",
    "fit_crowd",
    "load_similarities",
    "paper_embedding_similarities",
    "position_bias",
    "reference_relatedness",
    "similarity_for",
    "SimulatedCrowd",
    "speed_flags",
    "time_per_comparison",
    "true_ranks",
    "underlying_similarity",
    "voter_quality",
    "VoterQuality",
    "VoterSource",
]
