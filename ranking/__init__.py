"""Top-rank-focused adaptive pairwise comparisons (the paper's Sections 2-4) in numpy/scipy.

The library is grouped by concern; this page exports what a study needs most:

- :mod:`ranking.protocol`: ballot sizes and budget (Eqs. 2-4, 10), Borda scores, rescaling and
  running means (Eqs. 1, 5, 6), scoring a ballot, the paper's selection, the pooled
  Bradley-Terry fit, the pair helpers and the design advice of a target study's plan;
- :mod:`ranking.designs`: how ballots are sized and paired (adaptive, uniform, swiss,
  round_robin), one module per design, and their registry (the ``RANKING_DESIGNS`` setting);
- :mod:`ranking.ballots`: the one ballot driver and the rescoring of a study's votes;
- :mod:`ranking.crowd`: the simulated voters of Section 4.1, crowd files and the fit of the voter
  model to a study's votes;
- :mod:`ranking.simulation`: the simulator of Section 4.2 and a pilot's prediction;
- :mod:`ranking.evaluation`: rank metrics (Eqs. 7-9), the voter bootstrap and the evaluation of
  relatedness models against a study's ranking;
- :mod:`ranking.files`: every file the library reads.

The command lines are ``python -m ranking.plan``, ``ranking.simulate`` and ``ranking.evaluate``.
No Django import anywhere in this package.
"""

from .ballots import BallotDriver, StudyVotes, rescore
from .crowd import CrowdModel, SimulatedCrowd, fit_crowd
from .designs import DESIGNS, Design, default_design, get_design, use_designs
from .evaluation import evaluate as evaluate_models
from .evaluation import weighted_kendall, weighted_spearman
from .files import GoldStandard, InputFileError, load_word_vectors, read_gold, read_votes
from .protocol import (
    ESTIMATORS,
    StudyPlan,
    StudyState,
    ballot_sizes,
    bradley_terry,
    final_ranking,
    plan_study,
    score_ballot,
)
from .protocol.advice import Advice, advise_design
from .simulation import (
    SimulationSettings,
    predict_study,
    run_simulations,
    simulate_study,
    table2,
)

__all__ = [
    "Advice",
    "DESIGNS",
    "ESTIMATORS",
    "BallotDriver",
    "CrowdModel",
    "Design",
    "GoldStandard",
    "InputFileError",
    "SimulatedCrowd",
    "SimulationSettings",
    "StudyPlan",
    "StudyState",
    "StudyVotes",
    "advise_design",
    "ballot_sizes",
    "bradley_terry",
    "default_design",
    "evaluate_models",
    "final_ranking",
    "fit_crowd",
    "get_design",
    "load_word_vectors",
    "plan_study",
    "predict_study",
    "read_gold",
    "read_votes",
    "rescore",
    "run_simulations",
    "score_ballot",
    "simulate_study",
    "table2",
    "use_designs",
    "weighted_kendall",
    "weighted_spearman",
]
