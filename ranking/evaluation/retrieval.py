"""Per-token retrieval metrics in the style of EvalRank: MRR, Hits@k and nDCG@10.

Related-pair gold (a study's ranking, rated pairs): the top ``alpha`` share of every area's
items by gold rank are the related pairs. For each such pair ``(a, b)`` the model ranks all
other tokens of the area as partners of ``a``; the rank of ``b`` is recorded, and the same
with the roles swapped. Without areas the whole gold is one area.

Grouped gold (``query, candidate, score``): each query's candidates are ranked by the model;
the target is the candidate with the highest gold score (the best-ranked of several equal
ones), and nDCG@10 uses the gold scores, shifted so that the lowest in the file is 0, as
graded gains.

Target gold (a target study's ranking): per target, EvalRank's queries are the target and each of
its *positives* (the candidates of kind ``positive``; without kinds in the gold, the top
``alpha`` share of the target's candidates by gold rank, at least one); the rank of a positive
is its rank by the model's score among itself and the target's other candidates that are not
positives (the "filtered" rank of link prediction: another positive ranked above it is no
error, so a model that puts every positive first scores 1 with any number of positives). MRR
and Hits@k per target, and pooled over every target's positives (:func:`target_retrieval`).

Ties: a target's rank is ``1 + (others scored higher) + (others scored equal) / 2``, the
mean over random orders of the tied items; an item without a model score counts as scored
below every scored one. nDCG@10 gives tied items the mean gain of their tie group at every
position they span (tie-aware nDCG of McSherry & Najork).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from .._validation import FloatArray
from ..files.gold import GoldStandard
from ..files.model_scores import PairScorer
from ..protocol.scores import group_members

__all__ = ["HITS_AT", "MAX_PAIRS", "retrieval_metrics", "target_retrieval"]

HITS_AT: tuple[int, ...] = (1, 3, 10)
MAX_PAIRS = 20_000_000  # query-candidate scores computed at most (about 10 s of table look-ups)
_CHUNK_PAIRS = 1_000_000


def retrieval_metrics(
    gold: GoldStandard,
    scorer: PairScorer,
    item_scores: FloatArray,
    *,
    alpha: float = 0.1,
    max_pairs: int = MAX_PAIRS,
) -> dict[str, Any] | None:
    """MRR, Hits@1/3/10 (and nDCG@10 for grouped gold) of the model; None without queries.

    Parameters
    ----------
    gold : GoldStandard
    scorer : PairScorer
        Scores arbitrary token pairs (partners that are not gold items too).
    item_scores : numpy.ndarray
        The model's score of every gold item (grouped gold reads only these).
    alpha : float, optional
        Share of every area's items taken as related pairs (at least one per area).
    max_pairs : int, optional
        Query-candidate pairs scored at most; beyond, the result only says so (``skipped``).
    """
    if gold.format == "grouped":
        return _grouped(gold, item_scores)
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must lie in (0, 1], got {alpha}")
    plans = []
    needed = 0
    for members in gold.area_members.values():
        tokens = sorted({gold.token_a[i] for i in members} | {gold.token_b[i] for i in members})
        count = max(1, math.ceil(alpha * len(members)))
        top = sorted(members, key=lambda i: gold.ranks[i])[:count]
        pairs = [
            (q, t)
            for i in top
            if gold.token_a[i] != gold.token_b[i]  # a token is not its own partner
            for q, t in ((gold.token_a[i], gold.token_b[i]), (gold.token_b[i], gold.token_a[i]))
        ]
        plans.append((tokens, pairs))
        needed += len(pairs) * len(tokens)
    if needed > max_pairs:
        return {
            "alpha": alpha,
            "skipped": f"{needed:,} query-candidate pairs to score, more than {max_pairs:,}",
        }
    ranks = [
        rank
        for tokens, pairs in plans
        if pairs
        for rank in _area_ranks(scorer, tokens, pairs).tolist()
    ]
    if not ranks:
        return None
    return {"alpha": alpha, **_summary(np.asarray(ranks))}


def _area_ranks(scorer: PairScorer, tokens: list[str], pairs: list[tuple[str, str]]) -> FloatArray:
    """Rank of every pair's target among the area's tokens other than its query."""
    column = {t: i for i, t in enumerate(tokens)}
    size = len(tokens)
    out = np.empty(len(pairs))
    step = max(1, _CHUNK_PAIRS // size)
    for first in range(0, len(pairs), step):
        chunk = pairs[first : first + step]
        left = [q for q, _ in chunk for _ in range(size)]
        scores = np.asarray(scorer.score_pairs(left, tokens * len(chunk)), dtype=np.float64)
        scores = np.where(np.isnan(scores), -np.inf, scores).reshape(len(chunk), size)
        rows = np.arange(len(chunk))
        query = np.array([column[q] for q, _ in chunk])
        target = np.array([column[t] for _, t in chunk])
        mine = scores[rows, target][:, None]
        other = np.ones(scores.shape, dtype=bool)
        other[rows, query] = False
        other[rows, target] = False
        higher = np.sum((scores > mine) & other, axis=1)
        equal = np.sum((scores == mine) & other, axis=1)
        out[first : first + len(chunk)] = 1.0 + higher + equal / 2.0
    return out


def _rank_of(values: FloatArray, target: int) -> float:
    scored = np.where(np.isnan(values), -np.inf, values)
    mine = scored[target]
    higher = int(np.sum(scored > mine))
    equal = int(np.sum(scored == mine)) - 1
    return 1.0 + higher + equal / 2.0


def _summary(ranks: FloatArray) -> dict[str, Any]:
    result: dict[str, Any] = {"queries": int(ranks.size), "mrr": float(np.mean(1.0 / ranks))}
    for k in HITS_AT:
        result[f"hits@{k}"] = float(np.mean(ranks <= k))
    return result


def target_retrieval(
    gold: GoldStandard, item_scores: FloatArray, *, alpha: float = 0.1
) -> tuple[dict[str, Any] | None, dict[str, dict[str, Any]]]:
    """MRR and Hits@1/3/10 of a target gold, pooled and per target (module docstring).

    Returns
    -------
    pooled : dict or None
        Over every positive of every target: ``queries``, ``targets``, ``mrr``, ``hits@k`` and
        ``positives`` (``"kinds"``, or ``"top alpha"`` when the gold has no positives); None
        when no target has a positive.
    per_target : dict
        Target name to ``{"positives", "mrr", "hits@k"}`` for every target with a positive.
    """
    if gold.targets is None:
        raise ValueError("target retrieval needs a target gold")
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must lie in (0, 1], got {alpha}")
    by_kind = gold.kinds is not None and "positive" in gold.kinds
    groups = gold.groups
    assert groups is not None
    per_target: dict[str, dict[str, Any]] = {}
    pooled: list[float] = []
    for name, members in zip(gold.target_names, group_members(groups), strict=True):
        if by_kind:
            assert gold.kinds is not None
            positives = [i for i in members.tolist() if gold.kinds[i] == "positive"]
        else:
            count = max(1, math.ceil(alpha * members.size))
            positives = members[np.argsort(gold.ranks[members], kind="stable")[:count]].tolist()
        if not positives or members.size < 2:
            continue
        others = np.setdiff1d(members, positives)  # the filtered ranking: no other positive
        values = np.concatenate([[np.nan], item_scores[others]])
        ranks = []
        for i in positives:
            values[0] = item_scores[i]
            ranks.append(_rank_of(values, 0))
        per_target[name] = {"positives": len(positives), **_summary(np.asarray(ranks))}
        del per_target[name]["queries"]
        pooled.extend(ranks)
    if not pooled:
        return None, per_target
    summary = {
        **_summary(np.asarray(pooled)),
        "targets": len(per_target),
        "positives": "kinds" if by_kind else "top alpha",
        "alpha": None if by_kind else alpha,
    }
    return summary, per_target


def _grouped(gold: GoldStandard, item_scores: FloatArray) -> dict[str, Any] | None:
    if gold.scores is None:
        return None
    groups: dict[str, list[int]] = defaultdict(list)
    for index, query in enumerate(gold.token_a):
        groups[query].append(index)
    floor = float(np.min(gold.scores))
    ranks = []
    ndcg = []
    for members in groups.values():
        if len(members) < 2:
            continue
        rows = np.asarray(members)
        relevance = gold.scores[rows]
        model = item_scores[rows]
        best = np.flatnonzero(relevance == relevance.max())
        ranks.append(min(_rank_of(model, int(t)) for t in best))
        ndcg.append(_ndcg_at(model, relevance - floor, 10))
    if not ranks:
        return None
    result = _summary(np.asarray(ranks))
    finite = [v for v in ndcg if not math.isnan(v)]
    result["ndcg@10"] = float(np.mean(finite)) if finite else None
    return result


def _ndcg_at(model: FloatArray, gains: FloatArray, k: int) -> float:
    """Tie-aware nDCG@k: tied items share the mean gain of their group."""
    discount = 1.0 / np.log2(np.arange(2, gains.size + 2))
    ideal = float(np.sum(np.sort(gains)[::-1][:k] * discount[:k]))
    if ideal == 0.0:
        return math.nan
    scored = np.where(np.isnan(model), -np.inf, model)
    order = np.argsort(-scored, kind="stable")
    sorted_scores = scored[order]
    sorted_gains = gains[order]
    _, start, counts = np.unique(-sorted_scores, return_index=True, return_counts=True)
    shared = np.repeat(np.add.reduceat(sorted_gains, start) / counts, counts)
    return float(np.sum(shared[:k] * discount[:k])) / ideal
