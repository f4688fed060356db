"""Borda scores (Eq. 1), rescaling (Eq. 6) and the running mean (Eq. 5), by hand."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.protocol import borda_counts, borda_scores, rescale, rescale_slope, running_mean

NAN = float("nan")


def test_it_counts_wins_ties_and_appearances() -> None:
    # 0 beats 1, 1 ties 2, 2 beats 0, 0 beats 2; item 3 never appears.
    pairs = [[0, 1], [1, 2], [0, 2], [2, 0]]
    wins, ties, appearances = borda_counts(4, pairs, [1.0, 0.5, 0.0, 0.0])
    assert wins.tolist() == [2, 0, 1, 0]
    assert ties.tolist() == [0, 1, 1, 0]
    assert appearances.tolist() == [3, 2, 3, 0]


def test_borda_score_is_wins_plus_half_ties_over_appearances() -> None:
    pairs = [[0, 1], [1, 2], [0, 2], [2, 0]]
    x, appearances = borda_scores(4, pairs, [1.0, 0.5, 0.0, 0.0])
    assert x[:3] == pytest.approx([2 / 3, 0.5 / 2, 1.5 / 3])
    assert np.isnan(x[3])
    assert appearances.tolist() == [3, 2, 3, 0]


def test_it_scores_an_empty_ballot_as_all_nan() -> None:
    x, appearances = borda_scores(3, np.empty((0, 2), dtype=int), [])
    assert np.all(np.isnan(x))
    assert appearances.tolist() == [0, 0, 0]


def test_rescale_fits_the_line_through_one_one() -> None:
    x = np.array([0.2, 0.6, NAN])
    ybar_prev = np.array([0.5, 0.8, 0.9])
    # b = sum (1-x)(1-ybar) / sum (1-x)^2 = (0.8*0.5 + 0.4*0.2) / (0.64 + 0.16) = 0.6
    assert rescale_slope(x, ybar_prev) == pytest.approx(0.6)
    y = rescale(x, ybar_prev)
    assert y[:2] == pytest.approx([1 - 0.6 + 0.6 * 0.2, 1 - 0.6 + 0.6 * 0.6])
    assert np.isnan(y[2])


def test_rescale_ignores_items_without_a_previous_mean_when_fitting() -> None:
    x = np.array([0.2, 0.6, 0.0])
    ybar_prev = np.array([0.5, 0.8, NAN])
    assert rescale_slope(x, ybar_prev) == pytest.approx(0.6)
    assert rescale(x, ybar_prev)[2] == pytest.approx(0.4)


def test_rescale_keeps_scores_when_every_item_won_everything() -> None:
    assert rescale_slope([1.0, 1.0], [0.7, 0.9]) == 1.0
    assert rescale([1.0, NAN], [0.7, 0.9])[0] == 1.0


def test_running_mean_averages_k_rescaled_scores() -> None:
    ybar = running_mean([NAN, NAN], [0.4, 0.8], 1)
    assert ybar.tolist() == [0.4, 0.8]
    ybar = running_mean(ybar, [0.6, NAN], 2)
    assert ybar == pytest.approx([0.5, 0.8])
    ybar = running_mean(ybar, [0.8, NAN], 3)
    assert ybar == pytest.approx([0.6, 0.8])


def test_running_mean_starts_from_y_for_an_item_first_scored_late() -> None:
    assert running_mean([NAN], [0.3], 4).tolist() == [0.3]


@pytest.mark.parametrize(
    ("pairs", "scores", "message"),
    [
        ([[0, 1, 2]], [1.0], r"shape \(P, 2\)"),
        ([[0, 0]], [1.0], "itself"),
        ([[0, 5]], [1.0], r"ids in \[0, 3\)"),
        ([[0, 1]], [0.7], "first_score must be"),
        ([[0, 1]], [1.0, 0.0], "one entry per pair"),
        ([[0.0, 1.0]], [1.0], "integer item ids"),
    ],
)
def test_it_rejects_malformed_comparisons(pairs: object, scores: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        borda_scores(3, pairs, scores)  # type: ignore[arg-type]


def test_it_rejects_score_arrays_of_different_lengths() -> None:
    with pytest.raises(ValueError, match="equal length"):
        rescale([0.5, 0.5], [0.5])
    with pytest.raises(ValueError, match="equal length"):
        running_mean([0.5], [0.5, 0.4], 2)


def test_it_rejects_ballot_number_zero() -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        running_mean([0.5], [0.5], 0)
