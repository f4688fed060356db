"""How each voter answered: speed, ties, sides, runs, and agreement with everyone else.

For a study's answered comparisons, :func:`voter_quality` gives every voter's number of votes,
median response time, tie rate, share of left answers, longest run of answers on the same side,
and agreement with the consensus: the share of their (non-tie) votes that a pooled
Bradley-Terry fit of *everyone else's* votes predicts (leave-one-voter-out, ties left out;
each voter's fit is one Newton step from the pooled fit, exact up to second order, so the
figures cost one fit and one dense inverse of its Hessian whatever the crowd's size).
Flags mark speeders (median response under a threshold), straight-liners (a run of the same
side at least so long) and low agreement. :func:`answer_patterns` gives the figures that need no
fit (votes, median response time, longest run) on their own, for a whole study at once, and
:func:`speed_flags` the flags they give. :func:`time_per_comparison` turns the patterns into the
time per comparison a study promises and projects with. :func:`position_bias` is the crowd's
share of left answers with its interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray, check_comparisons, check_int
from ..protocol.bradley_terry import DEFAULT_BT_ALPHA, bradley_terry

__all__ = [
    "MIN_AGREEMENT",
    "RUN_LENGTH",
    "SPEEDER_MS",
    "AnswerPatterns",
    "ComparisonTime",
    "VoterQuality",
    "answer_patterns",
    "position_bias",
    "speed_flags",
    "time_per_comparison",
    "voter_quality",
]

# Beyond this many compared items one pooled fit predicts everyone (leave-one-voter-out needs the
# inverse of the fit's Hessian, a dense matrix of this size squared).
LEAVE_ONE_OUT_MAX_ITEMS = 2000
# The flags' default thresholds (the staff's voter table starts from them).
SPEEDER_MS = 1500.0  # a median response under this flags a speeder
RUN_LENGTH = 15  # this many answers on the same side in a row flag a straight-liner
MIN_AGREEMENT = 0.6  # agreement under this (with 10 predictable votes) flags low agreement


@dataclass(frozen=True, eq=False)
class VoterQuality:
    """Per-voter figures, each an array over ``voters`` (the distinct voter ids, ascending).

    Attributes
    ----------
    voters : numpy.ndarray of int64
    votes : numpy.ndarray of int64
    median_ms : numpy.ndarray of float64
        NaN for a voter whose votes carry no response time.
    tie_rate, left_share : numpy.ndarray of float64
        Share of ties among all votes; share of left answers among non-tie votes (NaN: none).
    longest_run : numpy.ndarray of int64
        Most consecutive answers on the same side (left or right), in vote order.
    agreement : numpy.ndarray of float64
        Share of non-tie votes that the others' Bradley-Terry fit orders the same way (NaN:
        no such vote, or items nobody else compared).
    speeder, straight_liner, low_agreement : numpy.ndarray of bool
    leave_one_out : bool
        False when the study was too large (over ``LEAVE_ONE_OUT_MAX_ITEMS`` compared items) and
        one pooled fit predicted every voter.
    """

    voters: IntArray
    votes: IntArray
    median_ms: FloatArray
    tie_rate: FloatArray
    left_share: FloatArray
    longest_run: IntArray
    agreement: FloatArray
    speeder: npt.NDArray[np.bool_]
    straight_liner: npt.NDArray[np.bool_]
    low_agreement: npt.NDArray[np.bool_]
    leave_one_out: bool


@dataclass(frozen=True, eq=False)
class AnswerPatterns:
    """Per-voter figures that need no fit, each an array over ``voters`` (ascending ids).

    Attributes
    ----------
    voters : numpy.ndarray of int64
    votes : numpy.ndarray of int64
    median_ms : numpy.ndarray of float64
        NaN for a voter whose votes carry no response time.
    longest_run : numpy.ndarray of int64
        Most consecutive answers on the same side (left or right; a tie breaks a run), in vote
        order.
    """

    voters: IntArray
    votes: IntArray
    median_ms: FloatArray
    longest_run: IntArray


def answer_patterns(
    voter: npt.ArrayLike, first_score: npt.ArrayLike, response_ms: npt.ArrayLike | None = None
) -> AnswerPatterns:
    """Every voter's votes, median response time and longest same-side run, without a loop over
    voters or votes (a million votes take a fraction of a second).

    Parameters
    ----------
    voter : array_like of int, shape (P,)
        The voter of every vote, in the order the votes were cast.
    first_score : array_like of float, shape (P,)
        1.0 left chosen, 0.0 right, 0.5 tie.
    response_ms : array_like of float, shape (P,), optional
        NaN where unknown.

    Returns
    -------
    AnswerPatterns
    """
    scores = np.asarray(first_score, dtype=np.float64)
    who = np.asarray(voter, dtype=np.int64)
    times = (
        np.full(scores.size, np.nan)
        if response_ms is None
        else np.asarray(response_ms, dtype=np.float64)
    )
    if who.shape != scores.shape or times.shape != scores.shape or scores.ndim != 1:
        raise ValueError("voter, first_score and response_ms need one entry per vote")
    if not np.all((scores == 0.0) | (scores == 0.5) | (scores == 1.0)):
        raise ValueError("first_score must be 0.0, 0.5 or 1.0")
    voters, index = np.unique(who, return_inverse=True)
    k = voters.size
    # Medians: the known times sorted by voter, then by time; each voter's middle one (or two).
    known = np.isfinite(times)
    owner, known_times = index[known], times[known]
    ordered = known_times[np.lexsort((known_times, owner))]
    counts = np.bincount(owner, minlength=k)
    starts = np.cumsum(counts) - counts
    median_ms = np.full(k, np.nan)
    has = counts > 0
    low = starts[has] + (counts[has] - 1) // 2
    high = starts[has] + counts[has] // 2
    median_ms[has] = (ordered[low] + ordered[high]) / 2
    # Runs: each voter's votes in vote order; a run starts at a new voter or a new side.
    sides = np.where(scores == 0.5, 0, np.where(scores == 1.0, 1, -1))
    order = np.argsort(index, kind="stable")
    side, whose = sides[order], index[order]
    starts_run = np.ones(side.size, dtype=bool)
    starts_run[1:] = (side[1:] != side[:-1]) | (whose[1:] != whose[:-1])
    lengths = np.bincount(np.cumsum(starts_run) - 1)
    decided = side[starts_run] != 0
    longest = np.zeros(k, dtype=np.int64)
    np.maximum.at(longest, whose[starts_run][decided], lengths[decided])
    return AnswerPatterns(
        voters=voters,
        votes=np.bincount(index, minlength=k).astype(np.int64),
        median_ms=median_ms,
        longest_run=longest,
    )


def speed_flags(
    median_ms: npt.ArrayLike,
    longest_run: npt.ArrayLike,
    *,
    speeder_ms: float = SPEEDER_MS,
    run_length: int = RUN_LENGTH,
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """The flags that need no fit: speeders and straight-liners.

    Parameters
    ----------
    median_ms : array_like of float
        Each voter's median response time (NaN: none known, never a speeder).
    longest_run : array_like of int
        Each voter's most consecutive answers on the same side.
    speeder_ms : float, optional
        A median under this flags a speeder.
    run_length : int, optional
        A run at least this long flags a straight-liner.

    Returns
    -------
    speeder, straight_liner : numpy.ndarray of bool
    """
    median = np.asarray(median_ms, dtype=np.float64)
    runs = np.asarray(longest_run, dtype=np.int64)
    return np.isfinite(median) & (median < speeder_ms), runs >= run_length


@dataclass(frozen=True)
class ComparisonTime:
    """The time per comparison and where it comes from.

    Attributes
    ----------
    seconds : float
        What promises and projections use: ``measured_seconds``, at least the floor while too few
        voters are trusted (the floor alone when none is).
    measured_seconds : float or None
        The median, over trusted voters, of each one's median response time (None: no trusted
        voter).
    trusted_voters : int
        Voters with a known response time whose times count.
    left_out_voters : int
        Voters with a known response time left out: flagged or left out by the caller.
    """

    seconds: float
    measured_seconds: float | None
    trusted_voters: int
    left_out_voters: int


def time_per_comparison(
    median_ms: npt.ArrayLike,
    longest_run: npt.ArrayLike,
    left_out: npt.ArrayLike,
    *,
    floor_seconds: float,
    min_voters: int,
    speeder_ms: float = SPEEDER_MS,
    run_length: int = RUN_LENGTH,
) -> ComparisonTime:
    """The time per comparison, robust to any one voter: the median, over trusted voters, of each
    voter's median response time.

    A voter is trusted when their response time is known, the caller does not leave them out
    (``left_out``: e.g. excluded, or failed attention checks) and :func:`speed_flags` flags them
    neither as a speeder nor as a straight-liner. Each trusted voter counts once, however many
    votes they cast. Until ``min_voters`` voters are trusted the time is at least
    ``floor_seconds``: a few quick first voters never shrink it, slow ones may raise it.

    Parameters
    ----------
    median_ms : array_like of float, shape (V,)
        Each voter's median response time in milliseconds (NaN: none known).
    longest_run : array_like of int, shape (V,)
        Each voter's most consecutive answers on the same side.
    left_out : array_like of bool, shape (V,)
        Voters whose times do not count whatever they are.
    floor_seconds : float
        The least time per comparison while fewer than ``min_voters`` voters are trusted.
    min_voters : int
        Trusted voters from whom on the measured time counts as it is.
    speeder_ms : float, optional
        A median under this flags a speeder (:func:`speed_flags`).
    run_length : int, optional
        A run at least this long flags a straight-liner (:func:`speed_flags`).

    Returns
    -------
    ComparisonTime
    """
    median = np.asarray(median_ms, dtype=np.float64)
    skipped = np.asarray(left_out, dtype=bool)
    if median.ndim != 1 or np.shape(longest_run) != median.shape or skipped.shape != median.shape:
        raise ValueError("median_ms, longest_run and left_out need one entry per voter")
    speeder, straight_liner = speed_flags(
        median, longest_run, speeder_ms=speeder_ms, run_length=run_length
    )
    timed = np.isfinite(median)
    trusted = timed & ~(skipped | speeder | straight_liner)
    medians = median[trusted]
    measured = float(np.median(medians)) / 1000 if medians.size else None
    if measured is None:
        seconds = float(floor_seconds)
    elif medians.size < min_voters:
        seconds = max(float(floor_seconds), measured)
    else:
        seconds = measured
    return ComparisonTime(seconds, measured, int(trusted.sum()), int((timed & ~trusted).sum()))


def voter_quality(
    n_items: int,
    pairs: npt.ArrayLike,
    first_score: npt.ArrayLike,
    voter: npt.ArrayLike,
    response_ms: npt.ArrayLike | None = None,
    *,
    speeder_ms: float = SPEEDER_MS,
    run_length: int = RUN_LENGTH,
    min_agreement: float = MIN_AGREEMENT,
    alpha: float = DEFAULT_BT_ALPHA,
    consensus: npt.ArrayLike | None = None,
) -> VoterQuality:
    """Every voter's figures and flags (see the module docstring).

    Parameters
    ----------
    n_items : int
    pairs : array_like of int, shape (P, 2)
        Left and right item of every vote, in the order the votes were cast.
    first_score : array_like of float, shape (P,)
        1.0 left chosen, 0.0 right, 0.5 tie.
    voter : array_like of int, shape (P,)
    response_ms : array_like of float, shape (P,), optional
        NaN where unknown.
    speeder_ms : float, optional
        A voter whose median response is under this is flagged a speeder.
    run_length : int, optional
        A run of this many answers on the same side flags a straight-liner.
    min_agreement : float, optional
        Agreement under this (with at least 10 predictable votes) flags low agreement.
    alpha : float, optional
        Bradley-Terry regularisation, as :func:`ranking.bradley_terry`.
    consensus : array_like of bool, shape (P,), optional
        The votes the consensus fits may use (default: all). Votes left out (those of excluded
        voters, say) still get their voter's figures, measured against the others.

    Returns
    -------
    VoterQuality
    """
    n = check_int(n_items, "n_items", minimum=2)
    pair_ids, scores = check_comparisons(n, pairs, first_score)
    who = np.asarray(voter, dtype=np.int64)
    if who.shape != scores.shape:
        raise ValueError("voter must have one entry per vote")
    trusted = (
        np.ones(scores.size, dtype=bool) if consensus is None else np.asarray(consensus, dtype=bool)
    )
    if trusted.shape != scores.shape:
        raise ValueError("consensus must have one entry per vote")
    patterns = answer_patterns(who, scores, response_ms)
    voters, votes = patterns.voters, patterns.votes
    median_ms, longest = patterns.median_ms, patterns.longest_run
    index = np.searchsorted(voters, who)  # every vote's voter among ``voters``
    k = voters.size
    ties = scores == 0.5
    tie_rate = np.bincount(index, ties * 1.0, k) / np.maximum(votes, 1)
    decided = np.bincount(index, ~ties * 1.0, k)
    left = np.bincount(index, (scores == 1.0) * 1.0, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        left_share = np.where(decided > 0, left / decided, np.nan)
    pooled = bradley_terry(n, pair_ids[trusted], scores[trusted], alpha=alpha)
    compared = np.flatnonzero(np.isfinite(pooled))
    leave_one_out = compared.size <= LEAVE_ONE_OUT_MAX_ITEMS
    shift = (
        _left_out_shifts(pooled, compared, pair_ids, scores, trusted, index, k, alpha)
        if leave_one_out and k > 1
        else None
    )
    d = pooled[pair_ids[:, 0]] - pooled[pair_ids[:, 1]]
    if shift is not None:
        d = d + shift
    with np.errstate(invalid="ignore"):
        usable = ~ties & np.isfinite(d) & (d != 0)
    agreed = usable & ((d > 0) == (scores == 1.0))
    predictable = np.bincount(index, usable, k).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        agreement = np.where(predictable > 0, np.bincount(index, agreed, k) / predictable, np.nan)
    speeder, straight_liner = speed_flags(
        median_ms, longest, speeder_ms=speeder_ms, run_length=run_length
    )
    return VoterQuality(
        voters=voters,
        votes=votes,
        median_ms=median_ms,
        tie_rate=tie_rate,
        left_share=left_share,
        longest_run=longest,
        agreement=agreement,
        speeder=speeder,
        straight_liner=straight_liner,
        low_agreement=(predictable >= 10) & (agreement < min_agreement),
        leave_one_out=leave_one_out,
    )


def _left_out_shifts(
    pooled: FloatArray,
    compared: IntArray,
    pair_ids: IntArray,
    scores: FloatArray,
    trusted: npt.NDArray[np.bool_],
    index: IntArray,
    k: int,
    alpha: float,
) -> FloatArray:
    """Every vote's change of ``t_a - t_b`` when its voter's votes leave the pooled fit.

    One Newton step from the pooled optimum ``t`` on the fit without voter ``v``: with ``H`` the
    Hessian of the pooled negative log-likelihood (:func:`ranking.bradley_terry`'s), ``g`` the
    gradient of ``v``'s own terms (``sum_p (s_p - sigma(d_p)) (e_a - e_b)``) and ``A`` their
    curvature on the items ``S`` they compare, the left-out fit is ``t - H_v^-1 g`` with
    ``H_v = H - A``, and by Woodbury ``H_v^-1 g = H^-1[:, S] (I - A H^-1[S, S])^-1 g_S``: one
    dense inverse of ``H`` for the study, a small solve per voter. Items only ``v`` compared leave
    the fit (NaN), as they would leave a refit.
    """
    from scipy.linalg import lapack
    from scipy.special import expit, logsumexp

    size = compared.size
    local = np.full(pooled.size, -1, dtype=np.int64)
    local[compared] = np.arange(size)
    t = pooled[compared]
    params = t + np.log(size) - logsumexp(t)  # the fit's own parameters: mean exp(t) is 1
    first, second = local[pair_ids[trusted, 0]], local[pair_ids[trusted, 1]]
    p = expit(params[first] - params[second])
    weight, residual = p * (1.0 - p), scores[trusted] - p
    cells = size * size
    hessian = (
        np.bincount(first * size + first, weight, cells)
        + np.bincount(second * size + second, weight, cells)
        - np.bincount(first * size + second, weight, cells)
        - np.bincount(second * size + first, weight, cells)
    ).reshape(size, size)
    hessian[np.diag_indices(size)] += alpha * np.exp(params)
    factor, info = lapack.dpotrf(hessian, lower=True)  # positive definite: the regulariser
    inverse, info_inverse = lapack.dpotri(factor, lower=True)  # its lower triangle
    if info or info_inverse:
        raise np.linalg.LinAlgError("the Bradley-Terry Hessian is not positive definite")
    inverse = np.tril(inverse) + np.tril(inverse, -1).T
    counts = np.bincount(first, minlength=size) + np.bincount(second, minlength=size)
    owner = index[trusted]
    # Each voter's items S (their trusted votes' items): (voter, item) keys, sorted.
    keys, own = np.unique(
        np.concatenate([owner * size + first, owner * size + second]), return_counts=True
    )
    whose = keys // size
    n_items = np.bincount(whose, minlength=k)
    starts = np.cumsum(n_items) - n_items
    la, lb = local[pair_ids[:, 0]], local[pair_ids[:, 1]]
    known = (la >= 0) & (lb >= 0)  # an item no trusted vote compared has no strength anyway
    shift = np.zeros(pair_ids.shape[0])
    # Items only the vote's voter compared leave that voter's fit.
    for end in (la, lb):
        key = index * size + end
        at = np.minimum(np.searchsorted(keys, key), keys.size - 1)
        mine = np.where(keys[at] == key, own[at], 0)
        shift[known & (mine == counts[np.maximum(end, 0)])] = np.nan
    # Voters in groups of like size (items padded to a multiple of 8): batched small solves.
    width = 8 * np.maximum(1, -(-n_items // 8))
    for w in np.unique(width[n_items > 0]):
        group = np.flatnonzero((width == w) & (n_items > 0))
        slot = np.full(k, -1, dtype=np.int64)
        slot[group] = np.arange(group.size)
        columns = np.arange(w)
        padded = columns < n_items[group, None]
        items = keys[np.minimum(starts[group, None] + columns, keys.size - 1)] % size
        items[~padded] = 0
        block = inverse[items[:, :, None], items[:, None, :]] * (
            padded[:, :, None] & padded[:, None, :]
        )
        rows = np.flatnonzero(slot[owner] >= 0)
        at = slot[owner[rows]]
        pa = np.searchsorted(keys, owner[rows] * size + first[rows]) - starts[owner[rows]]
        pb = np.searchsorted(keys, owner[rows] * size + second[rows]) - starts[owner[rows]]
        cells = group.size * w * w
        curvature = (
            np.bincount(at * w * w + pa * w + pa, weight[rows], cells)
            + np.bincount(at * w * w + pb * w + pb, weight[rows], cells)
            - np.bincount(at * w * w + pa * w + pb, weight[rows], cells)
            - np.bincount(at * w * w + pb * w + pa, weight[rows], cells)
        ).reshape(group.size, w, w)
        g = (
            np.bincount(at * w + pa, residual[rows], group.size * w)
            - np.bincount(at * w + pb, residual[rows], group.size * w)
        ).reshape(group.size, w)
        y = np.linalg.solve(np.eye(w) - curvature @ block, g[:, :, None])[:, :, 0]
        votes = np.flatnonzero(known & (slot[index] >= 0) & np.isfinite(shift))
        at = slot[index[votes]]
        spread = inverse[la[votes, None], items[at]] - inverse[lb[votes, None], items[at]]
        shift[votes] = -np.einsum("ps,ps->p", spread, y[at])
    return shift


def position_bias(first_score: npt.ArrayLike, level: float = 0.95) -> dict[str, float | int]:
    """The crowd's share of left answers among non-tie votes, with its Wilson interval.

    0.5 means no position bias: left/right placement is randomised when a ballot is made.
    """
    from scipy.stats import binomtest

    scores = np.asarray(first_score, dtype=np.float64)
    decided = scores[scores != 0.5]
    n = int(decided.size)
    if n == 0:
        return {"n": 0, "left_share": float("nan"), "low": float("nan"), "high": float("nan")}
    left = int(np.sum(decided == 1.0))
    ci = binomtest(left, n).proportion_ci(confidence_level=level, method="wilson")
    return {"n": n, "left_share": left / n, "low": float(ci.low), "high": float(ci.high)}
