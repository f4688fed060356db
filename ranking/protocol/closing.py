"""Closing a ballot (Sections 2.5-2.6): the scores of Eqs. 1, 5, 6 and the paper's selection.

:class:`ranking.ballots.BallotDriver`, which the web application's close, the simulator and the
rescoring of stored votes all run, scores every ballot with :func:`score_ballot`; who goes on is
the design's :meth:`ranking.designs.Design.survivors`, by default the paper's selection
:func:`select_top`. In a target study every target is a *group*: the rescaling of Eq. 6 and the
selection run within each group.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from .._validation import (
    FloatArray,
    IntArray,
    check_comparisons,
    check_int,
    check_item_ids,
)
from .bradley_terry import DEFAULT_BT_ALPHA, bradley_terry
from .scores import counts_of_valid, group_slopes, ranks_from_scores, running_mean

__all__ = [
    "ESTIMATORS",
    "BallotOutcome",
    "Estimator",
    "StudyState",
    "check_groups",
    "final_ranking",
    "score_ballot",
    "select_top",
]

Estimator = Literal["rescaled_borda", "bradley_terry"]
ESTIMATORS: tuple[str, ...] = ("rescaled_borda", "bradley_terry")


def _no_pairs() -> IntArray:
    return np.empty((0, 2), dtype=np.int64)


def _no_scores() -> FloatArray:
    return np.empty(0, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class StudyState:
    """What the protocol remembers between ballots.

    Attributes
    ----------
    n_items : int
        Items of the study, with ids ``0..n_items-1``.
    ybar : numpy.ndarray of float64, shape (n_items,)
        Running mean of rescaled scores (Eq. 5) of every item; NaN until first scored. An
        item that left the pool keeps the value it had when it left.
    ballots_closed : int
        Ballots closed so far; the next ballot closed is number ``ballots_closed + 1``.
    pairs : numpy.ndarray of int64, shape (P, 2)
        Answered comparisons of all closed ballots (only the Bradley-Terry estimator
        reads them; a caller using ``rescaled_borda`` may leave them empty).
    first_score : numpy.ndarray of float64, shape (P,)
        Their outcomes: 1.0 first item won, 0.0 second won, 0.5 tie.
    strength : numpy.ndarray of float64 or None
        Latest Bradley-Terry strengths, used only to warm-start the next fit.
    """

    n_items: int
    ybar: FloatArray
    ballots_closed: int = 0
    pairs: IntArray = field(default_factory=_no_pairs)
    first_score: FloatArray = field(default_factory=_no_scores)
    strength: FloatArray | None = None

    def __post_init__(self) -> None:
        n = check_int(self.n_items, "n_items", minimum=2)
        check_int(self.ballots_closed, "ballots_closed", minimum=0)
        ybar = np.asarray(self.ybar, dtype=np.float64)
        if ybar.shape != (n,):
            raise ValueError(f"ybar must have shape ({n},), got {ybar.shape}")
        pairs, first_score = check_comparisons(n, self.pairs, self.first_score)
        object.__setattr__(self, "ybar", ybar)
        object.__setattr__(self, "pairs", pairs)
        object.__setattr__(self, "first_score", first_score)
        if self.strength is not None:
            strength = np.asarray(self.strength, dtype=np.float64)
            if strength.shape != (n,):
                raise ValueError(f"strength must have shape ({n},), got {strength.shape}")
            object.__setattr__(self, "strength", strength)

    @classmethod
    def new(cls, n_items: int) -> StudyState:
        """State of a study before its first ballot closes."""
        n = check_int(n_items, "n_items", minimum=2)
        return cls(n_items=n, ybar=np.full(n, np.nan))


@dataclass(frozen=True, eq=False)
class BallotOutcome:
    """Scores of one closed ballot; every array has one entry per study item.

    Items outside the ballot, and ballot items without an answered comparison, have
    ``x = y = NaN`` and zero counts; their ``ybar`` is unchanged.

    Attributes
    ----------
    ballot : int
        Number of the ballot just closed (1-based).
    x : Borda score of this ballot (Eq. 1).
    y : rescaled score of this ballot (Eq. 6; ``y = x`` for ballot 1).
    ybar : running mean after this ballot (Eq. 5).
    wins, ties, appearances : counts of this ballot's answered comparisons.
    strength : pooled Bradley-Terry log-strengths, or None for ``rescaled_borda``.
    score : the estimator's score of every item, used for selection and the final
        ranking (``ybar`` or ``strength``); NaN for items never scored.
    next_items : ids of the next ballot's items, best first within each group: set by the
        driver's close (:meth:`ranking.BallotDriver.close`), empty after the last ballot and
        from :func:`score_ballot`, which selects nothing.
    slopes : the rescaling slope ``b`` of Eq. 6 of every group (1.0 for ballot 1).
    """

    ballot: int
    x: FloatArray
    y: FloatArray
    ybar: FloatArray
    wins: IntArray
    ties: IntArray
    appearances: IntArray
    strength: FloatArray | None
    score: FloatArray
    next_items: IntArray
    slopes: FloatArray

    @property
    def slope(self) -> float:
        """The slope ``b`` of Eq. 6 of a study without groups (the first group's)."""
        return float(self.slopes[0])


def score_ballot(
    state: StudyState,
    items: npt.ArrayLike,
    pairs: npt.ArrayLike,
    first_score: npt.ArrayLike,
    *,
    estimator: Estimator = "rescaled_borda",
    lagged_running_mean: bool = False,
    bt_alpha: float = DEFAULT_BT_ALPHA,
    groups: npt.ArrayLike | None = None,
) -> tuple[StudyState, BallotOutcome]:
    """Score a closed ballot and update the study's state (who goes on is not chosen here).

    Ballot ``k = state.ballots_closed + 1``: Borda scores (Eq. 1), rescaled for ``k > 1``
    (Eq. 6), averaged into ``ybar`` (Eq. 5); with ``estimator="bradley_terry"`` a pooled
    Bradley-Terry fit over every answered comparison so far is the score instead. The next
    ballot's items are the design's choice (:meth:`ranking.designs.Design.survivors`, by
    default the best by this score, :func:`select_top`), made by the ballot driver.

    Unanswered comparisons (a ballot closed early) are simply absent from ``pairs``. A
    ballot item with no answered comparison gets ``x = y = NaN`` and keeps its previous
    ``ybar``; the rescaling slope is fitted on answered items that have a previous ``ybar``
    only. An item first scored at ballot ``k > 1`` starts with ``ybar = y``. Items never
    scored have a NaN score and rank after every scored item (in random order).

    Parameters
    ----------
    state : StudyState
        The study after ``k - 1`` ballots (``StudyState.new(n_items)`` before ballot 1).
    items : array_like of int
        Ids of the ballot's items.
    pairs : array_like of int, shape (P, 2)
        The ballot's answered comparisons (ids from ``items``).
    first_score : array_like of float, shape (P,)
        1.0 first item won, 0.0 second won, 0.5 tie.
    estimator : {"rescaled_borda", "bradley_terry"}, optional
        Score used for selection and final ranking (docs/science.md).
    lagged_running_mean : bool, optional
        Reproduce the authors' code: ``ybar^(k) = ((k-2) ybar^(k-1) + y^(k)) / (k-1)``.
    bt_alpha : float, optional
        Regulariser of :func:`~ranking.bradley_terry`.
    groups : array_like of int, shape (n_items,), optional
        Group of every item (``0..G-1``): each group is rescaled (Eq. 6) on its own.
        Comparisons never cross groups. Without it the study is one group.

    Returns
    -------
    new_state : StudyState
    outcome : BallotOutcome
        Its ``next_items`` is empty.
    """
    if not isinstance(state, StudyState):
        raise ValueError(f"state must be a StudyState, got {type(state).__name__}")
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    n = state.n_items
    ballot_items = check_item_ids(items)
    if ballot_items.size < 2:
        raise ValueError(f"a ballot needs at least two items, got {ballot_items.size}")
    if ballot_items.max() >= n:
        raise ValueError(f"items must be ids in [0, {n})")
    pair_ids, scores = check_comparisons(n, pairs, first_score)
    in_ballot = np.zeros(n, dtype=bool)
    in_ballot[ballot_items] = True
    if not np.all(in_ballot[pair_ids]):
        raise ValueError("every compared item must be one of the ballot's items")
    group, n_groups = check_groups(groups, n)
    if n_groups > 1 and np.any(group[pair_ids[:, 0]] != group[pair_ids[:, 1]]):
        raise ValueError("a comparison pairs items of two different groups")

    k = state.ballots_closed + 1
    wins, ties, appearances = counts_of_valid(n, pair_ids, scores)
    with np.errstate(invalid="ignore", divide="ignore"):
        x = (wins + 0.5 * ties) / appearances
    x[appearances == 0] = np.nan
    slopes = np.ones(n_groups) if k == 1 else group_slopes(x, state.ybar, group, n_groups)
    slope = slopes[group]
    y = 1.0 - slope + slope * x
    mean_k = max(k - 1, 1) if lagged_running_mean else k
    ybar = running_mean(state.ybar, y, mean_k)

    all_pairs = np.concatenate([state.pairs, pair_ids])
    all_scores = np.concatenate([state.first_score, scores])
    strength = None
    score = ybar
    if estimator == "bradley_terry":
        strength = bradley_terry(
            n, all_pairs, all_scores, alpha=bt_alpha, initial_strength=state.strength
        )
        score = strength

    new_state = _validated_state(
        n, ybar, k, all_pairs, all_scores, strength if strength is not None else state.strength
    )
    outcome = BallotOutcome(
        ballot=k,
        x=x,
        y=y,
        ybar=ybar,
        wins=wins,
        ties=ties,
        appearances=appearances,
        strength=strength,
        score=score,
        next_items=np.empty(0, dtype=np.int64),
        slopes=slopes,
    )
    return new_state, outcome


def check_groups(groups: npt.ArrayLike | None, n_items: int) -> tuple[IntArray, int]:
    """The group of every item (zeros without groups) and the number of groups."""
    if groups is None:
        return np.zeros(n_items, dtype=np.int64), 1
    group = np.asarray(groups)
    if group.shape != (n_items,) or not np.issubdtype(group.dtype, np.integer):
        raise ValueError(f"groups must be {n_items} integers, got shape {group.shape}")
    if n_items and group.min() < 0:
        raise ValueError("groups must be numbered from 0")
    return group.astype(np.int64, copy=False), int(group.max()) + 1 if n_items else 0


def select_top(
    ballot_items: npt.ArrayLike,
    by: npt.ArrayLike,
    n_next: npt.ArrayLike,
    rng: np.random.Generator,
    *,
    groups: npt.ArrayLike | None = None,
) -> IntArray:
    """The paper's selection: the ``n_next`` best items of a ballot by score (Section 2.5).

    Ties are broken at random with ``rng`` and NaN scores come last (:func:`ranks_from_scores`,
    one draw over the whole ballot). With ``groups`` the best ``n_next[g]`` of every group ``g``
    go on.

    Parameters
    ----------
    ballot_items : array_like of int
        The ballot's item ids.
    by : array_like of float, shape (n_items,)
        Score of every study item (``ybar``, a Bradley-Terry strength or ``x``).
    n_next : array_like of int, shape (n_groups,)
        How many items of each group go on.
    rng : numpy.random.Generator
    groups : array_like of int, shape (n_items,), optional

    Returns
    -------
    numpy.ndarray of int64
        The chosen ids, best first within each group, groups in order.
    """
    items = np.asarray(ballot_items, dtype=np.int64)
    scores = np.asarray(by, dtype=np.float64)
    counts = np.atleast_1d(np.asarray(n_next, dtype=np.int64))
    ranks = ranks_from_scores(scores[items], rng)
    ordered = items[np.argsort(ranks)]
    if groups is None:
        return ordered[: int(counts[0])]
    group = np.asarray(groups, dtype=np.int64)[ordered]
    by_group = np.argsort(group, kind="stable")
    grouped = ordered[by_group]
    sorted_group = group[by_group]
    starts = np.searchsorted(sorted_group, sorted_group, side="left")
    within = np.arange(grouped.size) - starts
    return grouped[within < counts[sorted_group]]


def _validated_state(
    n_items: int,
    ybar: FloatArray,
    ballots_closed: int,
    pairs: IntArray,
    first_score: FloatArray,
    strength: FloatArray | None,
) -> StudyState:
    """Build a StudyState from parts already checked, skipping O(P) re-validation."""
    state = object.__new__(StudyState)
    for name, value in (
        ("n_items", n_items),
        ("ybar", ybar),
        ("ballots_closed", ballots_closed),
        ("pairs", pairs),
        ("first_score", first_score),
        ("strength", strength),
    ):
        object.__setattr__(state, name, value)
    return state


def final_ranking(
    scores: BallotOutcome | npt.ArrayLike, rng: np.random.Generator
) -> tuple[IntArray, IntArray]:
    """Final ranking of all items of a study (Section 2.6: every item sorted by its score).

    Parameters
    ----------
    scores : BallotOutcome or array_like of float
        The last ballot's outcome (its ``score``) or any score vector.
    rng : numpy.random.Generator
        Breaks ties; NaN scores rank last.

    Returns
    -------
    order : numpy.ndarray of int64
        Item ids, best first.
    ranks : numpy.ndarray of int64
        ``ranks[i]`` is the rank of item ``i`` (1 = most related).
    """
    values = scores.score if isinstance(scores, BallotOutcome) else scores
    ranks = ranks_from_scores(values, rng)
    return np.argsort(ranks).astype(np.int64), ranks
