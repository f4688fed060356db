"""Agreement of a model with the crowd's raw votes, the pairwise view of Avraham & Goldberg.

Instead of comparing the model's ranking with the study's final ranking, ask how often the
model orders the two items of a vote as the voter did. Votes with a tie are left out (the
voter ordered nothing). A vote on an item the model did not score is left out too and
counted as ``unscored``; a model tie counts half. The certainty-weighted agreement weighs
every vote by ``|2p - 1|``, where ``p`` is the pooled Bradley-Terry probability (all votes
of the study, :func:`ranking.bradley_terry`) that the left item beats the right one: votes
on pairs the crowd as a whole is sure about count fully, coin flips hardly at all.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.special import expit

from .._validation import FloatArray
from ..ballots.replay import StudyVotes
from ..protocol.bradley_terry import DEFAULT_BT_ALPHA, bradley_terry

__all__ = ["crowd_certainty", "vote_agreement", "vote_outcomes"]


def crowd_certainty(votes: StudyVotes, *, bt_alpha: float = DEFAULT_BT_ALPHA) -> FloatArray:
    """``|2p - 1|`` of every vote, ``p`` the pooled Bradley-Terry probability left beats right.

    NaN where an item has no Bradley-Terry strength (never compared).
    """
    strength = bradley_terry(votes.n_items, votes.pairs, votes.first_score, alpha=bt_alpha)
    p = expit(strength[votes.pairs[:, 0]] - strength[votes.pairs[:, 1]])
    return np.abs(2.0 * p - 1.0)


def vote_outcomes(votes: StudyVotes, scores: npt.ArrayLike) -> FloatArray:
    """Per vote: 1.0 the model orders the pair as the voter, 0.0 the other way, 0.5 model
    tie, NaN left out (a tie vote, or an item without a model score)."""
    values = np.asarray(scores, dtype=np.float64)
    if values.shape != (votes.n_items,):
        raise ValueError(f"scores must have one entry per item ({votes.n_items})")
    difference = values[votes.pairs[:, 0]] - values[votes.pairs[:, 1]]
    voter_left = votes.first_score == 1.0
    outcome = np.where(difference == 0.0, 0.5, ((difference > 0.0) == voter_left) * 1.0)
    outcome[(votes.first_score == 0.5) | np.isnan(difference)] = np.nan
    return outcome


def vote_agreement(
    votes: StudyVotes,
    scores: npt.ArrayLike,
    *,
    certainty: FloatArray | None = None,
    bt_alpha: float = DEFAULT_BT_ALPHA,
) -> dict[str, Any]:
    """Share of votes the model agrees with, plain and certainty-weighted, overall and per ballot.

    Parameters
    ----------
    votes : StudyVotes
    scores : array_like of float, shape (n_items,)
        The model's score of every item (higher = more related; NaN = no score).
    certainty : numpy.ndarray, optional
        :func:`crowd_certainty` of the votes, when already computed (it is one pooled fit).
    bt_alpha : float, optional
        Regulariser of the Bradley-Terry fit.

    Returns
    -------
    dict
        ``agreement``, ``weighted_agreement``, ``votes`` (counted), ``tie_votes`` and
        ``unscored`` (left out), and ``ballots``: the same per ballot (``ballot`` 1-based).
    """
    outcome = vote_outcomes(votes, scores)
    weight = crowd_certainty(votes, bt_alpha=bt_alpha) if certainty is None else certainty
    counted = ~np.isnan(outcome)
    weight = np.where(counted, np.nan_to_num(weight, nan=0.0), 0.0)
    value = np.where(counted, outcome, 0.0)
    k = len(votes.ballot_items)
    per = {
        "n": np.bincount(votes.ballot, counted * 1.0, k),
        "agree": np.bincount(votes.ballot, value, k),
        "weight": np.bincount(votes.ballot, weight, k),
        "weighted": np.bincount(votes.ballot, weight * value, k),
        "ties": np.bincount(votes.ballot, (votes.first_score == 0.5) * 1.0, k),
        "all": np.bincount(votes.ballot, minlength=k) * 1.0,
    }

    def summary(sl: slice | int) -> dict[str, Any]:
        n = float(np.sum(per["n"][sl]))
        w = float(np.sum(per["weight"][sl]))
        ties = int(np.sum(per["ties"][sl]))
        return {
            "agreement": float(np.sum(per["agree"][sl])) / n if n else None,
            "weighted_agreement": float(np.sum(per["weighted"][sl])) / w if w else None,
            "votes": int(n),
            "tie_votes": ties,
            "unscored": int(np.sum(per["all"][sl])) - ties - int(n),
        }

    result = summary(slice(None))
    result["ballots"] = [{"ballot": b + 1, **summary(b)} for b in range(k)]
    return result
