"""Pooled Bradley-Terry fit over the comparisons of all ballots."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.protocol import bradley_terry, strength_intervals


def _random_comparisons(seed: int, n: int = 40, p: int = 400) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    strength = np.linspace(2, -2, n)
    first = rng.integers(0, n, p)
    second = (first + rng.integers(1, n, p)) % n
    pairs = np.column_stack([first, second])
    won = rng.random(p) < 1 / (1 + np.exp(strength[second] - strength[first]))
    scores = np.where(won, 1.0, 0.0)
    scores[rng.random(p) < 0.1] = 0.5
    return pairs, scores


@pytest.mark.parametrize("seed", range(3))
def test_newton_solver_agrees_with_choix_ilsr(seed: int) -> None:
    pairs, scores = _random_comparisons(seed)
    # Item 40 is unbeaten against 0, items 41-42 only play each other, item 43 never plays.
    pairs = np.vstack([pairs, [[40, 0], [40, 0], [41, 42]]])
    scores = np.concatenate([scores, [1.0, 1.0, 0.5]])
    newton = bradley_terry(44, pairs, scores, alpha=0.3)
    ilsr = bradley_terry(44, pairs, scores, alpha=0.3, method="ilsr", tol=1e-12)
    assert np.isnan(newton[43]) and np.isnan(ilsr[43])
    assert newton[:43] == pytest.approx(ilsr[:43], abs=1e-6)
    assert np.all(np.isfinite(newton[:43]))


def test_it_recovers_the_order_of_clearly_different_items() -> None:
    pairs, scores = _random_comparisons(0, n=10, p=3000)
    strength = bradley_terry(10, pairs, scores)
    assert np.all(np.diff(strength) < 0)
    assert np.nanmean(strength) == pytest.approx(0.0, abs=1e-12)


def test_a_tie_counts_as_half_a_win_each_way() -> None:
    tie = bradley_terry(2, [[0, 1]], [0.5])
    split = bradley_terry(2, [[0, 1], [1, 0]], [1.0, 1.0])
    assert tie == pytest.approx([0.0, 0.0], abs=1e-9)
    assert split == pytest.approx([0.0, 0.0], abs=1e-9)


def test_a_warm_start_reaches_the_same_fit() -> None:
    pairs, scores = _random_comparisons(5)
    cold = bradley_terry(40, pairs, scores)
    warm = bradley_terry(40, pairs, scores, initial_strength=cold + 0.3)
    assert warm == pytest.approx(cold, abs=1e-7)


def test_no_comparisons_give_no_strengths() -> None:
    assert np.all(np.isnan(bradley_terry(3, np.empty((0, 2), dtype=int), [])))


@pytest.mark.parametrize("alpha", [0.0, -1.0, float("nan")])
def test_it_rejects_a_non_positive_regulariser(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha must be a positive number"):
        bradley_terry(2, [[0, 1]], [1.0], alpha=alpha)


def test_it_rejects_an_unknown_method() -> None:
    with pytest.raises(ValueError, match="method"):
        bradley_terry(2, [[0, 1]], [1.0], method="gradient")  # type: ignore[arg-type]


def test_it_rejects_a_warm_start_of_the_wrong_length() -> None:
    with pytest.raises(ValueError, match="initial_strength"):
        bradley_terry(3, [[0, 1]], [1.0], initial_strength=[0.0, 0.0])


def test_strength_intervals_cover_the_true_strengths_and_narrow_with_more_comparisons():
    rng = np.random.default_rng(4)
    n = 30
    truth = rng.normal(0, 1, n)
    truth -= truth.mean()

    def widths_and_coverage(comparisons: int) -> tuple[float, float]:
        pairs = rng.integers(0, n, size=(comparisons, 2))
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        wins = rng.random(len(pairs)) < 1 / (1 + np.exp(truth[pairs[:, 1]] - truth[pairs[:, 0]]))
        scores = wins.astype(float)
        fit = bradley_terry(n, pairs, scores)
        low, high = strength_intervals(n, pairs, scores, fit, np.arange(n))
        # Centre both on the same items before comparing with the truth.
        covered = (low - fit.mean() <= truth) & (truth <= high - fit.mean())
        return float(np.mean(high - low)), float(covered.mean())

    wide, coverage_few = widths_and_coverage(1_500)
    narrow, coverage_many = widths_and_coverage(15_000)
    assert narrow < wide / 2.5  # ten times the data: about a third of the width
    assert coverage_few >= 0.8 and coverage_many >= 0.8
