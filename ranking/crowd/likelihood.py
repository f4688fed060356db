"""The probability of one vote under the voter model of Section 4.1.

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

import numpy as np
from scipy.special import ndtr, owens_t

from .._validation import FloatArray

__all__ = ["fold_probability"]

_EXACT_BELOW = 8.0  # k at which the folded term is below 1e-15 and Phi(h) is used


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


def fold_probability(
    first: FloatArray, second: FloatArray, sigma: float | FloatArray
) -> FloatArray:
    """``P(|X_i| > |X_j|)``, element-wise (module docstring).

    Parameters
    ----------
    first, second : numpy.ndarray of float64
        Relatedness ``a_i``, ``a_j`` in [0, 1).
    sigma : float or numpy.ndarray of float64
        The voter's nonconformity ``sigma_v^* > 0`` (one for all, or one per element).

    Returns
    -------
    numpy.ndarray of float64
        The probability that the voter's opinion of the first item is the larger.
    """
    s_i = 1.0 - first * first
    s_j = 1.0 - second * second
    s2 = s_i * s_i + s_j * s_j
    scale = sigma * np.sqrt(s2)
    h = (first - second) / scale
    k = (first + second) / scale
    win = np.asarray(ndtr(h))
    exact = k < _EXACT_BELOW
    if np.any(exact):
        he, ke = h[exact], k[exact]
        re = (s_i * s_i - s_j * s_j)[exact] / s2[exact]
        fold = 1.0 - ndtr(he) - ndtr(ke) + 2.0 * _bivariate_cdf(he, ke, re)
        win[exact] = np.clip(fold, 0.0, 1.0)
    return win
