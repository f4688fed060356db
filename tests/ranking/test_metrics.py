"""Ranks and the rank correlations of Section 3 (Eqs. 7-9)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from ranking import weighted_kendall, weighted_spearman
from ranking.evaluation import kendall, rank_weights, spearman
from ranking.protocol import ranks_from_scores
from ranking.simulation import rank_metrics
from ranking.simulation.studies import _spearman_of_permutations


def _weights(a: np.ndarray, b: np.ndarray, n0: float) -> np.ndarray:
    raw = np.array([1 / (ai + n0) ** 2 + 1 / (bi + n0) ** 2 for ai, bi in zip(a, b, strict=True)])
    return raw / raw.sum()


def _quadratic_tau_w(a: np.ndarray, b: np.ndarray, n0: float = 2) -> float:
    w = _weights(a, b, n0)
    top = bottom = 0.0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            top += w[i] * w[j] * np.sign(a[j] - a[i]) * np.sign(b[j] - b[i])
            bottom += w[i] * w[j]
    return top / bottom


def _plain_rho_w(a: np.ndarray, b: np.ndarray, n0: float = 2) -> float:
    w = _weights(a, b, n0)
    a_mean, b_mean = sum(w * a), sum(w * b)
    sigma_a = np.sqrt(sum(w * (a**2 - a_mean**2)))
    sigma_b = np.sqrt(sum(w * (b**2 - b_mean**2)))
    return float(sum(w * (a - a_mean) * (b - b_mean)) / (sigma_a * sigma_b))


def test_rank_one_goes_to_the_highest_score_and_nan_ranks_last() -> None:
    ranks = ranks_from_scores([0.2, np.nan, 0.9, 0.5], np.random.default_rng(0))
    assert ranks.tolist() == [3, 4, 1, 2]


def test_it_breaks_ties_at_random() -> None:
    seen = {
        tuple(ranks_from_scores([0.5, 0.5, 0.1], np.random.default_rng(seed)).tolist())
        for seed in range(20)
    }
    assert seen == {(1, 2, 3), (2, 1, 3)}


def test_it_rejects_infinite_scores() -> None:
    with pytest.raises(ValueError, match="finite or NaN"):
        ranks_from_scores([1.0, np.inf], np.random.default_rng(0))


def test_weights_follow_eq_9() -> None:
    w = rank_weights([1, 2, 3], [1, 3, 2])
    raw = np.array([2 / 9, 1 / 16 + 1 / 25, 1 / 25 + 1 / 16])
    assert w == pytest.approx(raw / raw.sum())


def test_weighted_kendall_by_hand_on_three_items() -> None:
    # w ~ (2/9, 41/400, 41/400); pairs (0,1), (0,2) agree, (1,2) disagree.
    w0, w1 = Fraction(2, 9), Fraction(41, 400)
    expected = (2 * w0 * w1 - w1 * w1) / (2 * w0 * w1 + w1 * w1)
    assert expected == Fraction(1231, 1969)
    assert weighted_kendall([1, 2, 3], [1, 3, 2]) == pytest.approx(float(expected), abs=1e-12)


def test_weighted_spearman_by_hand_on_three_items() -> None:
    # Normalised weights (800, 369, 369) / 1538, means 2645/1538, then Eq. 8.
    expected = Fraction(5228 * 1538 - 2645**2, 5597 * 1538 - 2645**2)
    assert weighted_spearman([1, 2, 3], [1, 3, 2]) == pytest.approx(float(expected), abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n0", [0, 2, 5.5])
def test_weighted_metrics_match_their_quadratic_definitions(seed: int, n0: float) -> None:
    rng = np.random.default_rng(seed)
    a = rng.permutation(60) + 1
    b = np.where(rng.random(60) < 0.5, a, rng.permutation(60) + 1)
    b = np.argsort(np.argsort(b + rng.random(60))) + 1  # a permutation close to a
    assert weighted_kendall(a, b, n0) == pytest.approx(_quadratic_tau_w(a, b, n0), abs=1e-12)
    assert weighted_spearman(a, b, n0) == pytest.approx(_plain_rho_w(a, b, n0), abs=1e-12)


def test_identical_rankings_score_one_and_reversed_top_weighted_is_negative() -> None:
    a = np.arange(1, 101)
    assert weighted_spearman(a, a) == pytest.approx(1.0)
    assert weighted_kendall(a, a) == pytest.approx(1.0)
    assert weighted_kendall(a, a[::-1]) == pytest.approx(-1.0)
    assert weighted_spearman(a, a[::-1]) < -0.5


def test_plain_coefficients_match_scipy() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.permutation(300) + 1, rng.permutation(300) + 1
    assert spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)
    assert kendall(a, b) == pytest.approx(stats.kendalltau(a, b).statistic)
    assert _spearman_of_permutations(a, b) == pytest.approx(spearman(a, b), abs=1e-12)


def test_swapped_metrics_pair_ids_by_estimated_rank_with_true_ranks() -> None:
    estimated = np.array([2, 3, 1])  # item 2 first, then item 0, then item 1
    truth = np.array([1, 2, 3])
    swapped = rank_metrics(estimated, truth, swapped=True)
    direct = rank_metrics(np.array([3, 1, 2]), truth)
    assert swapped == pytest.approx(direct)


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([1, 2, 2], [1, 2, 3], "some rank appears twice"),
        ([0, 1, 2], [1, 2, 3], "outside that range"),
        ([1, 2, 3], [1, 2], "same items"),
        ([1], [1], "at least two items"),
        ([[1, 2]], [[1, 2]], "one-dimensional"),
        ([1.5, 2, 3], [1, 2, 3], "integer ranks"),
    ],
)
@pytest.mark.parametrize("metric", [weighted_spearman, weighted_kendall, spearman, kendall])
def test_it_rejects_rank_vectors_that_are_not_permutations(
    metric: object, a: object, b: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        metric(a, b)  # type: ignore[operator]


def test_it_rejects_a_negative_weight_offset() -> None:
    with pytest.raises(ValueError, match="n0"):
        weighted_kendall([1, 2], [2, 1], n0=-1)
