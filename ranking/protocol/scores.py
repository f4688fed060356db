"""Borda scores (Eq. 1), rescaling between ballots (Eq. 6), the running mean (Eq. 5) and ranks."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray, check_comparisons, check_generator, check_int

__all__ = [
    "borda_counts",
    "borda_scores",
    "group_members",
    "group_slopes",
    "ranks_from_scores",
    "ranks_within_groups",
    "rescale",
    "rescale_slope",
    "running_mean",
]


def borda_counts(
    n_items: int, pairs: npt.ArrayLike, first_score: npt.ArrayLike
) -> tuple[IntArray, IntArray, IntArray]:
    """Wins, ties and appearances of every item in a list of answered comparisons.

    Parameters
    ----------
    n_items : int
        Items of the study; ids run over ``0..n_items-1``.
    pairs : array_like of int, shape (P, 2)
        Answered comparisons as item ids.
    first_score : array_like of float, shape (P,)
        1.0 when the first item won, 0.0 when the second won, 0.5 for a tie.

    Returns
    -------
    wins, ties, appearances : numpy.ndarray of int64, shape (n_items,)
        ``appearances`` is ``M_i`` of Eq. 1: answered comparisons that included the item.
    """
    n = check_int(n_items, "n_items", minimum=1)
    pair_ids, scores = check_comparisons(n, pairs, first_score)
    return counts_of_valid(n, pair_ids, scores)


def counts_of_valid(
    n: int, pair_ids: IntArray, scores: FloatArray
) -> tuple[IntArray, IntArray, IntArray]:
    """:func:`borda_counts` for comparisons already validated by the caller."""
    first, second = pair_ids[:, 0], pair_ids[:, 1]
    tie = scores == 0.5
    wins = np.bincount(first[scores == 1.0], minlength=n) + np.bincount(
        second[scores == 0.0], minlength=n
    )
    ties = np.bincount(first[tie], minlength=n) + np.bincount(second[tie], minlength=n)
    appearances = np.bincount(pair_ids.ravel(), minlength=n)
    return wins.astype(np.int64), ties.astype(np.int64), appearances.astype(np.int64)


def borda_scores(
    n_items: int, pairs: npt.ArrayLike, first_score: npt.ArrayLike
) -> tuple[FloatArray, IntArray]:
    """Borda score of every item (Eq. 1), ties counting half a win (footnote 4).

    ``x_i = n_i / M_i`` with ``n_i = wins_i + ties_i / 2``.

    Parameters
    ----------
    n_items, pairs, first_score
        As in :func:`borda_counts`.

    Returns
    -------
    x : numpy.ndarray of float64, shape (n_items,)
        Borda scores in [0, 1]; NaN for items with no answered comparison.
    appearances : numpy.ndarray of int64, shape (n_items,)
        ``M_i``.

    Examples
    --------
    >>> x, m = borda_scores(3, [[0, 1], [1, 2], [0, 2]], [1.0, 0.5, 0.0])
    >>> x.tolist(), m.tolist()
    ([0.5, 0.25, 0.75], [2, 2, 2])
    """
    wins, ties, appearances = borda_counts(n_items, pairs, first_score)
    with np.errstate(invalid="ignore", divide="ignore"):
        x = (wins + 0.5 * ties) / appearances
    x[appearances == 0] = np.nan
    return x, appearances


def rescale_slope(x: npt.ArrayLike, ybar_prev: npt.ArrayLike) -> float:
    """Slope ``b`` of the rescaling of Eq. 6 over the items where both inputs are finite.

    ``b = sum_j (1 - x_j)(1 - ybar_j) / sum_j (1 - x_j)^2``. When no item qualifies, or every
    qualifying item has ``x_j = 1``, the slope is 1 (no rescaling). :func:`group_slopes` with
    one group.
    """
    x_arr, _ = _paired_floats(x, ybar_prev)
    return float(group_slopes(x_arr, ybar_prev, np.zeros(x_arr.size, dtype=np.int64), 1)[0])


def group_slopes(
    x: npt.ArrayLike, ybar_prev: npt.ArrayLike, groups: npt.ArrayLike, n_groups: int
) -> FloatArray:
    """The slope ``b`` of Eq. 6 fitted within every group: :func:`rescale_slope` per group.

    A target study rescales each target's ballot on its own: ``b_g`` uses the items of group
    ``g`` only. A group without a qualifying item gets 1 (no rescaling).

    Parameters
    ----------
    x, ybar_prev : array_like of float, shape (n,)
        Borda scores of this ballot and running means before it (NaN where unknown).
    groups : array_like of int, shape (n,)
        Group of every item, ``0..n_groups-1``.
    n_groups : int

    Returns
    -------
    numpy.ndarray of float64, shape (n_groups,)

    Examples
    --------
    >>> group_slopes([0.5, 0.0, 0.5, 0.0], [0.75, 0.5, 0.5, 0.0], [0, 0, 1, 1], 2).tolist()
    [0.5, 1.0]
    """
    x_arr, prev = _paired_floats(x, ybar_prev)
    group = np.asarray(groups, dtype=np.int64)
    if group.shape != x_arr.shape:
        raise ValueError(f"groups must have shape {x_arr.shape}, got {group.shape}")
    use = np.isfinite(x_arr) & np.isfinite(prev)
    lose = 1.0 - x_arr[use]
    numerator = np.bincount(group[use], weights=lose * (1.0 - prev[use]), minlength=n_groups)
    denominator = np.bincount(group[use], weights=lose * lose, minlength=n_groups)
    slopes = np.ones(n_groups)
    fitted = denominator > 0.0
    slopes[fitted] = numerator[fitted] / denominator[fitted]
    return slopes


def rescale(x: npt.ArrayLike, ybar_prev: npt.ArrayLike) -> FloatArray:
    """Rescaled score of ballot ``k > 1`` (Eq. 6).

    ``y_i = 1 - b + b x_i``: the line through (1, 1) that best maps this ballot's Borda
    scores ``x`` onto the previous running means ``ybar^(k-1)`` in least squares.
    The slope is fitted on the items where both ``x`` and ``ybar_prev`` are finite; every
    item with a finite ``x`` is then rescaled (NaN stays NaN). For ballot 1, ``y = x``:
    do not call this function.

    Parameters
    ----------
    x : array_like of float
        Borda scores of ballot ``k`` (NaN for items without an answered comparison).
    ybar_prev : array_like of float
        Running means after ballot ``k - 1``, same shape.

    Returns
    -------
    numpy.ndarray of float64
        ``y^(k)``, same shape as ``x``.

    Examples
    --------
    >>> rescale([0.5, 1.0], [0.75, 1.0]).tolist()
    [0.75, 1.0]
    """
    x_arr, _ = _paired_floats(x, ybar_prev)
    b = rescale_slope(x_arr, ybar_prev)
    return 1.0 - b + b * x_arr


def running_mean(ybar_prev: npt.ArrayLike, y: npt.ArrayLike, k: int) -> FloatArray:
    """Running mean of the rescaled scores after ballot ``k`` (Eq. 5).

    ``ybar^(k) = ((k - 1) ybar^(k-1) + y^(k)) / k``. Where ``y`` is NaN (the item was not
    scored in ballot ``k``) the previous mean is kept; where ``ybar_prev`` is NaN (first
    score of the item) the result is ``y``.

    Parameters
    ----------
    ybar_prev : array_like of float
        Running means after ballot ``k - 1`` (ignored values for ``k = 1``).
    y : array_like of float
        Rescaled scores of ballot ``k``.
    k : int
        Ballot number, starting at 1.

    Returns
    -------
    numpy.ndarray of float64

    Examples
    --------
    >>> running_mean([0.5, 0.9], [0.8, float("nan")], 3).tolist()
    [0.6, 0.9]
    """
    ballot = check_int(k, "k", minimum=1)
    prev, y_arr = _paired_floats(ybar_prev, y)
    mean = ((ballot - 1) * prev + y_arr) / ballot
    mean = np.where(np.isnan(prev), y_arr, mean)
    return np.where(np.isnan(y_arr), prev, mean)


def _paired_floats(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    a_arr = np.asarray(a, dtype=np.float64)
    b_arr = np.asarray(b, dtype=np.float64)
    if a_arr.ndim != 1 or a_arr.shape != b_arr.shape:
        raise ValueError(
            f"score arrays must be one-dimensional and of equal length, "
            f"got shapes {a_arr.shape} and {b_arr.shape}"
        )
    return a_arr, b_arr


def ranks_from_scores(scores: npt.ArrayLike, rng: np.random.Generator) -> IntArray:
    """Rank items by score: rank 1 is the highest score.

    Equal scores are ordered at random with ``rng``; NaN scores (items never scored) take
    the last ranks, in random order.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        A permutation of ``1..n``; ``ranks[i]`` is the rank of item ``i``.

    Examples
    --------
    >>> ranks_from_scores([0.2, float("nan"), 0.9], np.random.default_rng(0)).tolist()
    [2, 3, 1]
    """
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"scores must be one-dimensional, got shape {values.shape}")
    gen = check_generator(rng)
    missing = np.isnan(values)
    if np.any(np.isinf(values)):
        raise ValueError("scores must be finite or NaN")
    order = np.lexsort((gen.random(values.size), -np.where(missing, 0.0, values), missing))
    ranks = np.empty(values.size, dtype=np.int64)
    ranks[order] = np.arange(1, values.size + 1)
    return ranks


def ranks_within_groups(ranks: npt.ArrayLike, groups: npt.ArrayLike) -> IntArray:
    """Study-wide ranks (1 = best) turned into ranks within each group, in the same order.

    A target study ranks each target's candidates on their own: ``rank_in_target``.

    Examples
    --------
    >>> ranks_within_groups([3, 1, 4, 2, 5], [0, 1, 0, 1, 0]).tolist()
    [1, 1, 2, 2, 3]
    """
    rank = np.asarray(ranks, dtype=np.int64)
    group = np.asarray(groups, dtype=np.int64)
    if rank.shape != group.shape or rank.ndim != 1:
        raise ValueError(
            f"ranks and groups must be one-dimensional of one length, got "
            f"{rank.shape} and {group.shape}"
        )
    order = np.lexsort((rank, group))
    sorted_groups = group[order]
    within = np.arange(order.size) - np.searchsorted(sorted_groups, sorted_groups, side="left")
    result = np.empty_like(rank)
    result[order] = within + 1
    return result


def group_members(groups: npt.ArrayLike) -> list[IntArray]:
    """The members of every group ``0..G-1`` (ids in increasing order), found with one sort:
    a target study of many targets is not scanned once per target.

    Examples
    --------
    >>> [m.tolist() for m in group_members([1, 0, 1, 2, 0])]
    [[1, 4], [0, 2], [3]]
    """
    group = np.asarray(groups, dtype=np.int64)
    if group.ndim != 1 or (group.size and group.min() < 0):
        raise ValueError("groups must be one-dimensional and numbered from 0")
    order = np.argsort(group, kind="stable")
    count = int(group.max()) + 1 if group.size else 0
    bounds = np.searchsorted(group[order], np.arange(count + 1))
    return [order[bounds[g] : bounds[g + 1]] for g in range(count)]
