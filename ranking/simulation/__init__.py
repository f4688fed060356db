"""The simulator of Section 4.2 (designs compared on the same crowd and budget), whole
simulated studies with their votes, and a pilot's prediction.
"""

from __future__ import annotations

from .prediction import (
    Prediction,
    design_costs,
    predict_study,
    prediction_similarities,
    smallest_m,
)
from .studies import (
    METRICS,
    TABLE2_DESIGNS,
    SimulationSettings,
    SimulationSummary,
    rank_metrics,
    run_simulations,
    simulate_study,
    target_similarities,
)
from .table2 import table2
from .variants import PUBLISHED_TABLE2, VARIANTS, Variant, variant_similarity
from .votes import (
    simulate_study_votes,
)

__all__ = [
    "METRICS",
    "PUBLISHED_TABLE2",
    "TABLE2_DESIGNS",
    "VARIANTS",
    "design_costs",
    "predict_study",
    "Prediction",
    "prediction_similarities",
    "rank_metrics",
    "run_simulations",
    "simulate_study",
    "simulate_study_votes",
    "SimulationSettings",
    "SimulationSummary",
    "smallest_m",
    "table2",
    "target_similarities",
    "Variant",
    "variant_similarity",
]
