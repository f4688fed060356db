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
``power_law``, ``embedding``, ``csv:PATH``, or any similarities, for instance a model's cosines
of the study's items). ``sigma^*`` is then expressed on that reference's scale, and a pilot's
fitted crowd predicts a study with the same reference (:mod:`ranking.crowd_prediction`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.stats import rankdata

from .._validation import FloatArray, IntArray, check_comparisons, check_generator, check_int
from ..protocol.bradley_terry import bradley_terry
from ..protocol.scores import group_members
from .grid import EPS_GRID, SIGMA_GRID, fit_voters, vote_rows
from .model import CrowdModel, reference_relatedness
from .voters import SimulatedCrowd

__all__ = ["CrowdFit", "fit_crowd"]

_MAX_RELATEDNESS = 0.9999  # keeps 1 - a^2 > 0 (the noise amplitude of the top item)
_MEDIAN_QUANTILES = 1001  # a distribution's median: the middle of this many quantiles


@dataclass(frozen=True, eq=False)
class CrowdFit:
    """A crowd fitted to a study's votes by :func:`fit_crowd`.

    Attributes
    ----------
    voters : numpy.ndarray of int64
        Distinct voter ids, ascending; every per-voter array follows this order.
    votes : numpy.ndarray of int64
        Votes used per voter (a tie counts once; dropped ties do not count).
    sigma_posterior, eps_posterior : numpy.ndarray of float64
        Every voter's ``sigma_v^*`` and ``eps_v``: the posterior means under the uniform ranges
        fitted before calibration (as prior), less noisy than a voter's own maximum for voters
        with few votes. With calibration they are then mapped affinely, each from the range
        fitted before calibration onto the calibrated range below (floored at the grid's
        lowest ``sigma^*``, 0.004, and ``eps``, 1e-4); they are not recomputed under the
        calibrated ranges.
    sigma_range, eps_range : tuple of float
        The crowd's uniform distributions ``U[low, high]``, fitted by marginal likelihood and
        calibrated (Section 4.1.1's ranges, estimated).
    log_likelihood : float
        Log-likelihood of the votes, every voter at the best point of the
        ``(sigma^*, eps)`` grid (:mod:`ranking.crowd_grid`); it does not depend on the ranges.
    relatedness : numpy.ndarray of float64, shape (n_items,)
        ``a_i`` assigned to every item: the reference distribution at its rank quantile in the
        estimate (not a measurement of the item).
    reference : str
        Name of the reference distribution (``"array"`` for given similarities).
    voter_names : tuple of str
        Names of ``voters`` when the caller gave them, else empty.
    """

    voters: IntArray
    votes: IntArray
    sigma_posterior: FloatArray
    eps_posterior: FloatArray
    sigma_range: tuple[float, float]
    eps_range: tuple[float, float]
    log_likelihood: float
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

    def summary(self) -> dict[str, Any]:
        """JSON-ready figures: ``sigma_range``, ``eps_range``, ``sigma_mean``, ``eps_mean``,
        ``quantiles`` (:meth:`quantiles`), ``reference``, ``voters`` and ``votes`` (counts)."""
        return {
            "sigma_range": list(self.sigma_range),
            "eps_range": list(self.eps_range),
            "sigma_mean": self.sigma_mean,
            "eps_mean": self.eps_mean,
            "quantiles": self.quantiles(),
            "reference": self.reference,
            "voters": int(self.voters.size),
            "votes": int(self.votes.sum()),
        }

    def crowd_model(self, *, source: str = "") -> CrowdModel:
        """The fitted crowd as a :class:`ranking.CrowdModel` (what a crowd file holds); its
        profile is :attr:`relatedness`, largest first."""
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
            log_likelihood=self.log_likelihood,
            source=source,
        )


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


def _placed(
    score: FloatArray, reference: str | npt.ArrayLike, groups: IntArray | None
) -> FloatArray:
    """Every item's reference relatedness at its rank: in the whole study, or within its group
    (a target study: each target its own draw of the distribution, as the simulator draws it)."""
    if groups is None:
        return _rank_relatedness(score, reference_relatedness(reference, score.size))
    a = np.empty(score.size)
    median = None
    for members in group_members(groups):
        if members.size == 0:
            continue
        if members.size == 1:  # nothing to order: the distribution's median
            if median is None:
                median = float(np.median(reference_relatedness(reference, _MEDIAN_QUANTILES)))
            a[members] = median
            continue
        profile = reference_relatedness(reference, members.size)
        a[members] = _rank_relatedness(score[members], profile)
    return a


def _rank_relatedness(score: FloatArray, profile: FloatArray) -> FloatArray:
    """The reference relatedness at every item's rank (mid-ranks for ties, NaN ranked last)."""
    n = score.size
    filled = np.where(np.isfinite(score), score, -np.inf)
    rank = rankdata(-filled, method="average")  # 1 = highest estimate
    return np.minimum(np.interp(rank - 1.0, np.arange(n), profile), _MAX_RELATEDNESS)


def _clipped(ranges: FloatArray) -> FloatArray:
    """``[sigma_low, sigma_high, eps_low, eps_high]`` kept inside the grid, low <= high."""
    s_low = float(np.clip(ranges[0], SIGMA_GRID[0], SIGMA_GRID[-1]))
    e_low = float(np.clip(ranges[2], EPS_GRID[0], EPS_GRID[-1]))
    s_high = float(np.clip(ranges[1], s_low, SIGMA_GRID[-1]))
    e_high = float(np.clip(ranges[3], e_low, EPS_GRID[-1]))
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
    groups: npt.ArrayLike | None = None,
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
    (1e-4-0.5); the crowd's ranges ``U[sigma_low, sigma_high]`` and ``U[eps_low, eps_high]``
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
    estimate : array_like of float, shape (n_items,), or None
        The current score of every item, higher = more related (the study's ybar or
        Bradley-Terry strength); only its order is used. None: a pooled Bradley-Terry fit of
        these votes, whose order inflates ``sigma^*`` less than ybar's (noisier) order does
        (docs/science.md).
    rng : numpy.random.Generator
        Draws the calibration's simulated votes.
    reference : {"exponential", "power_law", "embedding", "csv:PATH"} or array_like, optional
        Relatedness distribution the items are placed on (Section 4.1.1's distributions, a
        CSV file's ``similarity`` column, or similarities in [-1, 1] of any number; resampled
        to ``n_items`` by quantile, :func:`ranking.reference_relatedness`).
    ties : {"half", "drop"}, optional
        A tie counts as half a choice each way (footnote 4), or is left out.
    voter_names : sequence of str, optional
        Names of the voter ids (``voter`` indexes into it).
    calibration : int, optional
        Simulated replicas of the study averaged by the bias correction: the comparisons are
        voted again by the fitted crowd (:class:`ranking.SimulatedCrowd`), ordered by
        Bradley-Terry and fitted, and the ranges are moved back by the mean shift (one
        parametric-bootstrap step; the voters' posterior means are mapped to match, see
        :class:`CrowdFit`). 0 turns it off.
    groups : array_like of int, shape (n_items,), optional
        A target study's target of every item: the items of each target are placed on the
        ``reference`` distribution by their rank within the target (each target its own draw,
        as :func:`ranking.simulation.target_similarities` draws them), not across targets,
        whose scores are not comparable.

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
    group = None if groups is None else np.asarray(groups, dtype=np.int64)
    if group is not None and group.shape != (n,):
        raise ValueError(f"groups must have shape ({n},), got {group.shape}")
    if score is None:
        score = bradley_terry(n, pair_ids, scores)
    a = _placed(score, reference, group)
    voters, index = np.unique(who, return_inverse=True)
    index = index.astype(np.int64)
    fitted = fit_voters(vote_rows(pair_ids, scores, index, voters.size), a)
    sigma_range, eps_range = fitted.sigma_range, fitted.eps_range
    sigma_post, eps_post = fitted.sigma_posterior, fitted.eps_posterior
    if replicas:
        # One step of a parametric-bootstrap bias correction: vote again with the fitted
        # crowd, fit that, and move the ranges back by the mean shift (docs/science.md).
        observed = np.array([*sigma_range, *eps_range])
        refits = []
        for _ in range(replicas):
            crowd = SimulatedCrowd(
                a, voters.size, gen, sigma_range=sigma_range, eps_range=eps_range
            )
            simulated = crowd.answer(pair_ids, index)
            again = _placed(bradley_terry(n, pair_ids, simulated), reference, group)
            refit = fit_voters(vote_rows(pair_ids, simulated, index, voters.size), again)
            refits.append([*refit.sigma_range, *refit.eps_range])
        current = _clipped(2.0 * observed - np.mean(refits, axis=0))
        sigma_post = _stretch(sigma_post, sigma_range, current[:2], SIGMA_GRID[0])
        eps_post = _stretch(eps_post, eps_range, current[2:], EPS_GRID[0])
        sigma_range = float(current[0]), float(current[1])
        eps_range = float(current[2]), float(current[3])
    names = () if voter_names is None else tuple(str(voter_names[v]) for v in voters.tolist())
    return CrowdFit(
        voters=voters,
        votes=np.bincount(index, minlength=voters.size).astype(np.int64),
        sigma_posterior=sigma_post,
        eps_posterior=eps_post,
        sigma_range=sigma_range,
        eps_range=eps_range,
        log_likelihood=fitted.log_likelihood,
        relatedness=a,
        reference=reference if isinstance(reference, str) else "array",
        voter_names=names,
    )
