"""An empirical-Bayes Bradley-Terry posterior of the items' strengths (docs/science.md).

The settled top (:mod:`ranking.evaluation.settled_top`) asks how probable it is that an item is
in the true top ``k``. The voter bootstrap answers with the estimator's own scores resampled
around the observed ones, which keeps the current top items' luck (they were picked for high
scores) and cannot let an item an early ballot dropped come back. This module gives every item
a posterior distribution of its strength instead, from all answered comparisons of the ballots
so far, so that the top items' scores are shrunk by their prior and an item with few
comparisons (dropped early) has a wide posterior and can reach the top in a draw.

Model: Bradley-Terry, ``P(a beats b) = sigma(t_a - t_b)``, a tie half a win for each side
(footnote 4 applied to the likelihood, as :func:`ranking.protocol.bradley_terry`), with a
Gaussian prior ``t_i ~ N(0, tau^2)``. ``tau^2`` is chosen by empirical Bayes: MacKay's fixed
point of the Laplace-approximated marginal likelihood, ``tau^2 = |t_hat|^2 / (n - tr(H^-1) /
tau^2)``, with ``H`` the Hessian of the negative log posterior at the MAP ``t_hat`` and
``tr(H^-1)`` approximated by ``sum_i 1 / H_ii``. Item ``i``'s posterior is the Laplace
approximation ``N(t_hat_i, 1 / H_ii)``: its own comparisons' curvature
``sum_p sigma(d_p)(1 - sigma(d_p))`` plus the prior's ``1 / tau^2`` (the full covariance
``H^-1`` gave the same calibration in simulation and costs a sparse solve per draw).

Cost: Newton steps solved by sparse conjugate gradients, O(P) per step (P answered
comparisons), a few steps per round of the ``tau^2`` fixed point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sparse
import scipy.sparse.linalg as sparse_linalg
from scipy.special import expit, log_expit

from .._validation import FloatArray, IntArray, check_comparisons, check_generator, check_int

__all__ = [
    "DECONVOLUTION_STEPS",
    "DeconvolvedPosterior",
    "StrengthPosterior",
    "deconvolved_posterior",
    "strength_posterior",
    "voter_design_effect",
]

# EM steps of the deconvolved prior (chosen on simulated studies of seeds 1000+: docs/science.md).
DECONVOLUTION_STEPS = 20


@dataclass(frozen=True, eq=False)
class StrengthPosterior:
    """Independent normal posteriors of the items' Bradley-Terry log-strengths.

    Attributes
    ----------
    mean : numpy.ndarray of float64, shape (n_items,)
        The MAP strengths (0, the prior mean, for an item never compared).
    sd : numpy.ndarray of float64, shape (n_items,)
        ``1 / sqrt(H_ii)`` (``tau`` for an item never compared).
    prior_variance : float
        The empirical-Bayes ``tau^2``.
    """

    mean: FloatArray
    sd: FloatArray
    prior_variance: float

    def draw(self, rng: np.random.Generator, count: int, inflation: float = 1.0) -> FloatArray:
        """``count`` draws of every item's strength, shape ``(n_items, count)``; the posterior
        standard deviations multiplied by ``inflation``."""
        noise = rng.standard_normal((self.mean.size, count))
        return self.mean[:, None] + (inflation * self.sd)[:, None] * noise


def strength_posterior(
    n_items: int,
    pairs: npt.ArrayLike,
    first_score: npt.ArrayLike,
    *,
    tol: float = 1e-3,
    max_rounds: int = 100,
) -> StrengthPosterior:
    """The empirical-Bayes Bradley-Terry posterior of all items (module docstring).

    Parameters
    ----------
    n_items : int
        Items; ids run over ``0..n_items-1``.
    pairs : array_like of int, shape (P, 2)
        Answered comparisons, as item ids.
    first_score : array_like of float, shape (P,)
        1.0 first item won, 0.0 second won, 0.5 tie.
    tol : float, optional
        Relative change of ``tau^2`` at which the fixed point stops.
    max_rounds : int, optional
        Rounds of the fixed point at most.

    Returns
    -------
    StrengthPosterior

    Examples
    --------
    >>> post = strength_posterior(3, [[0, 1], [1, 2], [0, 2]] * 5, [1.0, 1.0, 1.0] * 5)
    >>> bool(post.mean[0] > post.mean[1] > post.mean[2])
    True
    """
    n = check_int(n_items, "n_items", minimum=1)
    pair_ids, scores = check_comparisons(n, pairs, first_score)
    first, second = pair_ids[:, 0], pair_ids[:, 1]
    theta = np.zeros(n)
    tau2 = 1.0
    for _ in range(check_int(max_rounds, "max_rounds", minimum=1)):
        theta, diagonal = _map(n, first, second, scores, tau2, theta, steps=3)
        effective = n - float(np.sum(1.0 / diagonal)) / tau2
        new = float(theta @ theta) / max(effective, 1.0)
        new = max(new, 1e-6)
        settled = abs(new - tau2) <= tol * tau2
        tau2 = new
        if settled:
            break
    theta, diagonal = _map(n, first, second, scores, tau2, theta, steps=50)
    return StrengthPosterior(theta, 1.0 / np.sqrt(diagonal), tau2)


def _map(
    n: int,
    first: IntArray,
    second: IntArray,
    scores: FloatArray,
    tau2: float,
    theta: FloatArray,
    steps: int,
) -> tuple[FloatArray, FloatArray]:
    """Newton steps towards the MAP at prior variance ``tau2``; the strengths and the
    Hessian's diagonal there."""
    index = np.arange(n)
    rows = np.concatenate([first, second, index])
    cols = np.concatenate([second, first, index])

    def loss(t: FloatArray) -> float:
        d = t[first] - t[second]
        fit = scores * log_expit(d) + (1.0 - scores) * log_expit(-d)
        return float(-fit.sum() + 0.5 * (t @ t) / tau2)

    def curvature(t: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        p: FloatArray = expit(t[first] - t[second])
        weight = p * (1.0 - p)
        diagonal = np.bincount(first, weight, n) + np.bincount(second, weight, n) + 1.0 / tau2
        return p, weight, diagonal.astype(np.float64)

    value = loss(theta)
    for _ in range(steps):
        p, weight, diagonal = curvature(theta)
        residual = scores - p
        gradient = theta / tau2 - (
            np.bincount(first, residual, n) - np.bincount(second, residual, n)
        )
        hessian = sparse.csr_matrix(
            (np.concatenate([-weight, -weight, diagonal]), (rows, cols)), shape=(n, n)
        )
        step, _info = sparse_linalg.cg(
            hessian, -gradient, M=sparse.diags(1.0 / diagonal), rtol=1e-8, maxiter=10 * n
        )
        size, slope = 1.0, float(gradient @ step)
        while True:  # backtracking: every step a descent step
            candidate = theta + size * step
            new_value = loss(candidate)
            if new_value <= value + 1e-4 * size * slope or size < 1e-8:
                break
            size *= 0.5
        theta, value = candidate, new_value
        if np.max(np.abs(size * step), initial=0.0) < 1e-6:
            break
    return theta, curvature(theta)[2]


def voter_design_effect(
    n_items: int,
    pairs: npt.ArrayLike,
    first_score: npt.ArrayLike,
    voter: npt.ArrayLike,
    strength: npt.ArrayLike,
) -> tuple[FloatArray, float]:
    """Each item's design effect from voters judging it more than once, and the correlation.

    A voter's opinion of an item is persistent (Section 4.1: ``eta_i^(v)`` is drawn once per
    voter and item), so one voter's answers about one item are correlated and count for fewer
    independent comparisons than their number. With the residuals ``r_p = s_p - sigma(d_p)``
    of the comparisons (signed towards the item) at ``strength`` and their weights ``w_p =
    sigma(d_p)(1 - sigma(d_p))``, grouped into clusters ``c`` of one voter and one item, the
    study's within-cluster correlation is pooled over every cluster,
    ``rho = sum_c sum_{p != q in c} r_p r_q / sum_c n_c (n_c - 1) w_c`` (``w_c`` the cluster's
    mean weight, ``rho`` at least 0), and item ``i``'s design effect (Kish) is
    ``1 + rho sum_{c of i} n_c (n_c - 1) w_c / sum_{p of i} w_p``: 1 for an item no voter
    judged twice, larger for the top items the later ballots show the same voters again.

    Parameters
    ----------
    n_items : int
    pairs : array_like of int, shape (P, 2)
        Answered comparisons, as item ids.
    first_score : array_like of float, shape (P,)
        1.0 first item won, 0.0 second won, 0.5 tie.
    voter : array_like of int, shape (P,)
        Who answered each comparison (any non-negative integer ids).
    strength : array_like of float, shape (n_items,)
        The items' fitted strengths (:func:`strength_posterior`'s ``mean``).

    Returns
    -------
    design_effect : numpy.ndarray of float64, shape (n_items,)
    rho : float

    Examples
    --------
    >>> effect, rho = voter_design_effect(2, [[0, 1]] * 4, [1.0, 1.0, 0.0, 0.0], [0, 0, 1, 1],
    ...                                   [0.0, 0.0])
    >>> round(rho, 6), effect.round(6).tolist()
    (1.0, [2.0, 2.0])
    """
    n = check_int(n_items, "n_items", minimum=1)
    pair_ids, scores = check_comparisons(n, pairs, first_score)
    who = np.asarray(voter, dtype=np.int64)
    theta = np.asarray(strength, dtype=np.float64)
    if who.shape != scores.shape or (who.size and who.min() < 0):
        raise ValueError("voter must hold one non-negative id per comparison")
    if theta.shape != (n,):
        raise ValueError(f"strength must hold {n} values, got shape {theta.shape}")
    first, second = pair_ids[:, 0], pair_ids[:, 1]
    p = expit(theta[first] - theta[second])
    residual = scores - p
    weight = p * (1.0 - p)
    cluster, index = np.unique(
        np.concatenate([who * n + first, who * n + second]), return_inverse=True
    )
    signed = np.concatenate([residual, -residual])
    size = np.bincount(index).astype(np.float64)
    total = np.bincount(index, signed)
    cross = total**2 - np.bincount(index, signed**2)
    paired = (size - 1.0) * np.bincount(index, np.concatenate([weight, weight]))
    rho = max(0.0, float(cross.sum()) / float(paired.sum())) if paired.sum() > 0 else 0.0
    item = cluster % n
    information = np.bincount(first, weight, n) + np.bincount(second, weight, n)
    repeated = np.bincount(item, paired, n)
    effect = 1.0 + rho * repeated / np.maximum(information, 1e-12)
    return effect.astype(np.float64), rho


@dataclass(frozen=True, eq=False)
class DeconvolvedPosterior:
    """Item posteriors under a prior estimated on a grid from all items (a deconvolution).

    Each item's evidence is summarised as a normal likelihood ``N(estimate_i, variance_i)``
    (the Laplace approximation of :func:`strength_posterior` with its Gaussian prior taken
    out); the prior is a distribution on ``grid``; item ``i``'s posterior on the grid is
    ``prior * N(estimate_i, variance_i)`` renormalised, drawn uniformly within a grid cell.

    Attributes
    ----------
    grid : numpy.ndarray of float64, shape (G,)
        Equally spaced strengths.
    prior : numpy.ndarray of float64, shape (G,)
        The prior's probabilities on the grid (summing to 1).
    estimate, variance : numpy.ndarray of float64, shape (n_items,)
        Every item's likelihood mean and variance (``inf`` variance: never compared, the
        posterior is the prior).
    iterations : int
        EM steps the prior was fitted with.
    """

    grid: FloatArray
    prior: FloatArray
    estimate: FloatArray
    variance: FloatArray
    iterations: int

    def draw(self, rng: np.random.Generator, count: int, inflation: float = 1.0) -> FloatArray:
        """``count`` draws of every item's strength, shape ``(n_items, count)``; the
        likelihoods' standard deviations multiplied by ``inflation``."""
        n, size = self.estimate.size, self.grid.size
        step = float(self.grid[1] - self.grid[0])
        out = np.empty((n, count))
        chunk = max(1, 2_000_000 // max(size, count))
        for start in range(0, n, chunk):
            rows = slice(start, min(n, start + chunk))
            weight = _grid_weights(
                self.grid, self.prior, self.estimate[rows], inflation**2 * self.variance[rows]
            )
            cdf = np.cumsum(weight, axis=1)
            cdf /= cdf[:, -1:]
            offset = np.arange(cdf.shape[0])[:, None]
            # One sorted search over all rows: row r's cdf shifted to (r, r + 1].
            index = np.searchsorted(
                (cdf + offset).ravel(), rng.random((cdf.shape[0], count)) + offset
            )
            index = np.minimum(index - offset * size, size - 1)
            out[rows] = self.grid[index] + step * (rng.random(index.shape) - 0.5)
        return out


def _grid_weights(
    grid: FloatArray, prior: FloatArray, estimate: FloatArray, variance: FloatArray
) -> FloatArray:
    """Unnormalised posterior weights on the grid, one row per item (largest weight 1)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_like = -0.5 * (grid[None, :] - estimate[:, None]) ** 2 / variance[:, None]
    log_like = np.where(np.isfinite(variance)[:, None], log_like, 0.0)
    log_weight = log_like + np.log(np.maximum(prior, 1e-300))[None, :]
    log_weight -= log_weight.max(axis=1, keepdims=True)
    return np.exp(log_weight)


def deconvolved_posterior(
    posterior: StrengthPosterior,
    rng: np.random.Generator,
    *,
    iterations: int = DECONVOLUTION_STEPS,
    grid_points: int = 200,
    fit_items: int = 20_000,
    design_effect: npt.ArrayLike | None = None,
) -> DeconvolvedPosterior:
    """The prior of the items' strengths estimated from the items themselves (docs/science.md).

    Every compared item's Laplace posterior ``N(t_hat_i, sd_i^2)`` under the Gaussian prior
    ``N(0, tau^2)`` is turned back into its likelihood, ``N(x_i, s_i^2)`` with ``1 / s_i^2 =
    1 / sd_i^2 - 1 / tau^2`` and ``x_i = t_hat_i s_i^2 / sd_i^2``. The prior is then a
    distribution on a grid over the ``x_i`` (their 0.1 and 99.9 percentiles widened by 1),
    fitted by ``iterations`` steps of the EM algorithm of the nonparametric maximum
    likelihood estimate of a mixing distribution (Laird 1978; ``g <- g * mean_i (L_i /
    (L_i g))``), started from the Gaussian prior: the steps move the prior towards the
    shape the items' estimates show (a short upper tail, a plateau of near-equal top items)
    and, stopped early, keep it smooth. Beyond ``fit_items`` compared items, the prior is
    fitted on that many drawn at random. With ``design_effect``, each likelihood's variance
    ``s_i^2`` is multiplied by the item's (:func:`voter_design_effect`: voters who judged the
    item more than once count for less) before the prior is fitted.

    Parameters
    ----------
    posterior : StrengthPosterior
        :func:`strength_posterior`'s result.
    rng : numpy.random.Generator
        Draws the items the prior is fitted on (only beyond ``fit_items``).
    iterations : int, optional
        EM steps (:data:`DECONVOLUTION_STEPS`; 0: the Gaussian prior on the grid).
    grid_points : int, optional
    fit_items : int, optional
    design_effect : array_like of float, shape (n_items,), optional
        At least 1 per item (default: 1 for every item).

    Returns
    -------
    DeconvolvedPosterior

    Examples
    --------
    >>> post = strength_posterior(3, [[0, 1], [1, 2], [0, 2]] * 5, [1.0, 1.0, 1.0] * 5)
    >>> deco = deconvolved_posterior(post, np.random.default_rng(0))
    >>> bool(abs(deco.prior.sum() - 1.0) < 1e-9)
    True
    """
    steps = check_int(iterations, "iterations", minimum=0)
    size = check_int(grid_points, "grid_points", minimum=2)
    most = check_int(fit_items, "fit_items", minimum=2)
    tau2 = posterior.prior_variance
    precision = 1.0 / posterior.sd**2 - 1.0 / tau2
    compared = precision > 1e-9 / tau2
    variance = np.full(posterior.mean.size, np.inf)
    variance[compared] = 1.0 / precision[compared]
    estimate = np.zeros(posterior.mean.size)
    estimate[compared] = posterior.mean[compared] * variance[compared] / posterior.sd[compared] ** 2
    if design_effect is not None:
        effect = np.asarray(design_effect, dtype=np.float64)
        if effect.shape != variance.shape or not np.all(effect >= 1.0):
            raise ValueError("design_effect must hold one value of at least 1 per item")
        variance = variance * effect
    fitted = np.flatnonzero(compared)
    if fitted.size == 0:
        fitted = np.arange(posterior.mean.size)
    low, high = np.percentile(estimate[fitted], [0.1, 99.9])
    low = min(low, -3.0 * np.sqrt(tau2)) - 1.0
    high = max(high, 3.0 * np.sqrt(tau2)) + 1.0
    grid = np.linspace(low, high, size)
    prior = np.exp(-0.5 * grid**2 / tau2)
    prior /= prior.sum()
    if fitted.size > most:
        fitted = np.sort(check_generator(rng).choice(fitted, most, replace=False))
    if compared.any():
        like = _grid_weights(grid, np.ones(size), estimate[fitted], variance[fitted])
        for _ in range(steps):
            prior = prior * (like.T @ (1.0 / (like @ prior))) / fitted.size
    return DeconvolvedPosterior(grid, prior / prior.sum(), estimate, variance, steps)
