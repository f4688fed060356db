"""Is the settled-top estimate calibrated? Simulated studies, whose truth is known.

Every simulation runs a whole study (:func:`ranking.simulation.simulate_study_votes`: the
design's ballots through the one ballot driver, a simulated crowd of Section 4.1) and, after
every ballot, calls :func:`ranking.evaluation.settled_top` as the study page does (its
empirical-Bayes posterior, or ``method="bootstrap"``: the plain voter bootstrap). Each current
top item's predicted probability of being in the true top ``k`` (the items' ``|z|`` order,
:func:`ranking.crowd.true_ranks`) is set against whether it is:

- ``ece``: the expected calibration error, over every top item of every simulation of a cell
  (one distribution, crowd, ``k`` and ballot), in ten equal-width probability bins:
  ``sum_b (n_b / n) |mean predicted_b - share truly in the top_b|``;
- ``bias``: the mean predicted overlap minus the mean true overlap, as a share of ``k``;
- ``error``: the root mean square of (predicted overlap - true overlap) / ``k`` over the
  simulations, the per-study error, with ``spread``, the root mean square of the binomial
  spread ``sqrt(sum_i p_i (1 - p_i)) / k`` a calibrated estimate still misses one study by;
- ``ece_floor``: the 95th percentile of the ``ece`` a calibrated estimate would show on the
  same predictions (each item's truth drawn from its own probability, :data:`FLOOR_DRAWS`
  times: consistency resampling, Brocker and Smith 2007; items independent, so a lower bound
  of the floor the items of one study, correlated, give); ``bias_se``: the standard error of
  ``bias`` over the simulations;
- ``coverage``: the share of simulations whose true overlap lies in the estimate's central
  90% interval of the number right (:meth:`ranking.evaluation.settled_top.TopK.overlap_interval`,
  :data:`ranking.evaluation.settled_top.INTERVAL`); a calibrated interval covers about 0.9
  (the interval is the draws' and is not moved by a calibration map).

A cell whose ``ece`` is above the limit but within its ``ece_floor``, and whose ``bias`` is
within two ``bias_se`` of 0, is what a calibrated estimate shows with that many simulations.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import FloatArray, check_generator, check_int
from ..crowd.model import CrowdModel
from ..crowd.voters import true_ranks
from ..designs import Design, default_design, get_design
from ..evaluation.settled_top import (
    DEFAULT_KS,
    DEFAULT_METHOD,
    DEFAULT_RESAMPLES,
    INTERVAL,
    OFFSET,
    SLOPE,
    Method,
    calibrated,
    settled_top,
)
from .studies import SimulationSettings
from .variants import variant_similarity
from .votes import simulate_study_votes

__all__ = [
    "BINS",
    "CROWDS",
    "FLOOR_DRAWS",
    "CalibrationCell",
    "CalibrationRun",
    "calibrate",
    "cell_figures",
    "expected_calibration_error",
]

BINS = 10
FLOOR_DRAWS = 200
CROWDS: dict[str, CrowdModel] = {
    "paper": CrowdModel.paper(),
    "noisier": CrowdModel(sigma_range=(0.1, 0.5), eps_range=(0.05, 0.15), source="noisier"),
}


@dataclass(frozen=True)
class CalibrationCell:
    """One cell of the table: a distribution, crowd, ``k`` and ballot, with the calibration
    map (``slope``, ``offset``) applied to the bootstrap shares."""

    distribution: str
    crowd: str
    k: int
    ballot: int
    slope: float
    offset: float
    sims: int
    ece: float
    bias: float
    error: float
    spread: float
    predicted: float  # mean predicted overlap / k
    true: float  # mean true overlap / k
    ece_floor: float
    bias_se: float
    coverage: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "distribution": self.distribution,
            "crowd": self.crowd,
            "k": self.k,
            "ballot": self.ballot,
            "slope": self.slope,
            "offset": self.offset,
            "sims": self.sims,
            "ece": round(self.ece, 4),
            "bias": round(self.bias, 4),
            "error": round(self.error, 4),
            "spread": round(self.spread, 4),
            "predicted": round(self.predicted, 4),
            "true": round(self.true, 4),
            "ece_floor": round(self.ece_floor, 4),
            "bias_se": round(self.bias_se, 4),
            "coverage": round(self.coverage, 4),
        }


def expected_calibration_error(predicted: FloatArray, truth: FloatArray) -> float:
    """``sum_b (n_b / n) |mean predicted_b - mean truth_b|`` over :data:`BINS` equal-width
    bins of ``predicted``."""
    bins = np.minimum((predicted * BINS).astype(np.int64), BINS - 1)
    gap = np.bincount(bins, predicted - truth, minlength=BINS)
    return float(np.abs(gap).sum() / max(predicted.size, 1))


def cell_figures(
    probabilities: Sequence[FloatArray],
    truths: Sequence[FloatArray],
    k: int,
    rng: np.random.Generator,
    intervals: Sequence[tuple[int, int]],
) -> dict[str, float]:
    """``ece``, ``bias``, ``error``, ``spread``, ``predicted``, ``true``, ``ece_floor``,
    ``bias_se`` and ``coverage`` of one cell (module docstring) from every simulation's top-``k``
    probabilities, truth (1.0: truly in the top ``k``) and interval of the number right;
    ``rng`` draws the floor's truths."""
    p = np.concatenate(probabilities)
    t = np.concatenate(truths)
    gen = check_generator(rng)
    floor = [
        expected_calibration_error(p, (gen.random(p.size) < p).astype(np.float64))
        for _ in range(FLOOR_DRAWS)
    ]
    predicted = np.array([q.sum() for q in probabilities]) / k
    true = np.array([q.sum() for q in truths]) / k
    spread = np.array([np.sqrt(np.sum(q * (1 - q))) for q in probabilities]) / k
    miss = predicted - true
    right = np.array([q.sum() for q in truths])
    span = np.asarray(intervals, dtype=np.float64).reshape(-1, 2)
    if span.shape[0] != right.size:
        raise ValueError(f"intervals must hold one (low, high) per simulation, got {span.shape}")
    covered = (span[:, 0] <= right) & (right <= span[:, 1])
    return {
        "ece": expected_calibration_error(p, t),
        "bias": float(miss.mean()),
        "error": float(np.sqrt(np.mean(miss**2))),
        "spread": float(np.sqrt(np.mean(spread**2))),
        "predicted": float(predicted.mean()),
        "true": float(true.mean()),
        "ece_floor": float(np.percentile(floor, 95)),
        "bias_se": float(miss.std(ddof=1) / np.sqrt(miss.size)) if miss.size > 1 else 0.0,
        "coverage": float(covered.mean()),
    }


@dataclass(frozen=True, eq=False)
class CalibrationRun:
    """Every simulation's shares and truth, per ``k`` and ballot.

    ``shares[(k, ballot)][i]`` holds simulation ``i``'s top ``k`` items' shares (of posterior
    draws, or bootstrap resamples: ``method``) after that ballot, before any calibration map;
    ``truths`` the same items' truth (1.0: in the true top ``k``); ``intervals`` each
    simulation's central :data:`~ranking.evaluation.settled_top.INTERVAL` interval of the number
    right; ``seed`` the simulations' seed, which also seeds each cell's ``ece_floor``.
    """

    distribution: str
    crowd: str
    method: Method
    sims: int
    seed: int
    resamples: int
    shares: dict[tuple[int, int], list[FloatArray]]
    truths: dict[tuple[int, int], list[FloatArray]]
    intervals: dict[tuple[int, int], list[tuple[int, int]]]
    seconds: float

    def cells(self, slope: float = SLOPE, offset: float = OFFSET) -> list[CalibrationCell]:
        """The table's cells with the calibration map ``slope``, ``offset``
        (:func:`ranking.evaluation.settled_top.calibrated`)."""
        return [
            CalibrationCell(
                self.distribution,
                self.crowd,
                k,
                after,
                slope,
                offset,
                self.sims,
                **cell_figures(
                    [calibrated(q, self.resamples, slope, offset) for q in shares],
                    self.truths[(k, after)],
                    k,
                    np.random.default_rng([self.seed, k, after]),
                    self.intervals[(k, after)],
                ),
            )  # fmt: skip
            for (k, after), shares in sorted(self.shares.items())
        ]


def calibrate(
    distribution: str,
    crowd: str,
    *,
    sims: int = 50,
    seed: int = 0,
    ks: Sequence[int] = DEFAULT_KS,
    design: Design | None = None,
    n_items: int = 990,
    settings: SimulationSettings | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    ballots: Sequence[int] | None = None,
    progress: Callable[[int], Any] | None = None,
    method: Method = DEFAULT_METHOD,
) -> CalibrationRun:
    """Simulated studies of one distribution and crowd, the settled top after every ballot.

    Simulation ``i`` uses the ``i``-th child of ``SeedSequence(seed)`` for the study and its
    estimate (:func:`ranking.evaluation.settled_top` with ``method``, the shares kept before
    any calibration map so that a map can be checked on them). ``crowd`` is a name of
    :data:`CROWDS`; ``ballots`` (default every ballot) the ballots after which the estimate
    is checked. ``settings`` gives ``M``, alpha, the ballots, the voters and the estimator
    (:class:`SimulationSettings`; its ``crowd`` is replaced by ``crowd``'s, and only the paper's
    variant is simulated).
    """
    chosen_settings = settings or SimulationSettings()
    count = check_int(sims, "sims", minimum=1)
    check_int(seed, "seed", minimum=0)
    if crowd not in CROWDS:
        raise ValueError(f"crowd must be one of {tuple(CROWDS)}, got {crowd!r}")
    wanted = [check_int(k, "k", minimum=1) for k in ks]
    z = variant_similarity(distribution, n_items)
    truth = true_ranks(z)
    if any(k >= z.size for k in wanted):
        raise ValueError(f"every k must be below the {z.size} items")
    chosen = design or get_design(default_design())
    start = time.perf_counter()
    shares: dict[tuple[int, int], list[FloatArray]] = {}
    truths: dict[tuple[int, int], list[FloatArray]] = {}
    intervals: dict[tuple[int, int], list[tuple[int, int]]] = {}
    drawn = resamples
    for child in np.random.SeedSequence(seed).spawn(count):
        gen = np.random.default_rng(child)
        _, votes = simulate_study_votes(
            z,
            gen,
            m=chosen_settings.m,
            alpha=chosen_settings.alpha,
            n_ballots=chosen_settings.n_ballots,
            n_voters=chosen_settings.n_voters,
            estimator=chosen_settings.estimator,
            crowd=CROWDS[crowd],
            design=chosen,
        )
        closed = len(votes.ballot_items)
        for after in ballots or range(1, closed + 1):
            if not 1 <= after <= closed:
                raise ValueError(f"the study has {closed} ballots, not {after}")
            result = settled_top(
                votes,
                gen,
                after=after,
                ks=wanted,
                with_survivors=False,
                resamples=resamples,
                estimator=chosen_settings.estimator,
                slope=1.0,
                offset=0.0,
                method=method,
            )
            drawn = result.resamples
            for top in result.tops:
                shares.setdefault((top.k, after), []).append(top.share)
                truths.setdefault((top.k, after), []).append(
                    (truth[top.items] <= top.k).astype(np.float64)
                )
                span = top.overlap_interval(INTERVAL)
                assert span is not None  # settled_top counts its draws
                intervals.setdefault((top.k, after), []).append(span)
        if progress is not None:
            progress(1)
    return CalibrationRun(
        distribution,
        crowd,
        method,
        count,
        seed,
        drawn,
        shares,
        truths,
        intervals,
        time.perf_counter() - start,
    )
