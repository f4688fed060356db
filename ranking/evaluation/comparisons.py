"""Avraham & Goldberg's binary comparisons of a target gold and their score of a model.

A binary comparison ``R>(w1, w2; wt)`` (their Section 4.1) is the share of annotators who found
candidate ``w1`` more related to target ``wt`` than candidate ``w2``; here, of the votes on the
unordered pair, a tie counting half to each: ``r = (votes_1 + ties / 2) / (votes_1 + votes_2 +
ties)``. With candidate kinds (Section 4.1's positives, distractors and randoms) every positive
``p`` over every distractor or random ``n`` of its target is a comparison with ``R>(p, n) = 1``,
whether the crowd compared them or not (a voted comparison of such a pair counts as that one).

Their score of a model (Section 4.2): for each comparison ``delta = 1`` when the model scores
``(wt, w1)`` above ``(wt, w2)``, else ``-1``; ``s = delta (2 R - 1)``; the score is
``sum max(s, 0) / sum |s|`` over all comparisons: 1 when the model agrees with the majority of
every comparison, 0 when it never does, each comparison weighted by how clear its majority is.
One departure, a model tie (equal scores): the text's ``delta = -1`` would depend on which
candidate is written first, so a tie earns half, ``|2 R - 1| / 2``, the mean over the two orders
(as ties count elsewhere in :mod:`ranking.evaluation`). A candidate without a model score leaves
its comparisons out (missing-score policy ``skip``) or is scored below every scored one
(``last``; two unscored candidates tie).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray
from ..ballots.replay import StudyVotes
from ..files.comparisons import BinaryComparisons
from ..files.gold import CANDIDATE_KINDS
from ..protocol.scores import group_members

__all__ = ["AG_TYPES", "ag_resampler", "ag_score", "comparisons_from_votes", "pair_counts"]

_POSITIVE = CANDIDATE_KINDS[0]
_NEGATIVE = CANDIDATE_KINDS[1:]  # distractor, random
_BOTH_POSITIVE = f"{_POSITIVE}-{_POSITIVE}"
_OTHER = "other"
# The comparison types of ``ag_types``; the voted ones are those the kinds do not replace.
AG_TYPES: tuple[str, ...] = (_BOTH_POSITIVE, *(f"{_POSITIVE}-{n}" for n in _NEGATIVE), _OTHER)
_VOTED_TYPES = (_BOTH_POSITIVE, _OTHER)


def _vote_pairs(pairs: IntArray, first_score: FloatArray) -> tuple[IntArray, IntArray, FloatArray]:
    """Every vote's unordered pair (lower item first), the pair's index among the distinct
    pairs, and the vote's score for the lower item (1 it won, 0 it lost, 0.5 tie)."""
    low = np.minimum(pairs[:, 0], pairs[:, 1])
    high = np.maximum(pairs[:, 0], pairs[:, 1])
    value = np.where(pairs[:, 0] == low, first_score, 1.0 - first_score)
    keys = np.column_stack([low, high])
    distinct, index = np.unique(keys, axis=0, return_inverse=True)
    return distinct.reshape(-1, 2), index.reshape(-1).astype(np.int64), value


def pair_counts(pairs: npt.ArrayLike, first_score: npt.ArrayLike) -> BinaryComparisons:
    """The binary comparisons of votes: one per unordered pair voted at least once, the lower
    item id first (``pairs`` are item ids, ``first_score`` 1.0 left won, 0.0 right, 0.5 tie)."""
    ids = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    scores = np.asarray(first_score, dtype=np.float64)
    if scores.shape != (ids.shape[0],):
        raise ValueError("first_score must have one entry per vote")
    distinct, index, value = _vote_pairs(ids, scores)
    c = distinct.shape[0]
    counts = np.column_stack(
        [
            np.bincount(index, weights=value == 1.0, minlength=c),
            np.bincount(index, weights=value == 0.0, minlength=c),
            np.bincount(index, weights=value == 0.5, minlength=c),
        ]
    ).astype(np.int64)
    total = counts.sum(axis=1)
    r = (counts[:, 0] + counts[:, 2] / 2.0) / np.maximum(total, 1)
    return BinaryComparisons(distinct[:, 0], distinct[:, 1], r, counts)


def comparisons_from_votes(votes: StudyVotes) -> BinaryComparisons:
    """The binary comparisons of a study's votes (:func:`pair_counts`)."""
    return pair_counts(votes.pairs, votes.first_score)


def _model_order(scores: FloatArray, missing: str) -> FloatArray:
    """Scores as compared: NaN stays NaN (``skip``) or is below every score (``last``)."""
    if missing not in ("skip", "last"):
        raise ValueError(f"missing must be 'skip' or 'last', got {missing!r}")
    return np.where(np.isnan(scores), -np.inf, scores) if missing == "last" else scores


def _preference(values: FloatArray, first: IntArray, second: IntArray) -> FloatArray:
    """1.0 the model scores ``first`` higher, 0.0 lower, 0.5 equal; NaN without a score."""
    a, b = values[first], values[second]
    out = np.where(a > b, 1.0, np.where(a < b, 0.0, 0.5))
    out[np.isnan(a) | np.isnan(b)] = np.nan
    return out


def _numerator_denominator(r: FloatArray, agree: FloatArray) -> tuple[float, float]:
    """``sum max(s, 0)`` and ``sum |s|`` of Section 4.2, a model tie earning half."""
    margin = 2.0 * r - 1.0
    gained = agree * np.maximum(margin, 0.0) + (1.0 - agree) * np.maximum(-margin, 0.0)
    return float(np.sum(gained)), float(np.sum(np.abs(margin)))


def _kinds_of(kinds: tuple[str, ...] | None, n: int) -> npt.NDArray[np.str_] | None:
    if kinds is None or _POSITIVE not in kinds:
        return None
    if len(kinds) != n:
        raise ValueError(f"kinds must have one entry per item ({n})")
    return np.asarray(kinds)


def _kind_pairs(
    values: FloatArray, kind: npt.NDArray[np.str_], groups: IntArray
) -> dict[str, tuple[float, int]]:
    """Every positive over every negative of its target, ``R = 1``: per negative kind, the
    numerator (1 per pair the model orders right, 0.5 per tie) and the number of pairs."""
    out = {}
    scored = ~np.isnan(values)
    members = [m for m in group_members(groups) if m.size]
    for negative in _NEGATIVE:
        numerator, count = 0.0, 0
        for mine in members:
            mine = mine[scored[mine]]
            positives = values[mine[kind[mine] == _POSITIVE]]
            others = np.sort(values[mine[kind[mine] == negative]])
            if positives.size == 0 or others.size == 0:
                continue
            below = np.searchsorted(others, positives, side="left")
            equal = np.searchsorted(others, positives, side="right") - below
            numerator += float(np.sum(below + 0.5 * equal))
            count += positives.size * others.size
        out[f"{_POSITIVE}-{negative}"] = (numerator, count)
    return out


def _types_of(kind: npt.NDArray[np.str_], first: IntArray, second: IntArray) -> npt.NDArray[Any]:
    a, b = kind[first], kind[second]
    types = np.full(first.size, _OTHER, dtype=object)
    types[(a == _POSITIVE) & (b == _POSITIVE)] = _BOTH_POSITIVE
    for negative in _NEGATIVE:
        types[((a == _POSITIVE) & (b == negative)) | ((b == _POSITIVE) & (a == negative))] = (
            f"{_POSITIVE}-{negative}"
        )
    return types


def _result(parts: dict[str, tuple[float, float, int]], with_types: bool) -> dict[str, Any]:
    numerator = sum(p[0] for p in parts.values())
    denominator = sum(p[1] for p in parts.values())
    result: dict[str, Any] = {
        "ag_score": numerator / denominator if denominator > 0 else None,
        "ag_comparisons": int(sum(p[2] for p in parts.values())),
    }
    if with_types:
        result["ag_types"] = {
            name: {
                "score": num / den if den > 0 else None,
                "comparisons": int(count),
            }
            for name, (num, den, count) in parts.items()
        }
    return result


def ag_score(
    comparisons: BinaryComparisons,
    scores: npt.ArrayLike,
    *,
    groups: npt.ArrayLike,
    kinds: tuple[str, ...] | None = None,
    missing: str = "skip",
) -> dict[str, Any]:
    """Avraham & Goldberg's Section 4.2 score of a model over ``comparisons`` (module docstring).

    Parameters
    ----------
    comparisons : BinaryComparisons
        Over the gold's items (positions).
    scores : array_like of float
        The model's score of every gold item (``sim(wt, w)``), NaN where it has none.
    groups : array_like of int
        The target of every item (:attr:`ranking.files.GoldStandard.groups`).
    kinds : tuple of str, optional
        Every candidate's kind: with positives, each positive over each distractor or random
        of its target is a comparison with ``R = 1`` (replacing a voted one).
    missing : {"skip", "last"}

    Returns
    -------
    dict
        ``ag_score`` (None when every comparison has ``R = 0.5``, or there is none),
        ``ag_comparisons`` (comparisons counted) and, with kinds, ``ag_types``: the score and
        count of each type of :data:`AG_TYPES` (``other``: voted pairs without a positive, or
        with a candidate of no kind).
    """
    values = _model_order(np.asarray(scores, dtype=np.float64), missing)
    group = np.asarray(groups, dtype=np.int64)
    kind = _kinds_of(kinds, values.size)
    agree = _preference(values, comparisons.first, comparisons.second)
    keep = ~np.isnan(agree)
    types = (
        np.full(comparisons.n, _OTHER, dtype=object)
        if kind is None
        else _types_of(kind, comparisons.first, comparisons.second)
    )
    parts: dict[str, tuple[float, float, int]] = {}
    for name in _VOTED_TYPES:
        chosen = keep & (types == name)
        num, den = _numerator_denominator(comparisons.r[chosen], agree[chosen])
        parts[name] = (num, den, int(chosen.sum()))
    if kind is not None:
        for name, (num, count) in _kind_pairs(values, kind, group).items():
            parts[name] = (num, float(count), count)
    return _result(parts, kind is not None)


def ag_resampler(
    votes: StudyVotes,
    scores: npt.ArrayLike,
    *,
    groups: npt.ArrayLike,
    kinds: tuple[str, ...] | None = None,
    missing: str = "skip",
) -> Callable[[IntArray], float]:
    """The A&G score of the model over the comparisons of ``votes`` as a function of every
    vote's multiplicity (a voter bootstrap's resample): ``f(ones)`` is :func:`ag_score` over
    :func:`comparisons_from_votes`. A pair whose votes are all dropped is not a comparison."""
    values = _model_order(np.asarray(scores, dtype=np.float64), missing)
    kind = _kinds_of(kinds, values.size)
    distinct, index, value = _vote_pairs(votes.pairs, votes.first_score)
    agree = _preference(values, distinct[:, 0], distinct[:, 1])
    counted = ~np.isnan(agree)
    fixed_num, fixed_den = 0.0, 0.0
    if kind is not None:
        voted = _types_of(kind, distinct[:, 0], distinct[:, 1])
        counted &= np.isin(voted, _VOTED_TYPES)
        for num, count in _kind_pairs(values, kind, np.asarray(groups, dtype=np.int64)).values():
            fixed_num, fixed_den = fixed_num + num, fixed_den + count
    c = distinct.shape[0]

    def score(multiplicity: IntArray) -> float:
        weight = np.asarray(multiplicity, dtype=np.float64)
        total = np.bincount(index, weights=weight, minlength=c)
        won = np.bincount(index, weights=weight * value, minlength=c)
        chosen = counted & (total > 0)
        r = won[chosen] / total[chosen]
        num, den = _numerator_denominator(r, agree[chosen])
        num, den = num + fixed_num, den + fixed_den
        return num / den if den > 0 else float("nan")

    return score
