"""Rank correlations of Section 3 (Eqs. 7-9) for rankings with ties, many rankings at once.

:mod:`ranking.metrics` takes two permutations of ``1..n``. Evaluating models needs more:
gold ratings and model scores tie (WordSim-353 repeats scores; missing scores ranked last
tie with each other), and a chance baseline or a bootstrap asks for the same coefficients
of thousands of rankings. Here every input is a vector of mid-ranks (ties share the mean of
the ranks they span, rank 1 = most related) and the coefficients are computed for a whole
stack of rankings in vectorised numpy:

- ``rho_w``: Eq. 8's ``w``-weighted Pearson correlation of the two rank vectors with the
  weights of Eq. 9, ``w_i ∝ f(a_i) + f(b_i)``, ``f(r) = 1 / (r + n0)^2``, at the mid-ranks;
- ``tau_w``: ``sum_{i<j} w_i w_j sgn(a_i - a_j) sgn(b_i - b_j)`` over
  ``sqrt((T - U_a)(T - U_b))``, where ``T = sum_{i<j} w_i w_j`` and ``U_a``, ``U_b`` are its
  part over pairs tied in ``a``, in ``b``. Without ties this is Eq. 8 exactly; with ties it
  is the tau-b form that :func:`scipy.stats.weightedtau` computes (same value, tested);
- ``rho``: Spearman's rho, the Pearson correlation of mid-ranks (= ``scipy.stats.spearmanr``);
- ``tau``: Kendall's tau-b (= ``scipy.stats.kendalltau``).

On permutations all four equal :func:`ranking.weighted_spearman`, :func:`ranking.
weighted_kendall`, :func:`ranking.spearman` and :func:`ranking.kendall` (tested). The
weighted pair sums take O(n log n) per ranking: a radix partition over the bits of one
ranking, visited in the order of the other (a weighted merge-sort inversion count).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray

__all__ = ["METRIC_NAMES", "mid_ranks", "rank_correlations", "rank_rows"]

METRIC_NAMES: tuple[str, ...] = ("rho_w", "tau_w", "rho", "tau")


def mid_ranks(scores: npt.ArrayLike) -> FloatArray:
    """Ranks of scores, 1 = highest; ties (and NaN, taken as lowest) share their mid-rank.

    Examples
    --------
    >>> mid_ranks([0.2, 0.9, 0.2, float("nan")]).tolist()
    [2.5, 1.0, 2.5, 4.0]
    """
    values = np.asarray(scores, dtype=np.float64)
    return rank_rows(-np.where(np.isnan(values), -np.inf, values))


def rank_rows(values: npt.ArrayLike) -> FloatArray:
    """Ascending mid-ranks 1..m of every row (1 = smallest value); ties share the mean rank."""
    array = np.asarray(values, dtype=np.float64)
    rows = np.atleast_2d(array)
    order = np.argsort(rows, axis=1, kind="stable")
    ordered = np.take_along_axis(rows, order, axis=1)
    m = rows.shape[1]
    new = np.ones(ordered.shape, dtype=bool)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    position = np.arange(1, m + 1, dtype=np.float64)
    first = np.maximum.accumulate(np.where(new, position, 0.0), axis=1)
    last_flag = np.ones(ordered.shape, dtype=bool)
    last_flag[:, :-1] = new[:, 1:]
    last = np.minimum.accumulate(np.where(last_flag, position, np.inf)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty_like(ordered)
    np.put_along_axis(ranks, order, (first + last) / 2.0, axis=1)
    return ranks if array.ndim == 2 else ranks[0]


def rank_correlations(
    fixed: npt.ArrayLike,
    varying: npt.ArrayLike,
    n0: float = 2,
    metrics: Sequence[str] = METRIC_NAMES,
) -> dict[str, FloatArray]:
    """rho_w, tau_w (Eqs. 8-9), rho and tau-b between ``fixed`` and every row of ``varying``.

    Parameters
    ----------
    fixed : array_like of float, shape (m,) or (R, m)
        Mid-ranks (1 = most related) of one ranking, shared by all rows, or one per row.
    varying : array_like of float, shape (R, m) or (m,)
        Mid-ranks of the rankings compared with it.
    n0 : float, optional
        Weight offset of Eq. 9 (the paper's 2).
    metrics : sequence of str, optional
        Which of ``rho_w``, ``tau_w``, ``rho``, ``tau`` to compute (the taus cost the most).

    Returns
    -------
    dict of str to numpy.ndarray of float64, shape (R,)
        One array per metric asked for; NaN where undefined (fewer than two items, or a
        ranking with all items tied). Memory is a few ``R * m`` arrays: callers pass rows
        in chunks.
    """
    unknown = set(metrics) - set(METRIC_NAMES)
    if unknown:
        raise ValueError(f"metrics must be among {METRIC_NAMES}, got {sorted(unknown)}")
    b = np.atleast_2d(np.asarray(varying, dtype=np.float64))
    a = np.asarray(fixed, dtype=np.float64)
    if a.shape[-1] != b.shape[1] or a.ndim > 2 or (a.ndim == 2 and a.shape != b.shape):
        raise ValueError(f"fixed has shape {a.shape}, varying {b.shape}: they must match")
    a2 = np.broadcast_to(a if a.ndim == 2 else a[None, :], b.shape)
    offset = float(n0)
    if not np.isfinite(offset) or offset < 0:
        raise ValueError(f"n0 must be a finite number >= 0, got {n0!r}")
    rows, m = b.shape
    if m < 2:
        return {name: np.full(rows, np.nan) for name in metrics}
    out: dict[str, FloatArray] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        weights = None
        if "rho_w" in metrics or "tau_w" in metrics:
            weights = 1.0 / (a2 + offset) ** 2 + 1.0 / (b + offset) ** 2
            weights /= weights.sum(axis=1, keepdims=True)
        if "rho_w" in metrics:
            assert weights is not None
            out["rho_w"] = _pearson(a2, b, weights)
        if "rho" in metrics:
            out["rho"] = _pearson(a2, b, None)
        sets: dict[str, FloatArray] = {}
        if "tau_w" in metrics:
            assert weights is not None
            sets["tau_w"] = weights
        if "tau" in metrics:
            sets["tau"] = np.ones(b.shape)
        if sets:
            values = _tau_b(a, b, np.stack(list(sets.values())))
            out.update(zip(sets, values, strict=True))
    return {name: out[name] for name in metrics}


def _pearson(a: FloatArray, b: FloatArray, w: FloatArray | None) -> FloatArray:
    if w is None:
        da = a - a.mean(axis=1, keepdims=True)
        db = b - b.mean(axis=1, keepdims=True)
        return np.einsum("ij,ij->i", da, db) / np.sqrt(
            np.einsum("ij,ij->i", da, da) * np.einsum("ij,ij->i", db, db)
        )
    da = a - np.einsum("ij,ij->i", w, a)[:, None]
    db = b - np.einsum("ij,ij->i", w, b)[:, None]
    wda = w * da
    return np.einsum("ij,ij->i", wda, db) / np.sqrt(
        np.einsum("ij,ij->i", wda, da) * np.einsum("ij,ij->i", w * db, db)
    )


def _tau_b(a: FloatArray, b: FloatArray, weights: FloatArray) -> FloatArray:
    """Weighted tau-b for each weight set ``weights[k]`` (shape (K, R, m)): shape (K, R)."""
    rows, m = b.shape
    if a.ndim == 1:
        order = np.argsort(a, kind="stable")
        a_sorted = np.broadcast_to(a[order], b.shape)
        b_sorted = b[:, order]
        w_sorted = weights[:, :, order]
    else:
        order2 = np.argsort(a, axis=1, kind="stable")
        a_sorted = np.take_along_axis(a, order2, axis=1)
        b_sorted = np.take_along_axis(b, order2, axis=1)
        w_sorted = np.take_along_axis(weights, np.broadcast_to(order2, weights.shape), axis=2)
    codes = _dense_codes(b_sorted)
    a_new = np.ones(b.shape, dtype=bool)
    a_new[:, 1:] = a_sorted[:, 1:] != a_sorted[:, :-1]
    whole = np.zeros(b.shape, dtype=bool)
    whole[:, 0] = True
    concordance, tied_b = _signed_pair_sums(codes, w_sorted, whole)
    tied_a = np.zeros_like(tied_b)
    if not np.all(a_new):
        tied_a = _pairs_within_runs(w_sorted, a_new)
        within_a, _ = _signed_pair_sums(codes, w_sorted, a_new)
        concordance = concordance - within_a
    total = (w_sorted.sum(axis=2) ** 2 - (w_sorted**2).sum(axis=2)) / 2.0
    return concordance / np.sqrt((total - tied_a) * (total - tied_b))


def _dense_codes(values: FloatArray) -> IntArray:
    """Per row, 0-based dense ranks of the values (equal values, equal codes)."""
    rows, m = values.shape
    as_int = values.astype(np.int64)
    if np.array_equal(as_int, values) and as_int.min() >= 1 and as_int.max() <= m:
        # Rows that are permutations of 1..m (strict ranks) are their own codes.
        flat = (as_int - 1 + (np.arange(rows, dtype=np.int64) * m)[:, None]).ravel()
        if np.all(np.bincount(flat, minlength=rows * m) == 1):
            return as_int - 1
    order = np.argsort(values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    new = np.zeros(ordered.shape, dtype=np.int64)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    codes = np.empty_like(new)
    np.put_along_axis(codes, order, np.cumsum(new, axis=1), axis=1)
    return codes


def _run_bounds(run_start: npt.NDArray[np.bool_]) -> tuple[IntArray, IntArray]:
    """Start (inclusive) and end (exclusive) index of the run of every position, per row."""
    m = run_start.shape[1]
    index = np.arange(m, dtype=np.int64)
    start = np.maximum.accumulate(np.where(run_start, index, 0), axis=1)
    is_last = np.ones(run_start.shape, dtype=bool)
    is_last[:, :-1] = run_start[:, 1:]
    end = np.minimum.accumulate(np.where(is_last, index + 1, m)[:, ::-1], axis=1)[:, ::-1]
    return start, end


def _prefix(values: FloatArray) -> FloatArray:
    """Exclusive prefix sums along the last axis, with the total appended."""
    out = np.zeros((*values.shape[:-1], values.shape[-1] + 1), dtype=np.float64)
    np.cumsum(values, axis=-1, out=out[..., 1:])
    return out


def _pairs_within_runs(w: FloatArray, run_start: npt.NDArray[np.bool_]) -> FloatArray:
    """``sum_{i<j in the same run} w_i w_j`` per weight set and row (runs are contiguous)."""
    start, end = _run_bounds(run_start)
    prefix = _prefix(w)
    run_sum = _take(prefix, end) - _take(prefix, start)
    return np.einsum("krm,krm->kr", w, run_sum - w) / 2.0


def _take(prefix: FloatArray, index: IntArray) -> FloatArray:
    return np.take_along_axis(prefix, np.broadcast_to(index, (prefix.shape[0], *index.shape)), 2)


def _signed_pair_sums(
    codes: IntArray, weights: FloatArray, run_start: npt.NDArray[np.bool_]
) -> tuple[FloatArray, FloatArray]:
    """``sum_{i<j, same run} w_i w_j sgn(code_j - code_i)`` and the weight of code ties.

    Positions are in the order of the fixed ranking; runs are the groups of positions whose
    pairs count. The codes' bits are visited from the top, as in a wavelet matrix: each
    visit stably moves the elements whose bit is 0 before those whose bit is 1 (a radix
    sort of one bit), so elements that agree on the bits seen so far and on their run stay
    together, in their original order. A pair first separated at a bit is concordant
    (``i < j``, ``code_i < code_j``) when the later element has the 1: that weight is
    counted there, with prefix sums within each group. Pairs still together after the last
    bit tie in ``codes``; the rest of the pairs are discordant.
    """
    rows, m = codes.shape
    sets = weights.shape[0]
    run: IntArray | None = None
    if bool(np.all(run_start[:, 1:] == 0)):
        within = (weights.sum(axis=2) ** 2 - (weights**2).sum(axis=2)) / 2.0
    else:
        run = np.cumsum(run_start, axis=1, dtype=np.int64).ravel()
        within = _pairs_within_runs(weights, run_start)
    code = codes.ravel()
    w = weights.reshape(sets, rows * m)
    row_first = np.zeros(rows * m, dtype=bool)
    row_first[::m] = True
    offsets = (np.arange(rows, dtype=np.int64) * m)[:, None]
    concordant = np.zeros((sets, rows))
    for level in range(int(code.max()).bit_length() - 1, -1, -1):
        high = code >> level
        starts = _group_starts(high >> 1, run, row_first)
        bit = (high & 1).astype(bool)
        w1 = np.where(bit, w, 0.0)
        # A 1 after a 0 of its group is a concordant pair: count the weight of the 0s before
        # each 1 in its row, minus those before its group.
        prefix = _flat_prefix(w - w1, rows, m)
        concordant += np.einsum(
            "krm,krm->kr",
            w1.reshape(sets, rows, m),
            prefix.reshape(sets, rows, m + 1)[:, :, :-1],
        )
        before_group = prefix[:, starts + starts // m] * np.add.reduceat(w1, starts, axis=1)
        concordant -= _sum_by_row(before_group, starts // m, rows)
        move = (np.argsort(bit.reshape(rows, m), axis=1, kind="stable") + offsets).ravel()
        code = code[move]
        if run is not None:
            run = run[move]
        w = np.take(w, move, axis=1)
    starts = _group_starts(code, run, row_first)
    group_weight = np.add.reduceat(w, starts, axis=1)
    group_squares = np.add.reduceat(w * w, starts, axis=1)
    ties = _sum_by_row((group_weight**2 - group_squares) / 2.0, starts // m, rows)
    # Pairs in a run either tie in code, or are concordant, or discordant.
    return 2.0 * concordant - (within - ties), ties


def _group_starts(
    key: IntArray, run: IntArray | None, row_first: npt.NDArray[np.bool_]
) -> IntArray:
    """Flat indices where a group of equal (row, run, key) begins (groups are contiguous)."""
    new = row_first.copy()
    new[1:] |= key[1:] != key[:-1]
    if run is not None:
        new[1:] |= run[1:] != run[:-1]
    return np.flatnonzero(new)


def _sum_by_row(values: FloatArray, row: IntArray, rows: int) -> FloatArray:
    return np.stack([np.bincount(row, weights=v, minlength=rows) for v in values])


def _flat_prefix(w: FloatArray, rows: int, m: int) -> FloatArray:
    """Per row exclusive prefix sums with the total appended, flattened: (K, rows * (m+1))."""
    out = np.zeros((w.shape[0], rows, m + 1))
    np.cumsum(np.reshape(w, (w.shape[0], rows, m)), axis=2, out=out[:, :, 1:])
    return out.reshape(w.shape[0], rows * (m + 1))
