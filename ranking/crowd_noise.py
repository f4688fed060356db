"""Fitting the voter model of Section 4.1 to a study's votes (the crowd's noise).

Section 4.1.1 draws every voter's nonconformity ``sigma_v^*`` and distraction ``eps_v`` from
uniform ranges because their distribution "could be experimentally determined by analyzing
human voting". :func:`fit_crowd` does that analysis: it fits every voter's ``(sigma_v^*,
eps_v)`` by maximum likelihood (the vote probability of :mod:`ranking.crowd_likelihood`)
and the crowd's uniform ranges by the marginal likelihood of all voters, given where the
study's items stand.

The latent scale. The votes and an estimate of the items' order do not fix the items'
relatedness ``a_i = |z_i|``: locally the model depends on ``artanh(a)`` and ``sigma_v^*`` only
through their ratio (``da = (1 - a^2) d artanh(a)`` is exactly the paper's noise amplitude),
so the votes leave ``(artanh(a), sigma^*) -> (c artanh(a), c sigma^*)`` nearly free, and a
profile of ``a`` fitted jointly with the voters drifts along that ridge (``sigma^*`` off by a
factor of up to 2 on simulated studies whose true order was given). The fit therefore places
the items on a *reference* relatedness distribution: the item at rank quantile ``q`` of the
estimate gets the reference's ``|z|`` at quantile ``q`` (the paper's exponential by default,
``power_law``, ``embedding``, or any similarities, for instance a model's cosines of the
study's items). ``sigma^*`` is then expressed on that reference's scale, and a pilot's fitted
crowd predicts a study with the same reference (:mod:`ranking.crowd_prediction`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize
from scipy.stats import rankdata

from ._validation import FloatArray, IntArray, check_comparisons, check_generator, check_int
from .bradley_terry import bradley_terry
from .crowd_likelihood import fold_probability
from .crowd_model import CrowdModel, reference_relatedness
from .simulated_voters import SimulatedCrowd

__all__ = ["CrowdFit", "fit_crowd"]

SIGMA_GRID: FloatArray = np.geomspace(0.004, 1.6, 54)  # nonconformity grid (ratio 1.12)
EPS_GRID: FloatArray = np.geomspace(1e-4, 0.5, 48)  # distraction grid (ratio 1.2)
EPS_BOUNDS = (1e-4, 0.5)  # above 0.5 a voter would pick the less related item on purpose
_MAX_RELATEDNESS = 0.9999  # keeps 1 - a^2 > 0 (the noise amplitude of the top item)


@dataclass(frozen=True, eq=False)
class CrowdFit:
    """A crowd fitted to a study's votes by :func:`fit_crowd`.

    Attributes
    ----------
    voters : numpy.ndarray of int64
        Distinct voter ids, ascending; every per-voter array follows this order.
    votes : numpy.ndarray of int64
        Votes used per voter.
    sigma, eps : numpy.ndarray of float64
        Maximum-likelihood ``sigma_v^*`` and ``eps_v`` of each voter alone.
    sigma_posterior, eps_posterior : numpy.ndarray of float64
        Posterior means under the fitted crowd (the uniform ranges below as prior): less
        noisy than the per-voter maxima for voters with few votes.
    sigma_range, eps_range : tuple of float
        The crowd's uniform distributions ``U[low, high]``, fitted by marginal likelihood
        (Section 4.1.1's ranges, estimated).
    log_likelihood : float
        Log-likelihood of the votes at the per-voter maxima.
    crowd_log_likelihood : float
        Marginal log-likelihood of the votes under the fitted uniform ranges.
    relatedness : numpy.ndarray of float64, shape (n_items,)
        ``a_i`` assigned to every item (its reference value at its rank quantile).
    reference : str
        Name of the reference distribution (``"array"`` for given similarities).
    voter_names : tuple of str
        Names of ``voters`` when the caller gave them, else empty.
    """

    voters: IntArray
    votes: IntArray
    sigma: FloatArray
    eps: FloatArray
    sigma_posterior: FloatArray
    eps_posterior: FloatArray
    sigma_range: tuple[float, float]
    eps_range: tuple[float, float]
    log_likelihood: float
    crowd_log_likelihood: float
    relatedness: FloatArray
    reference: str
    voter_names: tuple[str, ...] = ()

    @property
    def sigma_mean(self) -> float:
        """Mean of the fitted uniform nonconformity."""
        return 0.5 * (self.sigma_range[0] + self.sigma_range[1])

    @property
    def eps_mean(self) -> float:
        """Mean of the fitted uniform distraction."""
        return 0.5 * (self.eps_range[0] + self.eps_range[1])

    def quantiles(self, levels: Sequence[float] = (0.1, 0.5, 0.9)) -> dict[str, list[float]]:
        """Quantiles of the per-voter posterior means, ``{"sigma": [...], "eps": [...]}``."""
        return {
            "sigma": np.quantile(self.sigma_posterior, levels).tolist(),
            "eps": np.quantile(self.eps_posterior, levels).tolist(),
        }

    def crowd_model(self, *, draw: str = "uniform", source: str = "") -> CrowdModel:
        """The fitted crowd as a :class:`ranking.CrowdModel` (what a crowd file holds)."""
        names = self.voter_names or tuple(str(v) for v in self.voters.tolist())
        return CrowdModel(
            sigma_range=self.sigma_range,
            eps_range=self.eps_range,
            voter_names=names,
            voter_votes=self.votes,
            voter_sigma=self.sigma_posterior,
            voter_eps=self.eps_posterior,
            profile=np.sort(self.relatedness)[::-1],
            reference=self.reference,
            draw=draw,
            log_likelihood=self.log_likelihood,
            source=source,
        )


@dataclass(frozen=True, eq=False)
class _Votes:
    """Votes as rows ``(first, second, voter, weight)``: the first item is the one chosen.

    A tie becomes two rows of weight 1/2, one each way (footnote 4).
    """

    chosen: IntArray
    other: IntArray
    voter: IntArray  # 0..V-1, rows sorted by voter
    weight: FloatArray
    starts: IntArray  # first row of every voter
    n_voters: int


def _rows(pairs: IntArray, scores: FloatArray, voter: IntArray, n_voters: int) -> _Votes:
    tie = scores == 0.5
    left_won = scores == 1.0
    chosen = np.where(left_won, pairs[:, 0], pairs[:, 1])
    other = np.where(left_won, pairs[:, 1], pairs[:, 0])
    chosen = np.concatenate([chosen, pairs[tie, 1]])
    other = np.concatenate([other, pairs[tie, 0]])
    who = np.concatenate([voter, voter[tie]])
    weight = np.concatenate([np.where(tie, 0.5, 1.0), np.full(int(tie.sum()), 0.5)])
    order = np.argsort(who, kind="stable")
    who = who[order]
    starts = np.searchsorted(who, np.arange(n_voters))
    return _Votes(chosen[order], other[order], who, weight[order], starts, n_voters)


def _check_inputs(
    n_items: int,
    pairs: npt.ArrayLike,
    first_score: npt.ArrayLike,
    voter: npt.ArrayLike,
    estimate: npt.ArrayLike | None,
    ties: str,
    voter_names: Sequence[str] | None,
) -> tuple[IntArray, FloatArray, IntArray, FloatArray | None]:
    pair_ids, scores = check_comparisons(n_items, pairs, first_score)
    who = np.asarray(voter)
    if who.shape != scores.shape:
        raise ValueError(f"voter must have shape ({scores.size},), got {who.shape}")
    if who.size and not np.issubdtype(who.dtype, np.integer):
        raise ValueError(f"voter must hold integer voter ids, got dtype {who.dtype}")
    who = who.astype(np.int64)
    if who.size and who.min() < 0:
        raise ValueError("voter ids must be non-negative")
    if voter_names is not None and who.size and who.max() >= len(voter_names):
        raise ValueError(
            f"unknown voter id {int(who.max())}: voter_names has {len(voter_names)} names"
        )
    if ties not in ("half", "drop"):
        raise ValueError(f"ties must be 'half' or 'drop', got {ties!r}")
    if ties == "drop":
        keep = scores != 0.5
        pair_ids, scores, who = pair_ids[keep], scores[keep], who[keep]
    if scores.size == 0:
        raise ValueError("no votes to fit (every vote was a dropped tie, or none was given)")
    score = None
    if estimate is not None:
        score = np.asarray(estimate, dtype=np.float64)
        if score.shape != (n_items,):
            raise ValueError(f"estimate must have shape ({n_items},), got {score.shape}")
        if not np.all(np.isfinite(score[pair_ids])):
            raise ValueError("estimate must be finite for every item that was voted on")
    return pair_ids, scores, who, score


def _rank_relatedness(score: FloatArray, profile: FloatArray) -> FloatArray:
    """The reference relatedness at every item's rank (mid-ranks for ties, NaN ranked last)."""
    n = score.size
    filled = np.where(np.isfinite(score), score, -np.inf)
    rank = rankdata(-filled, method="average")  # 1 = highest estimate
    return np.minimum(np.interp(rank - 1.0, np.arange(n), profile), _MAX_RELATEDNESS)


def _voter_table(rows: _Votes, a: FloatArray) -> FloatArray:
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
        win = fold_probability(first, second, np.full(first.size, sigma)).win
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


def _curvature(table: FloatArray, g: IntArray, e: IntArray) -> tuple[FloatArray, FloatArray]:
    """Minus the second differences of every voter's table at its maximum, per unit of
    log sigma and of log eps (1 where the maximum lies on the grid's edge or is flat)."""
    v = np.arange(table.shape[0])
    gi = np.clip(g, 1, SIGMA_GRID.size - 2)
    ei = np.clip(e, 1, EPS_GRID.size - 2)
    step_s = np.log(SIGMA_GRID[1] / SIGMA_GRID[0])
    step_e = np.log(EPS_GRID[1] / EPS_GRID[0])
    d2s = -(table[v, gi + 1, ei] - 2 * table[v, gi, ei] + table[v, gi - 1, ei]) / step_s**2
    d2e = -(table[v, gi, ei + 1] - 2 * table[v, gi, ei] + table[v, gi, ei - 1]) / step_e**2
    return np.where(d2s > 1e-3, d2s, 1.0), np.where(d2e > 1e-3, d2e, 1.0)


def _polish(
    rows: _Votes,
    a: FloatArray,
    sigma0: FloatArray,
    eps0: FloatArray,
    curvature: tuple[FloatArray, FloatArray],
) -> tuple[FloatArray, FloatArray, float]:
    """Per-voter maximum likelihood from the grid's best point (L-BFGS-B, analytic gradient).

    The voters are separable; each parameter is scaled by the root of its curvature on the
    grid so that one L-BFGS-B run over all voters converges in a few dozen steps.
    """
    v, n_v = rows.voter, rows.n_voters
    first, second = a[rows.chosen], a[rows.other]
    origin = np.concatenate([np.log(sigma0), np.log(eps0 / (1.0 - eps0))])
    # d logit(eps) = d log(eps) / (1 - eps): the grid's curvature in log eps, rescaled.
    scale = np.sqrt(np.concatenate([curvature[0], curvature[1] * (1.0 - eps0) ** 2]))

    def objective(x: FloatArray) -> tuple[float, FloatArray]:
        theta = origin + x / scale
        log_sigma, logit_eps = theta[:n_v], theta[n_v:]
        eps = 1.0 / (1.0 + np.exp(-logit_eps))
        prob = fold_probability(first, second, np.exp(log_sigma)[v])
        e = eps[v]
        chosen = e + (1.0 - 2.0 * e) * prob.win
        slope = rows.weight / chosen
        grad_sigma = np.bincount(v, slope * (1.0 - 2.0 * e) * prob.d_log_sigma, n_v)
        grad_eps = np.bincount(v, slope * (1.0 - 2.0 * prob.win), n_v) * eps * (1.0 - eps)
        value = float(np.sum(rows.weight * np.log(chosen)))
        return -value, -np.concatenate([grad_sigma, grad_eps]) / scale

    low_e, high_e = (float(np.log(e / (1.0 - e))) for e in EPS_BOUNDS)
    low = np.concatenate([np.full(n_v, np.log(SIGMA_GRID[0])), np.full(n_v, low_e)])
    high = np.concatenate([np.full(n_v, np.log(SIGMA_GRID[-1])), np.full(n_v, high_e)])
    bounds = list(zip((low - origin) * scale, (high - origin) * scale, strict=True))
    result = minimize(objective, np.zeros(2 * n_v), jac=True, method="L-BFGS-B", bounds=bounds)
    theta = origin + result.x / scale
    sigma = np.exp(theta[:n_v])
    eps = 1.0 / (1.0 + np.exp(-theta[n_v:]))
    return sigma, eps, -float(result.fun)


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


def _fit_ranges(table: FloatArray, sigma0: FloatArray, eps0: FloatArray) -> tuple:
    """Uniform ranges of sigma* and eps maximising the voters' marginal likelihood."""
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
    crowd_ll = float(np.sum(np.log(total) + peak))
    return (s_low, s_high), (e_low, e_high), sigma_post, eps_post, crowd_ll


def _fit_once(rows: _Votes, a: FloatArray, polish: bool = True) -> tuple:
    """Per-voter maxima (polished or the grid's) and the crowd's ranges."""
    table = _voter_table(rows, a)
    flat_best = table.reshape(rows.n_voters, -1).argmax(axis=1)
    g_best, e_best = np.unravel_index(flat_best, (SIGMA_GRID.size, EPS_GRID.size))
    sigma, eps = SIGMA_GRID[g_best], EPS_GRID[e_best]
    log_likelihood = float(table.reshape(rows.n_voters, -1).max(axis=1).sum())
    if polish:
        curvature = _curvature(table, g_best, e_best)
        sigma, eps, log_likelihood = _polish(rows, a, sigma, eps, curvature)
    return (sigma, eps, log_likelihood, *_fit_ranges(table, sigma, eps))


def _pair(values: FloatArray) -> tuple[float, float]:
    return float(values[0]), float(values[1])


def _clipped(ranges: FloatArray) -> FloatArray:
    """``[sigma_low, sigma_high, eps_low, eps_high]`` kept inside the grid, low <= high."""
    s_low = float(np.clip(ranges[0], SIGMA_GRID[0], SIGMA_GRID[-1]))
    e_low = float(np.clip(ranges[2], EPS_BOUNDS[0], EPS_BOUNDS[1]))
    s_high = float(np.clip(ranges[1], s_low, SIGMA_GRID[-1]))
    e_high = float(np.clip(ranges[3], e_low, EPS_BOUNDS[1]))
    return np.array([s_low, s_high, e_low, e_high])


def _stretch(
    values: FloatArray, fitted: tuple[float, float], target: FloatArray, floor: float
) -> FloatArray:
    """Map ``values`` affinely so that the fitted range lands on the corrected one."""
    width = fitted[1] - fitted[0]
    if width <= 1e-12:
        return np.maximum(values - fitted[0] + target[0], floor)
    slope = max(float(target[1] - target[0]), 0.0) / width
    return np.maximum(target[0] + slope * (values - fitted[0]), floor)


def fit_crowd(
    n_items: int,
    pairs: npt.ArrayLike,
    first_score: npt.ArrayLike,
    voter: npt.ArrayLike,
    estimate: npt.ArrayLike | None,
    rng: np.random.Generator,
    *,
    reference: str | npt.ArrayLike = "exponential",
    ties: str = "half",
    voter_names: Sequence[str] | None = None,
    calibration: int = 2,
) -> CrowdFit:
    """Fit every voter's ``sigma_v^*`` and ``eps_v``, and the crowd's ranges (Section 4.1).

    The likelihood of a vote where voter ``v`` chose item ``i`` over ``j`` is
    ``eps_v + (1 - 2 eps_v) P(|X_i| > |X_j|)``, ``X_i ~ N(a_i, (sigma_v^* (1 - a_i^2))^2)``
    (Eq. 11 with Section 4.1.2's absolute value; the clip is neglected, see
    :mod:`ranking.crowd_likelihood`). Votes count as independent given the parameters: the
    paper's ``eta_i^(v)``, shared by a voter's votes on the same item, is integrated out vote
    by vote (a composite likelihood: consistent, though it overstates the precision).

    Items get the relatedness ``a_i`` of the ``reference`` distribution at their rank quantile
    in ``estimate`` (module docstring: the votes alone do not fix the latent scale). Every
    voter's likelihood is tabulated on a grid of ``sigma^*`` (0.004-1.6) and ``eps``
    (1e-4-0.5), and maximised from the grid's best point by L-BFGS-B with the analytic
    gradient; the crowd's ranges ``U[sigma_low, sigma_high]`` and ``U[eps_low, eps_high]``
    maximise the product over voters of the likelihood integrated over those ranges, which
    separates the crowd's spread from each voter's estimation noise.

    Parameters
    ----------
    n_items : int
        Items of the study, ids ``0..n_items-1``.
    pairs : array_like of int, shape (P, 2)
        Left and right item of every vote.
    first_score : array_like of float, shape (P,)
        1.0 left chosen, 0.0 right, 0.5 tie.
    voter : array_like of int, shape (P,)
        Voter id of every vote (non-negative integers).
    estimate : array_like of float, shape (n_items,), optional
        The current score of every item, higher = more related (the study's ybar or
        Bradley-Terry strength); only its order is used. Default: a pooled Bradley-Terry fit
        of these votes, whose order leaves ``sigma^*`` less inflated than ybar's (noisier)
        order does (docs/science.md).
    reference : {"exponential", "power_law", "embedding"} or array_like of float, optional
        Relatedness distribution the items are placed on (Section 4.1.1's distributions, or
        similarities in [-1, 1] of any number, resampled to ``n_items`` by quantile).
    ties : {"half", "drop"}, optional
        A tie counts as half a choice each way (footnote 4), or is left out.
    voter_names : sequence of str, optional
        Names of the voter ids (``voter`` indexes into it).

    Returns
    -------
    CrowdFit

    Raises
    ------
    ValueError
        Bad shapes, ids out of range, unknown voter ids, a non-finite estimate of a voted item.
    """
    n = check_int(n_items, "n_items", minimum=2)
    pair_ids, scores, who, score = _check_inputs(
        n, pairs, first_score, voter, estimate, ties, voter_names
    )
    gen = check_generator(rng)
    replicas = check_int(calibration, "calibration", minimum=0)
    profile = reference_relatedness(reference, n)
    if score is None:
        score = bradley_terry(n, pair_ids, scores)
    a = _rank_relatedness(score, profile)
    voters, index = np.unique(who, return_inverse=True)
    index = index.astype(np.int64)
    fitted = _fit_once(_rows(pair_ids, scores, index, voters.size), a)
    sigma, eps, log_likelihood, sigma_range, eps_range, sigma_post, eps_post, crowd_ll = fitted
    if replicas:
        # One step of a parametric-bootstrap bias correction: vote again with the fitted
        # crowd, fit that, and move the ranges back by the mean shift (docs/science.md).
        observed = np.array([*sigma_range, *eps_range])
        crowd = CrowdModel(sigma_range=sigma_range, eps_range=eps_range)
        refits = []
        for _ in range(replicas):
            simulated = SimulatedCrowd(a, voters.size, gen, voters=crowd).answer(pair_ids, index)
            again = _rank_relatedness(bradley_terry(n, pair_ids, simulated), profile)
            refit = _fit_once(_rows(pair_ids, simulated, index, voters.size), again, False)
            refits.append([*refit[3], *refit[4]])
        current = _clipped(2.0 * observed - np.mean(refits, axis=0))
        sigma_post = _stretch(sigma_post, sigma_range, current[:2], SIGMA_GRID[0])
        eps_post = _stretch(eps_post, eps_range, current[2:], EPS_BOUNDS[0])
        sigma_range, eps_range = _pair(current[:2]), _pair(current[2:])
    names = () if voter_names is None else tuple(str(voter_names[v]) for v in voters.tolist())
    return CrowdFit(
        voters=voters.astype(np.int64),
        votes=np.bincount(index, minlength=voters.size).astype(np.int64),
        sigma=sigma,
        eps=eps,
        sigma_posterior=sigma_post,
        eps_posterior=eps_post,
        sigma_range=(float(sigma_range[0]), float(sigma_range[1])),
        eps_range=(float(eps_range[0]), float(eps_range[1])),
        log_likelihood=log_likelihood,
        crowd_log_likelihood=crowd_ll,
        relatedness=a,
        reference=reference if isinstance(reference, str) else "array",
        voter_names=names,
    )
