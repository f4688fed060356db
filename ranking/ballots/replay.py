"""A study's answered comparisons with the items of every ballot, and rescoring them.

:func:`rescore` replays the ballots through the ballot driver's scoring
(:class:`ranking.ballots.BallotScoring`, what the web application's close runs), keeping every
ballot's items as they were: the voter bootstrap resamples voters and rescores.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray, check_int
from ..protocol.closing import ESTIMATORS, Estimator, StudyState
from .driver import BallotScoring

__all__ = ["StudyVotes", "rescore"]


@dataclass(frozen=True, eq=False)
class StudyVotes:
    """Answered comparisons of a study, with the items of every ballot.

    Items are positions ``0..n_items-1`` in the gold ranking's order (not the study's ids).

    Attributes
    ----------
    n_items : int
    ballot : numpy.ndarray of int64, shape (P,)
        0-based ballot of every vote (ballot number minus one).
    pairs : numpy.ndarray of int64, shape (P, 2)
        Left and right item of every vote.
    first_score : numpy.ndarray of float64, shape (P,)
        1.0 left chosen, 0.0 right chosen, 0.5 tie.
    voter : numpy.ndarray of int64, shape (P,)
        Voter of every vote, ``0..n_voters-1``.
    ballot_items : tuple of numpy.ndarray of int64
        Items of every ballot, as the study had them.
    voter_names : tuple of str
        The export's pseudonyms, by voter index (empty for simulated studies).
    groups : numpy.ndarray of int64, shape (n_items,), or None
        The target of every item in a target study (its comparisons never cross targets).
    """

    n_items: int
    ballot: IntArray
    pairs: IntArray
    first_score: FloatArray
    voter: IntArray
    ballot_items: tuple[IntArray, ...]
    voter_names: tuple[str, ...] = ()
    groups: IntArray | None = None
    _by_ballot: tuple[IntArray, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n = check_int(self.n_items, "n_items", minimum=2)
        p = self.ballot.shape[0]
        if self.pairs.shape != (p, 2) or self.first_score.shape != (p,) or self.voter.shape != (p,):
            raise ValueError("ballot, pairs, first_score and voter must have one entry per vote")
        if p and (self.pairs.min() < 0 or self.pairs.max() >= n):
            raise ValueError(f"votes must compare items 0..{n - 1}")
        k = len(self.ballot_items)
        if k < 1 or (p and (self.ballot.min() < 0 or self.ballot.max() >= k)):
            raise ValueError("every vote must belong to one of the ballots")
        order = np.argsort(self.ballot, kind="stable")
        bounds = np.searchsorted(self.ballot[order], np.arange(k + 1))
        slices = tuple(order[bounds[i] : bounds[i + 1]] for i in range(k))
        for number, (items, votes) in enumerate(zip(self.ballot_items, slices, strict=True), 1):
            inside = np.zeros(n, dtype=bool)
            inside[items] = True
            if not np.all(inside[self.pairs[votes]]):
                raise ValueError(f"ballot {number} has votes on items that were not in it")
        object.__setattr__(self, "_by_ballot", slices)

    @property
    def n_voters(self) -> int:
        return int(self.voter.max()) + 1 if self.voter.size else 0

    @property
    def n_votes(self) -> int:
        return int(self.ballot.shape[0])

    def votes_of_ballot(self, index: int) -> IntArray:
        """Indices of the votes of ballot ``index`` (0-based)."""
        return self._by_ballot[index]

    def subset(self, keep: npt.ArrayLike, ballots: int | None = None) -> StudyVotes:
        """The votes where ``keep`` is true, with the first ``ballots`` ballots' items (default:
        every ballot's, each keeping its items as they were)."""
        mask = np.asarray(keep, dtype=bool)
        return StudyVotes(
            n_items=self.n_items,
            ballot=self.ballot[mask],
            pairs=self.pairs[mask],
            first_score=self.first_score[mask],
            voter=self.voter[mask],
            ballot_items=self.ballot_items if ballots is None else self.ballot_items[:ballots],
            voter_names=self.voter_names,
            groups=self.groups,
        )


def rescore(
    votes: StudyVotes,
    *,
    estimator: Estimator = "rescaled_borda",
    multiplicity: npt.ArrayLike | None = None,
) -> FloatArray:
    """Final score of every item, the ballots replayed through the driver's scoring.

    Every ballot keeps the items it had; its votes are the study's (each repeated
    ``multiplicity[v]`` times when given, 0 dropping it: a voter bootstrap). The rescaled
    Borda estimator scores the ballots one by one (Eqs. 1, 5, 6, per target in a target
    study); Bradley-Terry, whose final score pools all comparisons, scores only the last ballot
    on a state holding the earlier ballots' comparisons (one fit, not one per ballot).

    Returns
    -------
    numpy.ndarray of float64, shape (n_items,)
        The score the final ranking sorts by (ybar or Bradley-Terry strength); NaN for an
        item never scored.
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    repeat = None if multiplicity is None else np.asarray(multiplicity, dtype=np.int64)
    chosen = []
    for k in range(len(votes.ballot_items)):
        index = votes.votes_of_ballot(k)
        if repeat is not None:
            index = np.repeat(index, repeat[index])
        chosen.append(index)
    n = votes.n_items
    scoring = BallotScoring(n, groups=votes.groups, estimator=estimator)
    last = len(votes.ballot_items) - 1
    if estimator == "bradley_terry":
        earlier = np.concatenate(chosen[:last]) if last else np.empty(0, dtype=np.int64)
        state = StudyState(
            n_items=n,
            ybar=np.full(n, np.nan),
            ballots_closed=last,
            pairs=votes.pairs[earlier],
            first_score=votes.first_score[earlier],
        )
        _, outcome = scoring.score(
            state,
            votes.ballot_items[last],
            votes.pairs[chosen[last]],
            votes.first_score[chosen[last]],
        )
        return outcome.score
    state = StudyState.new(n)
    score = np.full(n, np.nan)
    for k, index in enumerate(chosen):
        # Only ybar is read back: the pooled pairs, kept for Bradley-Terry, are not needed.
        state = StudyState(n_items=n, ybar=state.ybar, ballots_closed=state.ballots_closed)
        state, outcome = scoring.score(
            state, votes.ballot_items[k], votes.pairs[index], votes.first_score[index]
        )
        score = outcome.score
    return score
