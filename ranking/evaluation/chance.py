"""The chance level of the rank metrics: the model's ranks shuffled at random.

The weighted coefficients are not centred: a random ranking of 990 items scores about -0.6 on
rho_w and -0.5 on tau_w (about -0.4 and -0.3 at 45 items), so every report shows the chance
baseline beside the model's value.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .._validation import check_generator, check_int
from .bootstrap import ELEMENTS_PER_CHUNK, Scope
from .tied_metrics import rank_correlations

__all__ = [
    "CHANCE_METRICS",
    "chance_baseline",
    "chance_key",
    "chance_of",
    "default_chance_permutations",
    "with_chance",
]

CHANCE_METRICS: tuple[str, ...] = ("rho_w", "tau_w", "rho")


def default_chance_permutations(n_items: int) -> int:
    """1,000 permutations, fewer for large gold sets (at least 200): 20 million ranks."""
    return int(min(1000, max(200, 20_000_000 // max(n_items, 1))))


def chance_baseline(
    gold_ranks: npt.ArrayLike,
    model_ranks: npt.ArrayLike,
    *,
    n0: float = 2,
    rng: np.random.Generator,
    permutations: int = 1000,
) -> dict[str, dict[str, float]]:
    """Distribution of the metrics when the model's ranks are randomly permuted.

    The shuffled vector keeps the model's ties (items ranked last together stay tied), so
    for a model without ties this is a uniformly random ranking of the same ``n`` items.

    Returns
    -------
    dict
        For each of ``rho_w``, ``tau_w`` and ``rho``: ``mean``, ``sd``, ``low`` and ``high``
        (2.5th and 97.5th percentiles). (Kendall's tau is left out: it costs as much as
        tau_w, and its chance distribution is known, mean 0 and variance
        ``2 (2n + 5) / (9 n (n - 1))`` without ties.)
    """
    gen = check_generator(rng)
    count = check_int(permutations, "permutations", minimum=2)
    gold = np.asarray(gold_ranks, dtype=np.float64)
    model = np.asarray(model_ranks, dtype=np.float64)
    rows = max(1, ELEMENTS_PER_CHUNK // max(model.size, 1))
    samples = {metric: np.empty(count) for metric in CHANCE_METRICS}
    for first in range(0, count, rows):
        size = min(rows, count - first)
        shuffled = gen.permuted(np.broadcast_to(model, (size, model.size)), axis=1)
        values = rank_correlations(gold, shuffled, n0, CHANCE_METRICS)
        for metric in CHANCE_METRICS:
            samples[metric][first : first + size] = values[metric]
    summary = {}
    for metric, drawn in samples.items():
        low, high = np.percentile(drawn, [2.5, 97.5])
        summary[metric] = {
            "mean": float(np.mean(drawn)),
            "sd": float(np.std(drawn, ddof=1)),
            "low": float(low),
            "high": float(high),
        }
    return summary


def chance_key(scope: Scope) -> bytes | None:
    """What a scope's chance level depends on: the multisets of its gold and model ranks (a
    random permutation of one against the other). Scopes with one key share one baseline: the
    targets of a target study of one size, without ties, cost one."""
    if scope.items.size < 2:
        return None
    return np.sort(scope.gold_ranks).tobytes() + b"|" + np.sort(scope.model_ranks).tobytes()


def chance_of(
    scope: Scope, *, n0: float, rng: np.random.Generator, permutations: int
) -> dict[str, dict[str, float]]:
    """:func:`chance_baseline` of a scope's gold and model ranks."""
    return chance_baseline(
        scope.gold_ranks, scope.model_ranks, n0=n0, rng=rng, permutations=permutations
    )


def with_chance(result: dict[str, Any], chance: dict[str, dict[str, float]] | None) -> None:
    """The chance level of a scope's metrics, and how many sd the model lies above it."""
    result["chance"] = chance
    if chance is None:
        result["z"] = None
        return
    result["z"] = {
        metric: (result[metric] - chance[metric]["mean"]) / chance[metric]["sd"]
        if chance[metric]["sd"] > 0
        else None
        for metric in ("rho_w", "tau_w")
    }
