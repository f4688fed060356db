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

from .._validation import FloatArray, IntArray, check_comparisons, check_int

__all__ = ["StrengthPosterior", "strength_posterior"]


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
