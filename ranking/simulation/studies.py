"""Simulated studies (Section 4.2): designs compared on the same crowd and the same budget.

Every simulated ballot runs through :class:`ranking.ballots.BallotDriver`, the code the web
application closes ballots with. Simulation ``i`` of a run draws one crowd; every design then
votes with that crowd and the same random streams (a paired comparison).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats

from .._validation import FloatArray, IntArray, check_alpha, check_generator, check_int
from ..ballots.driver import BallotDriver, Purpose
from ..crowd.voters import (
    SimulatedCrowd,
    VoterSource,
    assign_voters,
    true_ranks,
)
from ..designs import Adaptive, Design, Uniform, get_design
from ..evaluation.metrics import kendall, weighted_kendall, weighted_spearman
from ..protocol.bradley_terry import DEFAULT_BT_ALPHA
from ..protocol.closing import ESTIMATORS, Estimator
from ..protocol.scores import ranks_within_groups
from .variants import Variant, _variant, variant_similarity

__all__ = [
    "METRICS",
    "TABLE2_DESIGNS",
    "SimulationSettings",
    "SimulationSummary",
    "rank_metrics",
    "run_simulations",
    "simulate_study",
    "target_similarities",
]

METRICS: tuple[str, ...] = ("rho_w", "tau_w", "rho", "tau")
# The paper's two designs (Table 2): its baseline and its adaptive design.
TABLE2_DESIGNS: tuple[str, ...] = (Uniform.name, Adaptive.name)
DesignChoice = str | Design
Designs = Sequence[DesignChoice] | Mapping[str, Design]


@dataclass(frozen=True, eq=False)
class SimulationSettings:
    """The settings of a simulated study, shared by every design and simulation of a run.

    Checked and normalised on creation (``variant`` becomes its :class:`Variant`, ``groups`` an
    int64 array); every field has the paper's value by default (Section 4.2, Table 2).

    Attributes
    ----------
    m : comparisons per item and ballot, ``M``.
    alpha : fraction kept after each ballot.
    n_ballots : ballots ``n_b``.
    n_voters : simulated voters.
    variant : the reading of the protocol (``"paper"`` or ``"reference-code"``, Table 2).
    estimator : ``"rescaled_borda"`` or ``"bradley_terry"``.
    bt_alpha : the Bradley-Terry regulariser.
    crowd : draws the voters (e.g. a :class:`ranking.CrowdModel` fitted to a study's votes);
        None: the paper's ranges. Picklable when the simulations run in worker processes.
    groups : a target study: item ``i`` is a candidate of target ``groups[i]``; None: one pool.
    """

    m: int = 20
    alpha: float = 0.5
    n_ballots: int = 7
    n_voters: int = 100
    variant: str | Variant = "paper"
    estimator: Estimator = "rescaled_borda"
    bt_alpha: float = DEFAULT_BT_ALPHA
    crowd: VoterSource | None = None
    groups: npt.ArrayLike | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {ESTIMATORS}, got {self.estimator!r}")
        checked = {
            "m": check_int(self.m, "m", minimum=1),
            "alpha": check_alpha(self.alpha),
            "n_voters": check_int(self.n_voters, "n_voters", minimum=1),
            "variant": _variant(self.variant),
            "groups": None if self.groups is None else np.asarray(self.groups, dtype=np.int64),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def reading(self) -> Variant:
        """The protocol's reading (:attr:`variant`, checked)."""
        return _variant(self.variant)

    @property
    def group(self) -> IntArray | None:
        """The target of every item (:attr:`groups`, checked), None for one pool."""
        return None if self.groups is None else np.asarray(self.groups, dtype=np.int64)


def target_similarities(
    distribution: str,
    n_targets: int,
    n_candidates: int,
    rng: np.random.Generator,
    variant: str | Variant = "paper",
) -> tuple[FloatArray, IntArray]:
    """Similarities of a simulated target study and the target of every candidate.

    ``exponential`` and ``power_law`` give every target the same ``n_candidates`` values (the
    voters' noise still differs between targets, item by item); ``embedding`` and ``csv:PATH``
    give each target its own random sample (without replacement) of their values.

    Returns
    -------
    z : numpy.ndarray of float64, shape (n_targets * n_candidates,)
    groups : numpy.ndarray of int64, same shape: candidates of target ``g`` are consecutive.
    """
    targets = check_int(n_targets, "n_targets", minimum=1)
    candidates = check_int(n_candidates, "n_candidates", minimum=2)
    gen = check_generator(rng)
    pool = variant_similarity(distribution, candidates, variant)
    if distribution in ("exponential", "power_law"):
        z = np.tile(pool, targets)
    else:
        if pool.size < candidates:
            raise ValueError(
                f"{distribution} holds {pool.size} similarities, fewer than {candidates} candidates"
            )
        z = np.concatenate([gen.choice(pool, candidates, replace=False) for _ in range(targets)])
    return z, np.repeat(np.arange(targets, dtype=np.int64), candidates)


def rank_metrics(
    estimated: npt.ArrayLike, truth: npt.ArrayLike, *, swapped: bool = False, n0: float = 2
) -> dict[str, float]:
    """rho_w, tau_w (Eq. 8), rho and tau between estimated and true rank vectors.

    ``swapped=True`` reproduces the authors' code (departure 5): it pairs "id of the item at
    estimated rank r" with "true rank of item r".
    """
    a = np.asarray(estimated, dtype=np.int64)
    b = np.asarray(truth, dtype=np.int64)
    if swapped:
        a = np.argsort(a).astype(np.int64) + 1
    return {
        "rho_w": weighted_spearman(a, b, n0),
        "tau_w": weighted_kendall(a, b, n0),
        "rho": _spearman_of_permutations(a, b),
        "tau": kendall(a, b),
    }


def _spearman_of_permutations(a: IntArray, b: IntArray) -> float:
    """Spearman's rho of two permutations of 1..n: ``1 - 6 sum d^2 / (n (n^2 - 1))``.

    Equal to :func:`ranking.spearman` (scipy) for permutations, without scipy's per-call
    overhead, which matters in the simulation loop.
    """
    n = a.size
    if b.size != n or n < 2:
        raise ValueError("rank vectors must have the same length, at least 2")
    d = (a - b).astype(np.float64)
    return float(1.0 - 6.0 * np.dot(d, d) / (n * (n * n - 1.0)))


class _ReferenceCodeUniform(Uniform):
    """The authors' code's uniform budget: ``round(M (1 - alpha^n_b) / (1 - alpha))`` (Table 2)."""

    def schedule(
        self, n_items: int, n_ballots: int, alpha: float, m: int, *, keep_two: bool = False
    ) -> list[tuple[int, int]]:
        return [(n_items, max(1, round(m * (1 - alpha**n_ballots) / (1 - alpha))))]


def _designs(designs: Designs, variant: Variant) -> dict[str, Design]:
    """Label -> design: a mapping is kept; in a sequence a name becomes its registered design
    (default options) labelled by its name, and a Design is labelled by its name, or by its
    name and options when two share a name."""
    if isinstance(designs, Mapping):
        entries = list(designs.items())
    else:
        built = [get_design(e) if isinstance(e, str) else e for e in designs]
        names = [d.name for d in built if isinstance(d, Design)]
        entries = [
            (d.name if names.count(d.name) == 1 else d.describe(), d)
            if isinstance(d, Design)
            else ("?", d)
            for d in built
        ]
    chosen: dict[str, Design] = {}
    for label, design in entries:
        if not isinstance(design, Design):
            raise ValueError(f"a design must be a name or a Design, got {design!r}")
        if isinstance(design, Uniform) and not variant.budget_uniform_m:
            design = _ReferenceCodeUniform()
        if label in chosen:
            raise ValueError(f"design {label!r} is given twice")
        chosen[label] = design
    if not chosen:
        raise ValueError("give at least one design")
    return chosen


def _within_groups(ranks: IntArray, groups: IntArray | None) -> IntArray:
    return ranks if groups is None else ranks_within_groups(ranks, groups)


def _metrics(
    ranks: IntArray, truth: IntArray, groups: IntArray | None, swapped: bool
) -> dict[str, float]:
    """rank_metrics over the study, or their unweighted mean over groups (macro)."""
    if groups is None:
        return rank_metrics(ranks, truth, swapped=swapped)
    values = [
        rank_metrics(ranks[groups == g], truth[groups == g], swapped=swapped)
        for g in range(int(groups.max()) + 1)
    ]
    return {metric: float(np.mean([v[metric] for v in values])) for metric in METRICS}


def simulate_study(
    z: npt.ArrayLike,
    rng: np.random.Generator,
    settings: SimulationSettings | None = None,
    *,
    designs: Designs = TABLE2_DESIGNS,
) -> dict[str, dict[str, float]]:
    """One simulation: the same crowd votes in a study of each design.

    Every design runs through :class:`ranking.ballots.BallotDriver` with the same seed (drawn
    from ``rng``), so the designs share the crowd, the first ballot's random streams, who
    answers and who is distracted: a paired comparison. The settings' ``crowd`` draws the
    voters; by default they follow the paper's ranges (Section 4.2). With ``groups`` (a target
    study) every target is ranked on its own and the metrics are their unweighted mean over
    targets (macro).

    Returns
    -------
    dict
        ``{label: metrics}``, metrics as in :func:`rank_metrics`; a design is labelled by its
        name (by its name and options when two share a name), or by its key in a mapping.
    """
    given = SimulationSettings() if settings is None else settings
    chosen = given.reading
    gen = check_generator(rng)
    similarity = np.asarray(z, dtype=np.float64)
    n = similarity.size
    group = given.group
    by_label = _designs(designs, chosen)
    voting = SimulatedCrowd(
        similarity, given.n_voters, gen, amplitude=chosen.amplitude, voters=given.crowd
    )
    truth = _within_groups(true_ranks(similarity), group)
    seed = int(gen.integers(2**62))
    results = {}
    for label, design in by_label.items():
        driver = BallotDriver(
            design,
            n,
            n_ballots=given.n_ballots,
            alpha=given.alpha,
            m=given.m,
            seed=seed,
            groups=group,
            estimator=given.estimator,
            select_by="x" if chosen.select_by == "x" else "score",
            lagged_running_mean=chosen.lagged_running_mean,
            bt_alpha=given.bt_alpha,
        )

        def answer(number: int, pairs: IntArray, driver: BallotDriver = driver) -> FloatArray:
            draws = driver.rng(number, Purpose.SIMULATED_VOTERS)
            voters = assign_voters(pairs.shape[0], given.n_voters, draws)
            return voting.answer(pairs, voters, draws)

        outcome, _ = driver.run(answer)
        ranks = _within_groups(driver.final_ranks(outcome.score), group)
        results[label] = _metrics(ranks, truth, group, chosen.swapped_metrics)
    return results


@dataclass(frozen=True)
class SimulationSummary:
    """Metrics of ``sims`` paired simulations.

    Attributes
    ----------
    values : ``{label: array (sims, 4)}``, metrics in METRICS order, row ``i`` simulation ``i``
        of every design (the same crowd and streams).
    comparisons : comparisons each design's study makes.
    seconds : wall time.
    """

    values: dict[str, FloatArray]
    comparisons: dict[str, int]
    seconds: float

    def mean_sd(self, design: str) -> dict[str, list[float | None]]:
        """``{metric: [mean, sd]}``; sd is the unbiased estimate (None for one simulation)."""
        data = self.values[design]
        result: dict[str, list[float | None]] = {}
        for column, metric in enumerate(METRICS):
            sd = float(np.std(data[:, column], ddof=1)) if data.shape[0] > 1 else None
            result[metric] = [float(np.mean(data[:, column])), sd]
        return result

    def mean_se(self, design: str) -> dict[str, list[float | None]]:
        """``{metric: [mean, standard error of the mean]}`` (None for one simulation)."""
        return {
            metric: [mean, None if sd is None else sd / np.sqrt(self.values[design].shape[0])]
            for metric, (mean, sd) in self.mean_sd(design).items()
        }

    def paired_difference(
        self, design: str, baseline: str, confidence: float = 0.95
    ) -> dict[str, list[float | None]]:
        """``{metric: [mean, low, high]}`` of ``design - baseline`` over the paired simulations.

        The interval is Student's t over the simulations' differences (None for one).
        """
        difference = self.values[design] - self.values[baseline]
        count = difference.shape[0]
        result: dict[str, list[float | None]] = {}
        for column, metric in enumerate(METRICS):
            mean = float(np.mean(difference[:, column]))
            if count < 2:
                result[metric] = [mean, None, None]
                continue
            half = float(
                stats.t.ppf(0.5 + confidence / 2, count - 1)
                * np.std(difference[:, column], ddof=1)
                / np.sqrt(count)
            )
            result[metric] = [mean, mean - half, mean + half]
        return result


def _simulate_chunk(
    z: FloatArray,
    seeds: list[np.random.SeedSequence],
    settings: SimulationSettings,
    designs: dict[str, Design],
) -> list[dict[str, dict[str, float]]]:
    return [
        simulate_study(z, np.random.default_rng(child), settings, designs=designs)
        for child in seeds
    ]


def run_simulations(
    z: npt.ArrayLike,
    settings: SimulationSettings | None = None,
    *,
    designs: Designs = TABLE2_DESIGNS,
    sims: int = 50,
    seed: int = 0,
    jobs: int = 1,
    progress: Callable[[int], Any] | None = None,
) -> SimulationSummary:
    """Repeat :func:`simulate_study` ``sims`` times with independent seeded generators.

    Every simulation has the same ``settings`` (the paper's by default). Simulation ``i``
    always uses the ``i``-th child of ``SeedSequence(seed)``, so the result does not depend on
    ``jobs`` (worker processes; 1 runs in this process). ``progress`` (for example a tqdm
    bar's ``update``) is called with the number of finished simulations.
    """
    count = check_int(sims, "sims", minimum=1)
    check_int(seed, "seed", minimum=0)
    workers = check_int(jobs, "jobs", minimum=1)
    given = SimulationSettings() if settings is None else settings
    by_label = _designs(designs, given.reading)
    similarity = np.asarray(z, dtype=np.float64)
    comparisons = {
        label: BallotDriver(
            design,
            similarity.size,
            n_ballots=given.n_ballots,
            alpha=given.alpha,
            m=given.m,
            groups=given.group,
        ).total_comparisons
        for label, design in by_label.items()
    }
    start = time.perf_counter()
    seeds = np.random.SeedSequence(seed).spawn(count)
    chunk = 1 if workers == 1 else max(1, count // (4 * workers))
    batches = [seeds[i : i + chunk] for i in range(0, count, chunk)]
    outcomes: list[dict[str, dict[str, float]]] = []
    if workers == 1:
        for batch in batches:
            outcomes.extend(_simulate_chunk(similarity, batch, given, by_label))
            if progress is not None:
                progress(len(batch))
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [
                pool.submit(_simulate_chunk, similarity, b, given, by_label) for b in batches
            ]
            for future, batch in zip(futures, batches, strict=True):
                outcomes.extend(future.result())
                if progress is not None:
                    progress(len(batch))
    values = {
        label: np.array([[outcome[label][metric] for metric in METRICS] for outcome in outcomes])
        for label in by_label
    }
    return SimulationSummary(values, comparisons, time.perf_counter() - start)
