"""Uncertainty of model metrics that comes from the crowd: a bootstrap over voters.

Question answered: had the study been run with another crowd drawn from the same population
of voters, how different would each metric be? Each resample draws the study's voters with
replacement; a voter drawn ``c`` times has every vote counted ``c`` times. The study's
ballots are rescored with the study's estimator through :func:`ranking.score_ballot` on the
same ballot structure (every ballot keeps its items, :func:`ranking.rescore`),
the resampled final ranking is formed as the study forms it (:func:`ranking.final_ranking`)
and every metric of every model is computed against it. Resample ``r`` is the same for all
models, which makes the paired comparison of two models possible. :func:`interval` keeps the
resamples' percentiles and reports the interval :func:`centred_interval` explains: their spread
placed around the study's estimate, for the figure the same study would give with another crowd
of its size.

:func:`item_bootstrap` answers a different question: how much a metric depends on which
items happen to be in the gold, the gold ranking itself held fixed (items drawn with
replacement; a drawn-twice item ties with itself in both rankings). It says nothing about
the crowd's uncertainty.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray, check_generator, check_int
from ..ballots.replay import StudyVotes, rescore
from ..protocol.closing import Estimator, final_ranking
from .tied_metrics import METRIC_NAMES, rank_correlations, rank_rows

__all__ = [
    "ELEMENTS_PER_CHUNK",
    "Scope",
    "centred_interval",
    "default_workers",
    "interval",
    "item_bootstrap",
    "paired_comparison",
    "scope_key",
    "scope_metrics",
    "voter_bootstrap",
]

# Rows x items handled at once by the vectorised metrics: bounds memory at a few hundred MB.
ELEMENTS_PER_CHUNK = 1 << 20
# Resampled rankings kept at once (int32): 100 MB.
STORED_RANKS = 25_000_000
# A resampled difference placed around the estimate within this of 0 counts as a tie.
_TIE = 1e-12
Progress = Callable[[int, int], Any]
# One resample's vote agreement (plain, weighted) and vote statistics, per model.
Resampled = tuple[dict[str, FloatArray], dict[str, dict[str, float]]]


@dataclass(frozen=True, eq=False)
class Scope:
    """The items one metric is computed on (all items, one area or one target) for one model.

    Attributes
    ----------
    name : str or None
        Area or target name, or None for the whole gold.
    members : numpy.ndarray of int64
        Gold positions of the scope (all items, or the area's).
    items : numpy.ndarray of int64
        Those evaluated: all members, or the scored ones (missing-score policy ``skip``).
    model_ranks : numpy.ndarray of float64
        The model's mid-ranks of those items (1 = highest score).
    gold_ranks : numpy.ndarray of float64
        The gold's ranks of those items re-ranked ``1..n`` (1 = most related, mid-ranks).
    """

    name: str | None
    members: IntArray
    items: IntArray
    model_ranks: FloatArray
    gold_ranks: FloatArray


def scope_key(name: str | None) -> str:
    """The key of a scope's samples in :func:`voter_bootstrap`'s result: ``""`` for the whole
    gold, ``"scope:<name>"`` for an area or target, so that no name can take one of the other
    keys (``"votes"``, ``"statistics"``, ``"macro"``)."""
    return "" if name is None else f"scope:{name}"


def centred_interval(
    point: float | None,
    low: float | None,
    high: float | None,
    mean: float | None,
    bounds: tuple[float, float] = (-1.0, 1.0),
) -> tuple[float | None, float | None]:
    """The interval the product reports: the resamples' spread placed around the estimate.

    Parameters
    ----------
    point : float or None
        The study's estimate.
    low, high : float or None
        The 2.5th and 97.5th percentiles of the resampled values.
    mean : float or None
        Their mean.
    bounds : tuple of float, optional
        The figure's range (``(-1, 1)`` for a correlation, ``(0, 1)`` for a share); both ends
        are kept within it.

    Returns
    -------
    tuple of float or None
        ``(point + low - mean, point + high - mean)``, widened to hold ``point`` (a skewed
        spread could leave it out) and kept within ``bounds``; ``(None, None)`` when a part is
        missing.

    Notes
    -----
    A resample draws the voters with replacement, so only about 63% of them are distinct and
    its ranking is noisier than the study's: its figures sit below the estimate by a shift
    that belongs to the resampling, not to the study. The spread of the resamples around their
    own mean measures how the figure varies from one crowd to another; placed around the
    estimate it is the interval for the figure the same study would give with another crowd of
    the same size (the estimate is one draw of it). The interval always holds its estimate.
    """
    if point is None or low is None or high is None or mean is None:
        return None, None
    if not all(np.isfinite(v) for v in (point, low, high, mean)):
        return None, None
    least, most = bounds
    start = min(point + (low - mean), point)
    end = max(point + (high - mean), point)
    return min(max(start, least), most), min(max(end, least), most)


def interval(
    samples: FloatArray, point: float | None, bounds: tuple[float, float] = (-1.0, 1.0)
) -> dict[str, float | None]:
    """Summary of bootstrap samples.

    Parameters
    ----------
    samples : numpy.ndarray of float64
        The figure in every resample (NaN: undefined in that resample).
    point : float or None
        The study's estimate.
    bounds : tuple of float, optional
        The figure's range, for :func:`centred_interval`.

    Returns
    -------
    dict
        ``low``, ``high``: the 2.5th and 97.5th percentiles of the resampled values, their
        ``mean`` and ``sd``; with a finite ``point``, ``centred_low`` and ``centred_high``:
        the 95% interval the product reports (:func:`centred_interval`), for the figure the
        same study would give with another crowd of its size. The plain percentiles sit below
        the estimate (a resample's ranking is noisier than the study's) and often leave it
        out: they describe the resamples, not the study.
    """
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return {"low": None, "high": None, "mean": None, "sd": None}
    low, high = (float(v) for v in np.percentile(finite, [2.5, 97.5]))
    mean = float(np.mean(finite))
    result: dict[str, float | None] = {
        "low": low,
        "high": high,
        "mean": mean,
        "sd": float(np.std(finite, ddof=1)) if finite.size > 1 else None,
    }
    if point is not None and np.isfinite(point):
        result["centred_low"], result["centred_high"] = centred_interval(
            point, low, high, mean, bounds
        )
    return result


def _chunk_rows(n_items: int) -> int:
    return max(1, ELEMENTS_PER_CHUNK // max(n_items, 1))


def default_workers() -> int:
    """Threads for the vectorised metrics: the CPUs this process may use, at most 4."""
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return max(1, min(4, available))


def scope_metrics(
    scope: Scope, gold_ranks: npt.NDArray[np.floating], n0: float
) -> dict[str, FloatArray]:
    """The four metrics of ``scope`` against every row of ``gold_ranks`` (ranks of all
    items), computed in chunks of rows."""
    rows = gold_ranks.shape[0]
    out = {metric: np.full(rows, np.nan) for metric in METRIC_NAMES}
    if scope.items.size < 2:
        return out
    step = _chunk_rows(scope.items.size)
    for first in range(0, rows, step):
        gold = rank_rows(gold_ranks[first : first + step][:, scope.items])
        values = rank_correlations(scope.model_ranks, gold, n0)
        for metric in METRIC_NAMES:
            out[metric][first : first + step] = values[metric]
    return out


def voter_bootstrap(
    votes: StudyVotes,
    scopes: Mapping[str, Sequence[Scope]],
    rng: np.random.Generator,
    *,
    resamples: int,
    n0: float = 2,
    estimator: Estimator = "rescaled_borda",
    vote_outcomes: Mapping[str, FloatArray] | None = None,
    certainty: FloatArray | None = None,
    vote_statistics: Mapping[str, Mapping[str, Callable[[IntArray], float]]] | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
) -> dict[str, dict[str, dict[str, FloatArray]]]:
    """Metrics of every model against ``resamples`` voter-resampled study rankings.

    Parameters
    ----------
    votes : StudyVotes
        The study's votes and ballots.
    scopes : mapping of model name to sequence of Scope
        What to compute for every model (all items and per area).
    rng : numpy.random.Generator
        Resample ``r`` uses the ``r``-th generator spawned from it: to draw the voters and
        break ties of the resampled ranking. The result does not depend on ``workers``.
    resamples : int
    n0 : float, optional
        Weight offset of Eq. 9.
    estimator : {"rescaled_borda", "bradley_terry"}, optional
        The study's estimator.
    vote_outcomes : mapping of model name to array, optional
        :func:`ranking.vote_agreement.vote_outcomes` of every model: the vote agreement is
        resampled too (``agreement``; with ``certainty``, the certainty-weighted one with
        the weights of the full crowd's fit held fixed).
    vote_statistics : mapping of model name to mapping of name to callable, optional
        Further statistics of every model computed from each resample's vote multiplicities
        (``f(multiplicity)``, one count per vote): Avraham & Goldberg's score of a target
        study (:func:`ranking.evaluation.comparisons.ag_resampler`).
    progress : callable, optional
        ``progress(done, resamples)`` as resamples are rescored.
    workers : int, optional
        Threads (numpy releases the GIL in its loops); default :func:`default_workers`.

    Returns
    -------
    dict
        ``result[model][key][metric]`` is an array of ``resamples`` values; ``key`` is
        :func:`scope_key` of the scope (``""`` for all items); vote agreement is under key
        ``"votes"``, the vote statistics under ``"statistics"``.
    """
    gen = check_generator(rng)
    count = check_int(resamples, "resamples", minimum=1)
    threads = check_int(workers or default_workers(), "workers", minimum=1)
    n_voters = votes.n_voters
    n = votes.n_items
    children = gen.spawn(count)
    outcomes = dict(vote_outcomes or {})
    statistics = {name: dict(f) for name, f in (vote_statistics or {}).items()}
    weight = None if certainty is None else np.nan_to_num(certainty, nan=0.0)

    def one(child: np.random.Generator) -> tuple[npt.NDArray[np.int32], Resampled]:
        drawn = np.bincount(child.integers(0, n_voters, n_voters), minlength=n_voters)
        multiplicity = drawn[votes.voter]
        score = rescore(votes, estimator=estimator, multiplicity=multiplicity)
        agreeing = {
            name: _resampled_agreement(outcome, multiplicity, weight)
            for name, outcome in outcomes.items()
        }
        values = {
            name: {stat: f(multiplicity) for stat, f in named.items()}
            for name, named in statistics.items()
        }
        return final_ranking(score, child)[1].astype(np.int32), (agreeing, values)

    result: dict[str, dict[str, dict[str, FloatArray]]] = {
        name: {scope_key(s.name): {} for s in model_scopes} for name, model_scopes in scopes.items()
    }
    parts: dict[tuple[str, str], list[dict[str, FloatArray]]] = {
        (name, scope_key(s.name)): [] for name, model_scopes in scopes.items() for s in model_scopes
    }
    agreement = {
        name: {"agreement": np.full(count, np.nan), "weighted_agreement": np.full(count, np.nan)}
        for name in outcomes
    }
    resampled = {
        name: {stat: np.full(count, np.nan) for stat in named} for name, named in statistics.items()
    }
    scope_of = {(name, scope_key(s.name)): s for name, ss in scopes.items() for s in ss}
    block = max(1, STORED_RANKS // max(n, 1))
    done = 0
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for first in range(0, count, block):
            drawn = list(pool.map(one, children[first : first + block]))
            ranks = np.stack([r for r, _ in drawn])
            for row, (_, (agreeing, stats)) in enumerate(drawn):
                for name, named in stats.items():
                    for stat, value in named.items():
                        resampled[name][stat][first + row] = value
                for name, pair in agreeing.items():
                    agreement[name]["agreement"][first + row] = pair[0]
                    agreement[name]["weighted_agreement"][first + row] = pair[1]
            del drawn
            keys = list(parts)
            computed = pool.map(scope_metrics, [scope_of[k] for k in keys], [ranks] * len(keys),
                                [n0] * len(keys))  # fmt: skip
            for key, metrics in zip(keys, computed, strict=True):
                parts[key].append(metrics)
            done = min(first + block, count)
            if progress is not None:
                progress(done, count)
    for (model, scope), chunks in parts.items():
        result[model][scope] = {m: np.concatenate([c[m] for c in chunks]) for m in METRIC_NAMES}
    for model, agreed in agreement.items():
        result[model]["votes"] = agreed
    for model, arrays in resampled.items():
        result[model]["statistics"] = arrays
    return result


def _resampled_agreement(
    outcome: FloatArray, multiplicity: IntArray, weight: FloatArray | None
) -> FloatArray:
    """Plain and certainty-weighted agreement of one resample (NaN when undefined)."""
    counted = ~np.isnan(outcome)
    times = multiplicity[counted].astype(np.float64)
    values = outcome[counted]
    result = np.full(2, np.nan)
    if times.sum():
        result[0] = np.dot(times, values) / times.sum()
    if weight is not None:
        w = times * weight[counted]
        if w.sum():
            result[1] = np.dot(w, values) / w.sum()
    return result


def paired_comparison(
    name_a: str,
    name_b: str,
    samples: Mapping[str, Mapping[str, Mapping[str, FloatArray]]],
    points: Mapping[str, Mapping[str, Mapping[str, float | None]]],
) -> dict[str, Any]:
    """Model A minus model B on the same resamples.

    Parameters
    ----------
    name_a, name_b : str
        The two models.
    samples : mapping
        :func:`voter_bootstrap`'s result (with a target study's ``macro`` samples).
    points : mapping
        ``points[model][key][metric]``: the study's estimates.

    Returns
    -------
    dict
        ``{"a", "b", "interval": "centred", "metrics"}``: for every metric of the whole gold
        (and of a target study's macro means, ``macro_rho_w``...; the vote agreement,
        ``votes_...``; the vote statistics, by their names) the point ``difference``, its 95%
        interval ``low``, ``high`` (the kind the leaderboard shows, :func:`centred_interval`:
        the resampled differences' spread placed around the point difference, so it always
        holds it), and the share of resamples in which A scores higher (``a_better``) or the
        same (``equal``), the resampled differences placed around the point difference as
        in the interval.
    """
    metrics: dict[str, Any] = {}
    prefixes = {"": "", "macro": "macro_", "votes": "votes_", "statistics": ""}
    for key, prefix in prefixes.items():
        a_scope, b_scope = samples[name_a].get(key), samples[name_b].get(key)
        if a_scope is None or b_scope is None:
            continue
        # Correlations differ by up to 2; agreements and the A&G score are shares.
        bounds = (-2.0, 2.0) if key in ("", "macro") else (-1.0, 1.0)
        for metric, a_values in a_scope.items():
            difference = a_values - b_scope[metric]
            finite = difference[np.isfinite(difference)]
            pa = points[name_a].get(key, {}).get(metric)
            pb = points[name_b].get(key, {}).get(metric)
            point = None if pa is None or pb is None else pa - pb
            label = prefix + metric
            if finite.size == 0 or point is None or not np.isfinite(point):
                metrics[label] = None
                continue
            percentiles = np.percentile(finite, [2.5, 97.5])
            mean = float(np.mean(finite))
            low, high = centred_interval(
                point, float(percentiles[0]), float(percentiles[1]), mean, bounds
            )
            placed = finite - mean + point
            metrics[label] = {
                "difference": point,
                "low": low,
                "high": high,
                "a_better": float(np.mean(placed > _TIE)),
                "equal": float(np.mean(np.abs(placed) <= _TIE)),
            }
    return {"a": name_a, "b": name_b, "interval": "centred", "metrics": metrics}


def item_bootstrap(
    gold_ranks: FloatArray,
    model_ranks: FloatArray,
    rng: np.random.Generator,
    *,
    resamples: int,
    n0: float = 2,
) -> dict[str, FloatArray]:
    """Metrics over item resamples (a different question: see the module docstring).

    ``gold_ranks`` and ``model_ranks`` are mid-ranks of the same evaluated items; each
    resample draws as many items with replacement and ranks them anew in both.
    """
    gen = check_generator(rng)
    count = check_int(resamples, "resamples", minimum=1)
    m = gold_ranks.size
    out = {metric: np.full(count, np.nan) for metric in METRIC_NAMES}
    rows = _chunk_rows(m)
    for first in range(0, count, rows):
        size = min(rows, count - first)
        drawn = gen.integers(0, m, (size, m))
        values = rank_correlations(rank_rows(gold_ranks[drawn]), rank_rows(model_ranks[drawn]), n0)
        for metric in METRIC_NAMES:
            out[metric][first : first + size] = values[metric]
    return out
