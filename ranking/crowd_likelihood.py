"""The probability of one vote under the voter model of Section 4.1, with its derivatives.

Voter ``v`` judges item ``i`` by the opinion ``o_i = |F(z_i + sigma_v (1 - z_i^2) eta_i)|``
(Eq. 11 with the absolute value of Section 4.1.2, ``F`` the clip to [-1, 1]) and picks the
item with the larger opinion, or the other one with probability ``eps_v``. The opinion depends
on ``z_i`` only through the relatedness ``a_i = |z_i|`` (``eta`` is symmetric), so with
``s_i = 1 - a_i^2`` and ``X_i ~ N(a_i, sigma_v^2 s_i^2)``::

    P(v picks i over j) = eps_v + (1 - 2 eps_v) P(|X_i| > |X_j|)

The clip is left out: it changes the probability only when both opinions reach 1, which
needs ``eta > 1 / (sigma_v (1 + a))`` (under 0.7 % for ``sigma_v <= 0.2``). The absolute value
is kept exactly: with ``U = X_i - X_j`` and ``W = X_i + X_j``, ``|X_i| > |X_j|`` is ``U W > 0``,
a pair of bivariate normal orthants, so::

    P(|X_i| > |X_j|) = 1 - Phi(h) - Phi(k) + 2 Phi_2(h, k; r)
    h = (a_i - a_j) / (sigma_v S), k = (a_i + a_j) / (sigma_v S),
    S^2 = s_i^2 + s_j^2, r = (s_i^2 - s_j^2) / S^2

with ``Phi_2`` the bivariate normal distribution function, evaluated through Owen's T
(:func:`scipy.special.owens_t`). Far from zero relatedness (``k >= 8``) this is ``Phi(h)``,
Thurstone's Case V with unequal variances, to within 1e-15.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, owens_t

from ._validation import FloatArray

__all__ = ["VoteProbability", "fold_probability", "vote_log_likelihood"]

_EXACT_BELOW = 8.0  # k at which the folded term is below 1e-15 and Phi(h) is used
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


def _pdf(x: FloatArray) -> FloatArray:
    return np.asarray(_INV_SQRT_2PI * np.exp(-0.5 * x * x))


def _bivariate_cdf(h: FloatArray, k: FloatArray, r: FloatArray) -> FloatArray:
    """``P(Z_1 < h, Z_2 < k)`` for standard normals with correlation ``|r| < 1`` (Owen, 1956)."""
    root = np.sqrt(1.0 - r * r)
    with np.errstate(divide="ignore", invalid="ignore"):
        a_h = (k - r * h) / (h * root)
        a_k = (h - r * k) / (k * root)
    # h = k = 0 only (both items at zero relatedness): T(0, a) = atan(a) / (2 pi).
    a_h = np.where(np.isnan(a_h), 0.0, a_h)
    a_k = np.where(np.isnan(a_k), 0.0, a_k)
    hk = h * k
    beta = np.where((hk < 0) | ((hk == 0) & (h + k < 0)), 0.5, 0.0)
    cdf = 0.5 * (ndtr(h) + ndtr(k)) - owens_t(h, a_h) - owens_t(k, a_k) - beta
    origin = (h == 0) & (k == 0)
    return np.asarray(np.where(origin, 0.25 + np.arcsin(r) / (2.0 * np.pi), cdf))


@dataclass(frozen=True, eq=False)
class VoteProbability:
    """``F = P(|X_i| > |X_j|)``, ``G = 1 - F``, and the derivatives of ``F``.

    Attributes
    ----------
    win, lose : numpy.ndarray of float64
        ``F`` and ``1 - F`` (each computed without cancellation where it is tiny).
    d_first, d_second : numpy.ndarray of float64
        ``dF / da_i`` and ``dF / da_j``.
    d_log_sigma : numpy.ndarray of float64
        ``dF / d log sigma_v``.
    """

    win: FloatArray
    lose: FloatArray
    d_first: FloatArray
    d_second: FloatArray
    d_log_sigma: FloatArray


def fold_probability(first: FloatArray, second: FloatArray, sigma: FloatArray) -> VoteProbability:
    """``P(|X_i| > |X_j|)`` and its gradient, element-wise (module docstring).

    Parameters
    ----------
    first, second : numpy.ndarray of float64
        Relatedness ``a_i``, ``a_j`` in [0, 1).
    sigma : numpy.ndarray of float64
        The voter's nonconformity ``sigma_v^* > 0``.
    """
    s_i = 1.0 - first * first
    s_j = 1.0 - second * second
    s2 = s_i * s_i + s_j * s_j
    big_s = np.sqrt(s2)
    scale = sigma * big_s
    h = (first - second) / scale
    k = (first + second) / scale
    win = ndtr(h)
    lose = ndtr(-h)
    d_h = _pdf(h)
    d_k = np.zeros_like(h)
    d_r = np.zeros_like(h)
    exact = k < _EXACT_BELOW
    r_all = (s_i * s_i - s_j * s_j) / s2
    if np.any(exact):
        he, ke, re = h[exact], k[exact], r_all[exact]
        cdf2 = _bivariate_cdf(he, ke, re)
        fold = 1.0 - ndtr(he) - ndtr(ke) + 2.0 * cdf2
        win[exact] = np.clip(fold, 0.0, 1.0)
        lose[exact] = np.clip(1.0 - fold, 0.0, 1.0)
        root = np.sqrt(1.0 - re * re)
        d_h[exact] = _pdf(he) * (2.0 * ndtr((ke - re * he) / root) - 1.0)
        d_k[exact] = _pdf(ke) * (2.0 * ndtr((he - re * ke) / root) - 1.0)
        quad = (he * he - 2.0 * re * he * ke + ke * ke) / (1.0 - re * re)
        d_r[exact] = 2.0 * np.exp(-0.5 * quad) / (2.0 * np.pi * root)
    inv = 1.0 / scale
    # dh/da_i, dk/da_i through a_i - a_j, a_i + a_j and S (ds_i/da_i = -2 a_i).
    grow_i = 2.0 * first * s_i / s2
    grow_j = 2.0 * second * s_j / s2
    s4 = s2 * s2
    d_first = (
        d_h * (inv + grow_i * h)
        + d_k * (inv + grow_i * k)
        + d_r * (-8.0 * first * s_i * s_j * s_j / s4)
    )
    d_second = (
        d_h * (-inv + grow_j * h)
        + d_k * (inv + grow_j * k)
        + d_r * (8.0 * second * s_j * s_i * s_i / s4)
    )
    d_log_sigma = -(d_h * h + d_k * k)
    return VoteProbability(win, lose, d_first, d_second, d_log_sigma)


def vote_log_likelihood(
    outcome: FloatArray, probability: VoteProbability, eps: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Log-likelihood of every vote and its derivatives in ``F`` and ``eps``.

    ``P = eps + (1 - 2 eps) F`` is the probability that the first item is chosen; a vote
    with outcome ``y`` (1 first, 0 second, 0.5 tie: half a choice each way, footnote 4)
    contributes ``y log P + (1 - y) log(1 - P)``.

    Returns
    -------
    log_likelihood, d_win, d_eps : numpy.ndarray of float64
        Per vote: the contribution, its derivative in ``F`` and in ``eps``.
    """
    chosen = eps + (1.0 - 2.0 * eps) * probability.win
    other = eps + (1.0 - 2.0 * eps) * probability.lose
    log_likelihood = outcome * np.log(chosen) + (1.0 - outcome) * np.log(other)
    d_chosen = outcome / chosen - (1.0 - outcome) / other
    d_win = d_chosen * (1.0 - 2.0 * eps)
    d_eps = d_chosen * (1.0 - 2.0 * probability.win)
    return log_likelihood, d_win, d_eps
