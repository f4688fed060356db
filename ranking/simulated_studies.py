"""Simulated studies (Section 4.2): adaptive vs uniform design with the same budget.

Every ballot goes through :func:`ranking.close_ballot`, the code the web application runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ._validation import FloatArray, IntArray, check_alpha, check_generator, check_int
from .ballots import ballot_pairs, ballot_sizes
from .bradley_terry import DEFAULT_BT_ALPHA
from .budget import comparisons_per_ballot, uniform_m
from .metrics import kendall, ranks_from_scores, weighted_kendall, weighted_spearman
from .simulated_voters import (
    Amplitude,
    SimulatedCrowd,
    VoterSource,
    assign_voters,
    load_similarities,
    paper_embedding_similarities,
    true_ranks,
)
from .simulated_voters import underlying_similarity as _underlying_similarity
from .study import ESTIMATORS, Estimator, StudyState, close_ballot

__all__ = [
    "DESIGNS",
    "METRICS",
    "PUBLISHED_TABLE2",
    "VARIANTS",
    "SimulationSummary",
    "Variant",
    "rank_metrics",
    "run_simulations",
    "similarity_for",
    "simulate_study",
    "table2",
]

METRICS: tuple[str, ...] = ("rho_w", "tau_w", "rho", "tau")
DESIGNS: tuple[str, ...] = ("uniform", "adaptive")


@dataclass(frozen=True)
class Variant:
    """Which reading of the protocol a simulation follows (docs/science.md, Table 2).

    ``paper`` follows the paper's text; ``reference-code`` switches on the six departures
    of the authors' simulation code, which produced the published Table 2.
    """

    name: str
    amplitude: Amplitude  # 1: sigma_v * z (1 - z) instead of sigma_v * (1 - z^2)
    sqrt_power_law: bool  # 2: power law without the square root when False
    lagged_running_mean: bool  # 3: ybar^(k) = ((k-2) ybar + y) / (k-1)
    select_by: str  # 4: "x" selects by the current ballot's Borda score
    swapped_metrics: bool  # 5: "item at estimated rank r" against "true rank of item r"
    budget_uniform_m: bool  # 6: False uses round(M (1 - alpha^n_b) / (1 - alpha))


VARIANTS: dict[str, Variant] = {
    "paper": Variant("paper", "paper", True, False, "score", False, True),
    "reference-code": Variant("reference-code", "reference-code", False, True, "x", True, False),
}

# Table 2 of the paper: mean and sd over 50 simulations (990 items, M=20, alpha=0.5, n_b=7).
PUBLISHED_TABLE2: dict[tuple[str, str], dict[str, tuple[float, float]]] = {
    ("exponential", "uniform"): {
        "rho_w": (0.778, 0.058),
        "tau_w": (-0.11, 0.20),
        "rho": (0.8097, 0.0088),
        "tau": (0.6265, 0.0091),
    },
    ("exponential", "adaptive"): {
        "rho_w": (0.9452, 0.0028),
        "tau_w": (0.66, 0.17),
        "rho": (0.8015, 0.0087),
        "tau": (0.6330, 0.0098),
    },
    ("power_law", "uniform"): {
        "rho_w": (0.800, 0.062),
        "tau_w": (-0.11, 0.20),
        "rho": (0.9713, 0.0013),
        "tau": (0.8491, 0.0035),
    },
    ("power_law", "adaptive"): {
        "rho_w": (0.9800, 0.0014),
        "tau_w": (0.63, 0.18),
        "rho": (0.9632, 0.0019),
        "tau": (0.8406, 0.0040),
    },
    ("embedding", "uniform"): {
        "rho_w": (0.741, 0.058),
        "tau_w": (-0.11, 0.21),
        "rho": (0.7229, 0.0078),
        "tau": (0.5463, 0.0072),
    },
    ("embedding", "adaptive"): {
        "rho_w": (0.9146, 0.0042),
        "tau_w": (0.73, 0.12),
        "rho": (0.7258, 0.0093),
        "tau": (0.5611, 0.0097),
    },
}


def _variant(variant: str | Variant) -> Variant:
    if isinstance(variant, Variant):
        return variant
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {tuple(VARIANTS)}, got {variant!r}")
    return VARIANTS[variant]


def similarity_for(distribution: str, n_items: int, variant: str | Variant = "paper") -> FloatArray:
    """Underlying similarities for ``exponential``, ``power_law``, ``embedding`` or ``csv:PATH``.

    ``embedding`` is the paper's 990 word2vec similarities (shipped with the package); it and a
    CSV file (column ``similarity``) fix the number of items themselves: ``n_items`` is then
    ignored.
    """
    chosen = _variant(variant)
    if distribution == "embedding":
        return paper_embedding_similarities()
    if distribution.startswith("csv:"):
        return load_similarities(Path(distribution[4:]))
    if distribution in ("exponential", "power_law"):
        return _underlying_similarity(distribution, n_items, sqrt_power_law=chosen.sqrt_power_law)
    raise ValueError(
        "distribution must be 'exponential', 'power_law', 'embedding' or 'csv:PATH', "
        f"got {distribution!r}"
    )


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


def _design_ranks(
    crowd: SimulatedCrowd,
    sizes: Sequence[int],
    m: int,
    n_voters: int,
    rng: np.random.Generator,
    variant: Variant,
    estimator: Estimator,
    bt_alpha: float,
) -> IntArray:
    """Run one design (one ballot = uniform) through close_ballot; return estimated ranks."""
    n = crowd.n_items
    state = StudyState.new(n)
    items = np.arange(n, dtype=np.int64)
    score: FloatArray = np.full(n, np.nan)
    for k in range(len(sizes)):
        n_next = sizes[k + 1] if k + 1 < len(sizes) else 0
        pairs = ballot_pairs(items, m, rng)
        answers = crowd.answer(pairs, assign_voters(pairs.shape[0], n_voters, rng))
        state, outcome = close_ballot(
            state,
            items,
            pairs,
            answers,
            n_next,
            rng,
            estimator=estimator,
            select_by="x" if variant.select_by == "x" else "score",
            lagged_running_mean=variant.lagged_running_mean,
            bt_alpha=bt_alpha,
        )
        items = outcome.next_items
        score = outcome.score
    return ranks_from_scores(score, rng)


def _uniform_m(n_items: int, n_ballots: int, alpha: float, m: int, variant: Variant) -> int:
    if variant.budget_uniform_m:
        return uniform_m(n_items, n_ballots, alpha, m)
    return max(1, round(m * (1 - alpha**n_ballots) / (1 - alpha)))


def simulate_study(
    z: npt.ArrayLike,
    rng: np.random.Generator,
    *,
    m: int = 20,
    alpha: float = 0.5,
    n_ballots: int = 7,
    n_voters: int = 100,
    variant: str | Variant = "paper",
    estimator: Estimator = "rescaled_borda",
    bt_alpha: float = DEFAULT_BT_ALPHA,
    crowd: VoterSource | None = None,
) -> dict[str, dict[str, float]]:
    """One simulation: the same crowd votes in an adaptive and a uniform study.

    ``crowd`` draws the voters (for example a :class:`ranking.CrowdModel` fitted to a study's
    votes); by default they follow the paper's ranges (Section 4.2).

    Returns ``{"adaptive": metrics, "uniform": metrics}``, metrics as in :func:`rank_metrics`.
    """
    chosen = _variant(variant)
    gen = check_generator(rng)
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    similarity = np.asarray(z, dtype=np.float64)
    n = similarity.size
    sizes = ballot_sizes(n, alpha, n_ballots)
    per_item = check_int(m, "m", minimum=1)
    voters = check_int(n_voters, "n_voters", minimum=1)
    voting = SimulatedCrowd(similarity, voters, gen, amplitude=chosen.amplitude, voters=crowd)
    truth = true_ranks(similarity)
    uniform_per_item = _uniform_m(n, len(sizes), alpha, per_item, chosen)
    designs = {
        "uniform": ([n], uniform_per_item),
        "adaptive": (sizes, per_item),
    }
    results = {}
    for design, (design_sizes, design_m) in designs.items():
        ranks = _design_ranks(
            voting, design_sizes, design_m, voters, gen, chosen, estimator, bt_alpha
        )
        results[design] = rank_metrics(ranks, truth, swapped=chosen.swapped_metrics)
    return results


@dataclass(frozen=True)
class SimulationSummary:
    """Metrics of ``sims`` simulations: ``values[design]`` has shape (sims, 4) in METRICS order."""

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


def _simulate_chunk(
    z: FloatArray, seeds: list[np.random.SeedSequence], options: dict[str, Any]
) -> FloatArray:
    """Metrics of several simulations, shape (len(seeds), 2, 4): DESIGNS x METRICS."""
    out = np.empty((len(seeds), len(DESIGNS), len(METRICS)))
    for index, child in enumerate(seeds):
        outcome = simulate_study(z, np.random.default_rng(child), **options)
        out[index] = [[outcome[design][metric] for metric in METRICS] for design in DESIGNS]
    return out


def run_simulations(
    z: npt.ArrayLike,
    *,
    sims: int = 50,
    seed: int = 0,
    m: int = 20,
    alpha: float = 0.5,
    n_ballots: int = 7,
    n_voters: int = 100,
    variant: str | Variant = "paper",
    estimator: Estimator = "rescaled_borda",
    bt_alpha: float = DEFAULT_BT_ALPHA,
    jobs: int = 1,
    progress: Callable[[int], Any] | None = None,
    crowd: VoterSource | None = None,
) -> SimulationSummary:
    """Repeat :func:`simulate_study` ``sims`` times with independent seeded generators.

    ``crowd`` (picklable when ``jobs > 1``) draws every simulation's voters, as in
    :func:`simulate_study`.

    Simulation ``i`` always uses the ``i``-th child of ``SeedSequence(seed)``, so the result
    does not depend on ``jobs`` (worker processes; 1 runs in this process). ``progress``
    (for example a tqdm bar's ``update``) is called with the number of finished simulations.
    """
    count = check_int(sims, "sims", minimum=1)
    check_int(seed, "seed", minimum=0)
    workers = check_int(jobs, "jobs", minimum=1)
    chosen = _variant(variant)
    a = check_alpha(alpha)
    similarity = np.asarray(z, dtype=np.float64)
    n = similarity.size
    options: dict[str, Any] = {
        "m": m,
        "alpha": a,
        "n_ballots": n_ballots,
        "n_voters": n_voters,
        "variant": chosen,
        "estimator": estimator,
        "bt_alpha": bt_alpha,
        "crowd": crowd,
    }
    start = time.perf_counter()
    seeds = np.random.SeedSequence(seed).spawn(count)
    chunk = 1 if workers == 1 else max(1, count // (4 * workers))
    batches = [seeds[i : i + chunk] for i in range(0, count, chunk)]
    results: list[FloatArray] = []
    if workers == 1:
        for batch in batches:
            results.append(_simulate_chunk(similarity, batch, options))
            if progress is not None:
                progress(len(batch))
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(_simulate_chunk, similarity, b, options) for b in batches]
            for future, batch in zip(futures, batches, strict=True):
                results.append(future.result())
                if progress is not None:
                    progress(len(batch))
    stacked = np.concatenate(results)
    values = {design: stacked[:, column] for column, design in enumerate(DESIGNS)}
    uniform_per_item = _uniform_m(n, n_ballots, a, m, chosen)
    comparisons = {
        "adaptive": sum(comparisons_per_ballot(n, a, n_ballots, m)),
        "uniform": comparisons_per_ballot(n, a, 1, uniform_per_item)[0],
    }
    return SimulationSummary(values, comparisons, time.perf_counter() - start)


def table2(
    *,
    variant: str | Variant = "paper",
    sims: int = 50,
    seed: int = 0,
    embedding_csv: str | Path | None = None,
    estimator: Estimator = "rescaled_borda",
    jobs: int = 1,
    progress: Callable[[int], Any] | None = None,
) -> dict[str, Any]:
    """The setting of the paper's Table 2 (990 items, M=20, alpha=0.5, n_b=7, 100 voters).

    The embedding rows use the paper's similarities shipped with the package, or the CSV file
    ``embedding_csv`` (column ``similarity``) when given; ``jobs`` worker
    processes share the simulations without changing the result. Returns the JSON
    object printed by ``python -m ranking.simulate table2 --json``; each row also carries
    ``published`` (the paper's mean and sd) when the paper reports that cell.
    """
    chosen = _variant(variant)
    distributions: list[tuple[str, FloatArray]] = [
        (name, similarity_for(name, 990, chosen)) for name in ("exponential", "power_law")
    ]
    embedding = (
        paper_embedding_similarities()
        if embedding_csv is None
        else load_similarities(embedding_csv)
    )
    distributions.append(("embedding", embedding))
    start = time.perf_counter()
    rows = []
    comparisons: dict[str, int] = {}
    for offset, (name, z) in enumerate(distributions):
        summary = run_simulations(
            z,
            sims=sims,
            seed=seed + 1000 * offset,
            variant=chosen,
            estimator=estimator,
            jobs=jobs,
            progress=progress,
        )
        comparisons = summary.comparisons
        for design in DESIGNS:
            row: dict[str, Any] = {"distribution": name, "design": design}
            row.update(summary.mean_sd(design))
            published = PUBLISHED_TABLE2.get((name, design))
            if published is not None:
                row["published"] = {metric: list(published[metric]) for metric in METRICS}
            rows.append(row)
    return {
        "variant": chosen.name,
        "estimator": estimator,
        "sims": sims,
        "seed": seed,
        "seconds": round(time.perf_counter() - start, 3),
        "comparisons": comparisons,
        "rows": rows,
    }
