"""Every voter's likelihood on a grid of ``(sigma_v^*, eps_v)``, its maximum, and the crowd's
uniform ranges fitted to all voters by marginal likelihood (used by :func:`ranking.fit_crowd`).

The vote probability is :mod:`ranking.crowd_likelihood`'s (Section 4.1); votes are rows
``(chosen, other, voter, weight)``, a tie being two half-weighted rows (footnote 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize

from .._validation import FloatArray, IntArray
from .likelihood import fold_probability

__all__ = ["EPS_GRID", "SIGMA_GRID", "GridFit", "VoteRows", "fit_voters", "vote_rows"]

SIGMA_GRID: FloatArray = np.geomspace(0.004, 1.6, 54)  # nonconformity grid (ratio 1.12)
# Distraction grid (ratio 1.2); it ends at 0.5: beyond, a voter would pick the less related
# item on purpose. Its ends bound every fitted eps.
EPS_GRID: FloatArray = np.geomspace(1e-4, 0.5, 48)


@dataclass(frozen=True, eq=False)
class VoteRows:
    """Votes as rows ``(first, second, voter, weight)``: the first item is the one chosen.

    A tie becomes two rows of weight 1/2, one each way (footnote 4).
    """

    chosen: IntArray
    other: IntArray
    voter: IntArray  # 0..V-1, rows sorted by voter
    weight: FloatArray
    n_voters: int


def vote_rows(pairs: IntArray, scores: FloatArray, voter: IntArray, n_voters: int) -> VoteRows:
    """Checked votes (``voter`` already ``0..n_voters-1``) as rows sorted by voter."""
    tie = scores == 0.5
    left_won = scores == 1.0
    chosen = np.where(left_won, pairs[:, 0], pairs[:, 1])
    other = np.where(left_won, pairs[:, 1], pairs[:, 0])
    chosen = np.concatenate([chosen, pairs[tie, 1]])
    other = np.concatenate([other, pairs[tie, 0]])
    who = np.concatenate([voter, voter[tie]])
    weight = np.concatenate([np.where(tie, 0.5, 1.0), np.full(int(tie.sum()), 0.5)])
    order = np.argsort(who, kind="stable")
    return VoteRows(chosen[order], other[order], who[order], weight[order], n_voters)


def _voter_table(rows: VoteRows, a: FloatArray) -> FloatArray:
    """Log-likelihood of every voter on the grid: shape (voters, len(SIGMA_GRID), len(EPS_GRID)).

    A vote whose ``F`` is within 1e-9 of 0 or 1 at some ``sigma^*`` contributes
    ``log(eps)`` or ``log(1 - eps)`` there (to within 1e-5): those are summed per voter
    without a logarithm per vote, which saves most of the work at small ``sigma^*``.
    """
    n_v = rows.n_voters
    table = np.empty((n_v, SIGMA_GRID.size, EPS_GRID.size))
    first, second = a[rows.chosen], a[rows.other]
    mix = 1.0 - 2.0 * EPS_GRID
    log_right, log_wrong = np.log1p(-EPS_GRID), np.log(EPS_GRID)
    for g, sigma in enumerate(SIGMA_GRID):
        win = fold_probability(first, second, float(sigma))
        right, wrong = win > 1.0 - 1e-9, win < 1e-9
        live = ~(right | wrong)
        table[:, g, :] = np.outer(
            np.bincount(rows.voter[right], rows.weight[right], n_v), log_right
        )
        table[:, g, :] += np.outer(
            np.bincount(rows.voter[wrong], rows.weight[wrong], n_v), log_wrong
        )
        if np.any(live):
            ll = rows.weight[live, None] * np.log(EPS_GRID + mix * win[live, None])
            counts = np.bincount(rows.voter[live], minlength=n_v)
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            sums = np.add.reduceat(ll, np.minimum(starts, ll.shape[0] - 1), axis=0)
            table[:, g, :] += np.where(counts[:, None] > 0, sums, 0.0)
    return table


def _cell_edges(grid: FloatArray) -> FloatArray:
    """Edges of the cells around every grid node (geometric midpoints)."""
    inner = np.sqrt(grid[1:] * grid[:-1])
    return np.concatenate([[grid[0]], inner, [grid[-1]]])


def _uniform_weights(edges: FloatArray, low: float, high: float) -> FloatArray:
    """Share of ``U[low, high]`` falling in every cell (a point mass when ``low == high``)."""
    if high - low <= 1e-12:
        weights = np.zeros(edges.size - 1)
        weights[int(np.clip(np.searchsorted(edges, low) - 1, 0, weights.size - 1))] = 1.0
        return weights
    overlap = np.clip(np.minimum(edges[1:], high) - np.maximum(edges[:-1], low), 0.0, None)
    return np.asarray(overlap / (high - low))


class GridFit(NamedTuple):
    """What :func:`fit_voters` returns.

    Attributes
    ----------
    log_likelihood : float
        Log-likelihood of the votes, every voter at their best grid point.
    sigma_range, eps_range : tuple of float
        The crowd's uniform ranges maximising the voters' marginal likelihood.
    sigma_posterior, eps_posterior : numpy.ndarray of float64
        Every voter's posterior means, the fitted ranges as prior.
    """

    log_likelihood: float
    sigma_range: tuple[float, float]
    eps_range: tuple[float, float]
    sigma_posterior: FloatArray
    eps_posterior: FloatArray


def _fit_ranges(
    table: FloatArray, sigma0: FloatArray, eps0: FloatArray
) -> tuple[tuple[float, float], tuple[float, float], FloatArray, FloatArray]:
    """Uniform ranges of sigma* and eps maximising the voters' marginal likelihood, started
    from the spread of the voters' best grid points ``sigma0``, ``eps0``; and the voters'
    posterior means under those ranges."""
    peak = table.max(axis=(1, 2))
    scaled = np.exp(table - peak[:, None, None])
    sigma_edges, eps_edges = _cell_edges(SIGMA_GRID), _cell_edges(EPS_GRID)

    def unpack(x: FloatArray) -> tuple[float, float, float, float]:
        # (log low, log width) of each range keeps low > 0 and high >= low.
        s_low, e_low = np.exp(x[0]), np.exp(x[2])
        return s_low, s_low + np.exp(x[1]), e_low, e_low + np.exp(x[3])

    def marginal(x: FloatArray) -> FloatArray:
        s_low, s_high, e_low, e_high = unpack(x)
        ws = _uniform_weights(sigma_edges, s_low, min(s_high, SIGMA_GRID[-1]))
        we = _uniform_weights(eps_edges, e_low, min(e_high, EPS_GRID[-1]))
        return np.asarray((scaled @ we) @ ws)

    def objective(x: FloatArray) -> float:
        value = marginal(x)
        if np.any(value <= 0):
            return 1e12
        return -float(np.sum(np.log(value)))

    def start(values: FloatArray) -> list[float]:
        low, high = np.quantile(values, [0.1, 0.9])
        return [float(np.log(max(low, 1e-4))), float(np.log(max(high - low, 1e-3)))]

    x0 = np.array(start(sigma0) + start(eps0))
    result = minimize(objective, x0, method="Nelder-Mead", options={"xatol": 1e-4, "fatol": 1e-6})
    result = minimize(objective, result.x, method="Nelder-Mead", options={"xatol": 1e-5})
    s_low, s_high, e_low, e_high = unpack(result.x)
    s_high, e_high = min(s_high, SIGMA_GRID[-1]), min(e_high, EPS_GRID[-1])
    ws = _uniform_weights(sigma_edges, s_low, s_high)
    we = _uniform_weights(eps_edges, e_low, e_high)
    total = marginal(result.x)
    sigma_post = ((scaled @ we) @ (ws * SIGMA_GRID)) / total
    eps_post = ((scaled @ (we * EPS_GRID)) @ ws) / total
    ranges = (float(s_low), float(s_high)), (float(e_low), float(e_high))
    return *ranges, sigma_post, eps_post


def fit_voters(rows: VoteRows, a: FloatArray) -> GridFit:
    """The votes' log-likelihood at every voter's best grid point, the crowd's ranges and the
    voters' posterior means, for relatedness ``a`` of every item.

    The ranges and the posteriors integrate the whole table; the voters' best grid points only
    start the ranges' search (maximising each voter's likelihood off the grid moved the
    fitted ranges by about 1e-7).
    """
    table = _voter_table(rows, a)
    flat = table.reshape(rows.n_voters, -1)
    g_best, e_best = np.unravel_index(flat.argmax(axis=1), (SIGMA_GRID.size, EPS_GRID.size))
    log_likelihood = float(flat.max(axis=1).sum())
    ranges = _fit_ranges(table, SIGMA_GRID[g_best], EPS_GRID[e_best])
    return GridFit(log_likelihood, *ranges)
