"""The model evaluation's 95% intervals hold their own estimates (``docs/evaluation.md``).

Many small seeded simulated studies (areas, a target study), models of several qualities (the
truth, the truth plus noise, a reversed and an all-tied model): every interval reported, of
every scope, of the vote agreement, of the A&G score and of every paired difference, holds its
estimate and lies within its figure's range.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from ranking.crowd import underlying_similarity
from ranking.evaluation import centred_interval, evaluate, interval
from ranking.simulation import simulate_study_votes

TOLERANCE = 1e-12


def _models(relatedness: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng([seed, 5])
    spread = float(np.std(relatedness))
    return {
        "truth": relatedness.copy(),
        "good": relatedness + 0.2 * spread * rng.standard_normal(relatedness.size),
        "weak": relatedness + 1.0 * spread * rng.standard_normal(relatedness.size),
        "reversed": -relatedness,
        "tied": np.where(relatedness > np.median(relatedness), 1.0, 0.0),
    }


def _blocks(report: dict[str, Any]) -> Iterator[tuple[str, float | None, dict[str, Any], float]]:
    """(label, estimate, interval block, lowest value) of every interval of one model."""
    scopes = [("all", report)] + [(a["area"], a) for a in report.get("areas") or []]
    scopes += [(t["target"], t) for t in report.get("targets") or []]
    if "macro" in report:
        scopes.append(("macro", report["macro"]))
    for label, scope in scopes:
        for metric, block in scope["bootstrap"].items():
            if metric != "kind":
                yield f"{label} {metric}", scope[metric], block, -1.0
    for metric in ("agreement", "weighted_agreement"):
        yield metric, report["votes"][metric], report["votes"]["bootstrap"][metric], 0.0
    if "ag_bootstrap" in report:
        yield "ag_score", report["ag_score"], report["ag_bootstrap"], 0.0


def _check(result: dict[str, Any]) -> int:
    checked = 0
    for report in result["models"]:
        for label, point, block, least in _blocks(report):
            if point is None:  # undefined (a tied scope): no interval
                assert block.get("centred_low") is None, label
                continue
            low, high = block["centred_low"], block["centred_high"]
            assert least <= low <= point + TOLERANCE, (report["name"], label, low, point)
            assert point - TOLERANCE <= high <= 1.0, (report["name"], label, point, high)
            checked += 1
    for pair in result["paired"]:
        for label, v in pair["metrics"].items():
            if v is None:
                continue
            assert v["low"] <= v["difference"] + TOLERANCE, (pair["a"], pair["b"], label, v)
            assert v["difference"] - TOLERANCE <= v["high"], (pair["a"], pair["b"], label, v)
            checked += 1
    return checked


@pytest.mark.parametrize("seed", range(12))
def test_every_interval_of_a_small_study_with_areas_holds_its_estimate(seed: int) -> None:
    relatedness = np.abs(underlying_similarity("exponential", 30))
    gold, votes = simulate_study_votes(
        relatedness, np.random.default_rng(seed), m=4, n_ballots=3, n_voters=12, area_size=6
    )
    result = evaluate(
        gold, _models(relatedness, seed), rng=np.random.default_rng([seed, 1]), votes=votes,
        resamples=30, chance_permutations=5, retrieval_alpha=None,
    )  # fmt: skip
    assert _check(result) > 100


@pytest.mark.parametrize("seed", range(6))
def test_every_interval_of_a_small_target_study_holds_its_estimate(seed: int) -> None:
    relatedness = np.abs(np.tile(underlying_similarity("exponential", 8), 3))
    groups = np.repeat(np.arange(3), 8)
    gold, votes = simulate_study_votes(
        relatedness, np.random.default_rng(seed), m=4, n_ballots=2, n_voters=10, groups=groups
    )
    result = evaluate(
        gold, _models(relatedness, seed), rng=np.random.default_rng([seed, 1]), votes=votes,
        resamples=30, chance_permutations=5, retrieval_alpha=None,
    )  # fmt: skip
    assert "ag_bootstrap" in result and "macro" in result
    assert _check(result) > 100


def test_resamples_all_below_the_estimate_give_an_interval_around_it_of_their_spread() -> None:
    # The shape of the voter bootstrap of a good model: every resample below the estimate.
    samples = 0.80 + np.random.default_rng(0).normal(0, 0.02, 2000)
    point = 0.94
    band = interval(samples, point)
    assert band["high"] < point  # the percentiles leave the estimate out
    assert band["centred_low"] < point < band["centred_high"]
    width = band["high"] - band["low"]
    assert band["centred_high"] - band["centred_low"] == pytest.approx(width)
    assert point - band["centred_low"] == pytest.approx(band["mean"] - band["low"])


def test_a_skewed_spread_still_holds_the_estimate_and_stays_within_the_range() -> None:
    # 2% of the resamples far below: the mean falls below the 2.5th percentile.
    samples = np.r_[np.full(98, 0.9), np.full(2, -0.9)]
    band = interval(samples, 0.99)
    assert band["mean"] < band["low"]
    assert band["centred_low"] == 0.99 and band["centred_high"] == 1.0
    assert centred_interval(0.5, 0.1, 0.2, 0.15, (0.0, 1.0)) == pytest.approx((0.45, 0.55))
    assert centred_interval(0.05, 0.0, 0.4, 0.3, (0.0, 1.0)) == pytest.approx((0.0, 0.15))
    assert centred_interval(None, 0.0, 0.4, 0.3) == (None, None)
    assert centred_interval(0.5, float("nan"), 0.4, 0.3) == (None, None)
