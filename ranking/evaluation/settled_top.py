"""Is the top settled? The probability that each current top item is truly in the top ``k``.

After ballot ``j`` of a study the current ranking sorts every item by its score (the study's
estimator, :func:`ranking.ballots.rescore` of the votes of ballots ``1..j``: the running mean of
rescaled Borda scores, Eqs. 1, 5 and 6, or the pooled Bradley-Terry fit). For a top ``k``
(10, 20, 50, the survivors of the last ballot, or any other), :func:`settled_top` estimates for
each of the current top ``k`` items the probability that it belongs to the true top ``k``, and
their sum, the expected overlap of the current top ``k`` with the true one.

The product's estimate (``method="deconvolved"``) draws the items' strengths from an
empirical-Bayes Bradley-Terry posterior fitted to every answered comparison of ballots
``1..j`` whose prior is estimated from the items themselves
(:func:`ranking.evaluation.strength_posterior.deconvolved_posterior`): the Gaussian-prior fit
of :func:`ranking.evaluation.strength_posterior.strength_posterior` (the Laplace approximation
``N(t_hat_i, 1 / H_ii)`` per item, the prior variance chosen by the marginal likelihood) gives
every item's likelihood, and a prior on a grid, moved from the Gaussian towards the
nonparametric maximum likelihood estimate by 20 EM steps, replaces the Gaussian; each item's
likelihood is first widened by its design effect
(:func:`ranking.evaluation.strength_posterior.voter_design_effect`: a voter's opinion of an item
is persistent, so the same voter's answers about it count for less than their number). An
item's probability is the share of draws with the item among the draw's ``k`` strongest (of its
target, in a target study).
The prior shrinks the current top items, picked for their high observed scores, towards the
rest (the winner's curse); an item an early ballot dropped has few comparisons, a wide
likelihood, and can come back in a draw; and the estimated prior has the short upper tail and
the plateau of near-equal top items the Gaussian lacks, which made the Gaussian-prior posterior
(``method="posterior"``) overconfident at ``k = 10`` and underconfident at ``k = 50`` (items
dropped early came back into the draws' top 50 three times as often as into the true one).
Measured on simulated studies (``python -m ranking.simulate calibrate``; docs/science.md,
"Calibration of the settled top, measured").

``method="bootstrap"`` is the plain voter bootstrap (as
:func:`ranking.evaluation.voter_bootstrap`: the voters of ballots ``1..j`` drawn with
replacement, every ballot keeping its items, the votes rescored): an item's share is the share
of resamples with the item in their top ``k``. It is overconfident at small ``k`` (measured:
docs/science.md, "Is the top settled?"), kept for comparison. Either share can be passed
through a calibration map (:func:`calibrated`, ``expit(slope * logit(p) + offset)``, Platt
scaling; the shipped map is the identity).

Cost: the posterior is one Bradley-Terry fit by sparse Newton steps (O(P) per step for P
answered comparisons, a few steps per round of the prior variance's fixed point) and
``resamples * n_items`` draws partially sorted per ``k``; the deconvolved prior adds 20 EM steps
on a 200-point grid over at most 20,000 items and draws by the grid's cumulative sums; the
bootstrap is ``resamples`` rescorings of the study's votes (:data:`MAX_RESAMPLE_VOTES` caps its
work).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray, check_generator, check_int
from ..ballots.replay import StudyVotes, rescore
from ..protocol.closing import ESTIMATORS, Estimator
from ..protocol.scores import ranks_from_scores
from .reliability import without_voters
from .strength_posterior import (
    DeconvolvedPosterior,
    StrengthPosterior,
    deconvolved_posterior,
    strength_posterior,
    voter_design_effect,
)

__all__ = [
    "DEFAULT_KS",
    "DEFAULT_METHOD",
    "DEFAULT_RESAMPLES",
    "INFLATION",
    "INTERVAL",
    "METHODS",
    "Method",
    "OFFSET",
    "SLOPE",
    "MAX_RESAMPLE_VOTES",
    "SETTLED",
    "SettledTop",
    "TopK",
    "resamples_for",
    "settled_top",
    "calibrated",
    "describe_top",
    "survivors",
    "votes_until",
]

DEFAULT_KS: tuple[int, ...] = (10, 20, 50)
DEFAULT_RESAMPLES = 200
SETTLED = 0.95  # every top item at least this probable: the top k is settled
INTERVAL = 0.9  # the central interval of the number right over the draws
# The calibration map of the bootstrap share (fitted: docs/science.md, "Is the top settled?").
SLOPE = 1.0
OFFSET = 0.0
Method = Literal["deconvolved", "posterior", "bootstrap"]
METHODS: tuple[Method, ...] = ("deconvolved", "posterior", "bootstrap")
DEFAULT_METHOD: Method = "deconvolved"
# The posterior's standard deviations are multiplied by this (1: the Laplace posterior as is).
INFLATION = 1.0
# Draws held in memory at once by the posterior method, in numbers (40 MB).
DRAW_CHUNK = 5_000_000
# Votes rescored over all resamples at most: 200 resamples of a 1,000,000-vote study.
MAX_RESAMPLE_VOTES = 200_000_000


def votes_until(votes: StudyVotes, after: int) -> StudyVotes:
    """The votes of ballots ``1..after`` with those ballots' items (the study as it was when
    ballot ``after`` closed)."""
    k = check_int(after, "after", minimum=1)
    if k > len(votes.ballot_items):
        raise ValueError(f"the study has {len(votes.ballot_items)} ballots, not {k}")
    if k == len(votes.ballot_items):
        return votes
    return votes.subset(votes.ballot < k, ballots=k)


def survivors(votes: StudyVotes, after: int) -> IntArray:
    """The survivors of ballot ``after`` per group (one entry without groups): the items of
    the next ballot, or of the last ballot when ``after`` is the last."""
    k = check_int(after, "after", minimum=1)
    count = len(votes.ballot_items)
    if k > count:
        raise ValueError(f"the study has {count} ballots, not {k}")
    items = votes.ballot_items[min(k, count - 1)]
    if votes.groups is None:
        return np.array([items.size], dtype=np.int64)
    n_groups = int(votes.groups.max()) + 1
    return np.bincount(votes.groups[items], minlength=n_groups).astype(np.int64)


def resamples_for(votes: StudyVotes, resamples: int = DEFAULT_RESAMPLES) -> int:
    """``resamples``, capped so that at most :data:`MAX_RESAMPLE_VOTES` votes are rescored
    (at least 50)."""
    wanted = check_int(resamples, "resamples", minimum=1)
    cap = max(50, MAX_RESAMPLE_VOTES // max(votes.n_votes, 1))
    return min(wanted, cap)


@dataclass(frozen=True, eq=False)
class TopK:
    """The current top ``k`` of one ranking (a study's, or one target's).

    Attributes
    ----------
    k : int
    group : int or None
        The target (group) of a target study; None for an area study.
    items : numpy.ndarray of int64, shape (k,)
        The current top ``k``, best first.
    probability : numpy.ndarray of float64, shape (k,)
        Each one's estimated probability of being in the true top ``k`` (calibrated).
    share : numpy.ndarray of float64, shape (k,)
        The share of posterior draws (or bootstrap resamples) with the item in their top
        ``k``, before the calibration map.
    threshold : float
        The probability every top item needs for the top to be settled.
    overlap : numpy.ndarray of int64, shape (k + 1,), optional
        ``overlap[j]``: the draws (or bootstrap resamples) whose ``k`` strongest hold ``j`` of
        the current top ``k``: the spread of the number right, whose central interval
        (:meth:`overlap_interval`) says how far one study may be from its expected number.
    """

    k: int
    group: int | None
    items: IntArray
    probability: FloatArray
    share: FloatArray
    threshold: float
    overlap: IntArray | None = None

    @property
    def expected_overlap(self) -> float:
        """Expected number of current top ``k`` items in the true top ``k``: the sum of the
        probabilities."""
        return float(self.probability.sum())

    def overlap_interval(self, level: float = INTERVAL) -> tuple[int, int] | None:
        """The equal-tailed ``level`` interval ``[low, high]`` of the number of the current top
        ``k`` in the true top ``k`` over the draws (:attr:`overlap`): at most ``(1 - level) / 2``
        of the draws below ``low`` and at most as many above ``high``, widened to hold its own
        estimate (:attr:`expected_overlap`, rounded outwards) when skewed draws or the
        calibration map would leave it out; None without the draws' counts."""
        if not 0.0 < level < 1.0:
            raise ValueError(f"level must lie in (0, 1), got {level!r}")
        if self.overlap is None or self.overlap.sum() == 0:
            return None
        tail = (1.0 - level) / 2.0
        cdf = np.cumsum(self.overlap) / self.overlap.sum()
        low = int(np.searchsorted(cdf, tail + 1e-9, side="right"))
        high = int(np.searchsorted(cdf, 1.0 - tail - 1e-9, side="left"))
        expected = self.expected_overlap
        low = min(low, int(np.floor(expected + 1e-9)))
        high = max(high, int(np.ceil(expected - 1e-9)))
        return low, min(high, self.k)

    @property
    def in_doubt(self) -> int:
        """Top items below the threshold."""
        return int(np.sum(self.probability < self.threshold))

    @property
    def settled(self) -> bool:
        return self.in_doubt == 0

    def describe(self) -> str:
        """The verdict in plain words (:func:`describe_top`)."""
        return describe_top(self.k, self.probability, self.threshold, self.overlap_interval())

    def to_dict(self) -> dict[str, object]:
        return {
            "k": self.k,
            "group": self.group,
            "items": self.items.tolist(),
            "probability": [round(float(p), 4) for p in self.probability],
            "expected_overlap": round(self.expected_overlap, 3),
            "overlap_90": None if (span := self.overlap_interval()) is None else list(span),
            "in_doubt": self.in_doubt,
            "settled": self.settled,
            "threshold": self.threshold,
            "text": self.describe(),
        }


def describe_top(
    k: int,
    probability: npt.ArrayLike,
    threshold: float,
    interval: Sequence[int] | None = None,
) -> str:
    """A top ``k``'s verdict in plain words: settled when every item's ``probability`` is at
    least ``threshold``, else how many are in doubt and the expected number right (with the
    draws' :data:`INTERVAL` ``interval`` of it, when given)."""
    p = np.asarray(probability, dtype=np.float64)
    share = f"{threshold:.0%}"
    doubt = int(np.sum(p < threshold))
    if doubt == 0:
        return (
            f"The top {k} is settled: every item in it is in the true top {k} "
            f"with probability at least {share}."
        )
    which = "item is" if doubt == 1 else "items are"
    spread = (
        ""
        if interval is None
        else f" ({interval[0]} to {interval[1]} in {INTERVAL:.0%} of the draws)"
    )
    return (
        f"The top {k} is not settled: {doubt} of its {k} {which} in doubt "
        f"(below {share}); about {p.sum():.1f} of the {k} are expected "
        f"to be in the true top {k}{spread}."
    )


@dataclass(frozen=True, eq=False)
class SettledTop:
    """:func:`settled_top`'s result.

    Attributes
    ----------
    after : int
        The ballot after which the figures hold.
    resamples : int
        Posterior draws, or bootstrap resamples (after the cap of :func:`resamples_for`).
    slope, offset : float
        The calibration map applied (:func:`calibrated`).
    tops : tuple of TopK
        One per ``k`` (and per target of a target study, targets in order), ``k`` in the order
        asked; a ``k`` not below a ranking's number of items is left out for it.
    """

    after: int
    resamples: int
    slope: float
    offset: float
    tops: tuple[TopK, ...]

    def top(self, k: int, group: int | None = None) -> TopK:
        """The entry of ``k`` (and ``group``)."""
        for entry in self.tops:
            if entry.k == k and entry.group == group:
                return entry
        raise KeyError(f"no top {k} for group {group}")

    def to_dict(self) -> dict[str, object]:
        return {
            "after": self.after,
            "resamples": self.resamples,
            "slope": self.slope,
            "offset": self.offset,
            "tops": [t.to_dict() for t in self.tops],
        }


def calibrated(share: npt.ArrayLike, resamples: int, slope: float = SLOPE,
               offset: float = OFFSET) -> FloatArray:  # fmt: skip
    """The product's probability from a plain bootstrap share (module docstring).

    ``expit(slope * logit(p) + offset)`` with ``p = (share * resamples + 1/2) / (resamples + 1)``
    (the share kept off 0 and 1). ``slope = 1, offset = 0`` is the plain share, so kept.
    """
    r = check_int(resamples, "resamples", minimum=1)
    values = np.asarray(share, dtype=np.float64)
    if slope == 1.0 and offset == 0.0:
        return values.copy()
    p = (values * r + 0.5) / (r + 1.0)
    logit = np.log(p) - np.log1p(-p)
    return 1.0 / (1.0 + np.exp(-(slope * logit + offset)))


def settled_top(
    votes: StudyVotes,
    rng: np.random.Generator,
    *,
    after: int | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    with_survivors: bool = True,
    resamples: int = DEFAULT_RESAMPLES,
    estimator: Estimator = "rescaled_borda",
    excluded: npt.ArrayLike | None = None,
    threshold: float = SETTLED,
    slope: float = SLOPE,
    offset: float = OFFSET,
    workers: int = 1,
    method: Method = DEFAULT_METHOD,
    inflation: float = INFLATION,
) -> SettledTop:
    """How settled the current top ``k`` is after ballot ``after`` (module docstring).

    Parameters
    ----------
    votes : StudyVotes
        The study's votes with every ballot's items (at least ballots ``1..after``).
    rng : numpy.random.Generator
        Breaks the current ranking's ties; the draws (bootstrap: resample ``r``) use a
        generator spawned from it after that (the same seed, the same figures, whatever
        ``workers``).
    after : int, optional
        The ballot just closed (default: the last of ``votes``).
    ks : sequence of int, optional
        The tops asked for; 0 or a ``k`` not below a ranking's items is left out.
    with_survivors : bool, optional
        Also the survivors of ballot ``after`` (:func:`survivors`), per target.
    resamples : int, optional
        Posterior draws; bootstrap resamples, capped by :func:`resamples_for`.
    estimator : {"rescaled_borda", "bradley_terry"}, optional
        The study's estimator.
    excluded : array_like of int, optional
        Voter indices whose votes are left out.
    threshold : float, optional
        Staff's probability for a settled top (:data:`SETTLED`).
    slope, offset : float, optional
        The calibration map of :func:`calibrated` (:data:`SLOPE`, :data:`OFFSET`: the fitted
        one; 1 and 0: the plain bootstrap).
    workers : int, optional
        Threads rescoring bootstrap resamples (numpy releases the GIL).
    method : {"deconvolved", "posterior", "bootstrap"}, optional
        The empirical-Bayes posterior with the deconvolved prior (the product's,
        :data:`DEFAULT_METHOD`), with the Gaussian prior, or the plain voter bootstrap.
    inflation : float, optional
        Multiplies the posterior's standard deviations (:data:`INFLATION`; with the
        deconvolved prior, the likelihoods').

    Returns
    -------
    SettledTop
    """
    gen = check_generator(rng)
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    if not 0.0 < float(threshold) <= 1.0:
        raise ValueError(f"threshold must lie in (0, 1], got {threshold!r}")
    if not (np.isfinite(slope) and slope > 0 and np.isfinite(offset)):
        raise ValueError(f"slope must be positive and offset finite, got {slope!r}, {offset!r}")
    threads = check_int(workers, "workers", minimum=1)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not (np.isfinite(inflation) and inflation > 0):
        raise ValueError(f"inflation must be positive, got {inflation!r}")
    last = len(votes.ballot_items) if after is None else check_int(after, "after", minimum=1)
    study = votes_until(without_voters(votes, excluded), last)
    if study.n_votes == 0:
        raise ValueError(f"no votes in ballots 1..{last}")
    count = (
        resamples_for(study, resamples)
        if method == "bootstrap"
        else check_int(resamples, "resamples", minimum=1)
    )
    wanted = [check_int(k, "k", minimum=0) for k in ks]
    point = rescore(study, estimator=estimator)
    groups = study.groups
    n_groups = 1 if groups is None else int(groups.max()) + 1
    members = (
        [np.arange(study.n_items)]
        if groups is None
        else [np.flatnonzero(groups == g) for g in range(n_groups)]
    )
    # The next ballot's items: of the whole study, not of the study cut at ballot ``last``.
    kept = survivors(votes, last) if with_survivors else np.zeros(n_groups, dtype=np.int64)
    plan: list[tuple[int, int, IntArray]] = []  # group, k, the current top k
    for g, ids in enumerate(members):
        ranks = ranks_from_scores(point[ids], gen)
        order = ids[np.argsort(ranks)]
        for k in sorted({*wanted, int(kept[g])}):
            if 0 < k < ids.size:
                plan.append((g, k, order[:k]))
    voters, voter_index = np.unique(study.voter, return_inverse=True)
    used = sorted({g for g, _, _ in plan})

    def one(child: np.random.Generator) -> list[npt.NDArray[np.bool_]]:  # each (k, 1)
        drawn = np.bincount(child.integers(0, voters.size, voters.size), minlength=voters.size)
        score = rescore(study, estimator=estimator, multiplicity=drawn[voter_index])
        rank_of = np.empty(study.n_items, dtype=np.int64)
        for g in used:
            rank_of[members[g]] = ranks_from_scores(score[members[g]], child)
        return [(rank_of[top] <= k)[:, None] for _, k, top in plan]

    hits = [np.zeros(k, dtype=np.int64) for _, k, _ in plan]
    overlaps = [np.zeros(k + 1, dtype=np.int64) for _, k, _ in plan]
    if method != "bootstrap":
        found = _posterior_hits(study, gen, count, inflation, plan, members, method)
        _add(hits, overlaps, found)
    elif threads == 1:
        _add(hits, overlaps, map(one, gen.spawn(count)))
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            _add(hits, overlaps, pool.map(one, gen.spawn(count)))
    tops = tuple(
        TopK(
            k,
            None if groups is None else g,
            top,
            calibrated(total / count, count, slope, offset),
            total / count,
            float(threshold),
            overlap,
        )
        for (g, k, top), total, overlap in zip(plan, hits, overlaps, strict=True)
    )
    return SettledTop(last, count, slope, offset, tops)


def _posterior_hits(
    study: StudyVotes,
    rng: np.random.Generator,
    count: int,
    inflation: float,
    plan: list[tuple[int, int, IntArray]],
    members: list[IntArray],
    method: Method,
) -> Iterable[list[npt.NDArray[np.bool_]]]:
    """Per chunk of posterior draws and planned top, whether each draw (column) has each top
    item (row) among its ``k`` strongest of its group."""
    gaussian = strength_posterior(study.n_items, study.pairs, study.first_score)
    child = rng.spawn(1)[0]
    posterior: StrengthPosterior | DeconvolvedPosterior = gaussian
    if method == "deconvolved":
        effect, _ = voter_design_effect(
            study.n_items, study.pairs, study.first_score, study.voter, gaussian.mean
        )
        posterior = deconvolved_posterior(gaussian, child, design_effect=effect)
    chunk = max(1, DRAW_CHUNK // study.n_items)
    for start in range(0, count, chunk):
        drawn = posterior.draw(child, min(chunk, count - start), inflation)
        found = []
        for g, k, top in plan:
            among = drawn if members[g].size == drawn.shape[0] else drawn[members[g]]
            kth = np.partition(among, among.shape[0] - k, axis=0)[among.shape[0] - k]
            found.append(drawn[top] >= kth[None, :])
        yield found


def _add(
    hits: list[IntArray],
    overlaps: list[IntArray],
    results: Iterable[Sequence[npt.NDArray[np.bool_]]],
) -> None:
    """Adds each planned top's ``(k, draws)`` membership to its items' counts (``hits``) and
    the draws' numbers of its items to its histogram (``overlaps``)."""
    for inside in results:
        for total, spread, found in zip(hits, overlaps, inside, strict=True):
            total += found.sum(axis=1)
            spread += np.bincount(found.sum(axis=0), minlength=spread.size)
