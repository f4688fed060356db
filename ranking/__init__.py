"""Top-rank-focused adaptive pairwise comparisons (the paper's Sections 2-4) in numpy/scipy.

The library is grouped by concern; this page exports what a study needs most:

- :mod:`ranking.protocol`: ballot sizes and budget (Eqs. 2-4, 10), Borda scores, rescaling and
  running means (Eqs. 1, 5, 6), closing a ballot, the pooled Bradley-Terry fit;
- :mod:`ranking.designs`: how ballots are sized and paired (adaptive, uniform, swiss,
  round_robin), one module per design, and their registry;
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
from .designs import DESIGNS, Design, get_design, register_design
from .evaluation import evaluate as evaluate_models
from .evaluation import weighted_kendall, weighted_spearman
from .files import GoldStandard, InputFileError, load_word_vectors, read_gold, read_votes
from .protocol import (
    ESTIMATORS,
    StudyPlan,
    StudyState,
    ballot_sizes,
    bradley_terry,
    close_ballot,
    final_ranking,
    plan_study,
)
from .simulation import predict_study, run_simulations, simulate_study, table2

__all__ = [
    "DESIGNS",
    "ESTIMATORS",
    "BallotDriver",
    "CrowdModel",
    "Design",
    "GoldStandard",
    "InputFileError",
    "SimulatedCrowd",
    "StudyPlan",
    "StudyState",
    "StudyVotes",
    "ballot_sizes",
    "bradley_terry",
    "close_ballot",
    "evaluate_models",
    "final_ranking",
    "fit_crowd",
    "get_design",
    "load_word_vectors",
    "plan_study",
    "predict_study",
    "read_gold",
    "read_votes",
    "register_design",
    "rescore",
    "run_simulations",
    "simulate_study",
    "table2",
    "weighted_kendall",
    "weighted_spearman",
]
