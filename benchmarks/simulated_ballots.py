"""Shared by the benchmarks: answer a whole ballot at once, as a crowd would, by COPY.

The crowd mostly prefers the item of lower index (a ranking to recover), with 5% ties; each
comparison goes to one of the given voters. The ballot is left ``closing``, ready for its close.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def answer_ballot(
    ballot: Any,
    voter_ids: np.ndarray,
    rng: np.random.Generator,
    *,
    voter_of: Callable[[int], np.ndarray] | None = None,
    more_columns: Callable[[int], dict[str, Any]] | None = None,
) -> int:
    """Store a vote on every comparison of ``ballot``; returns how many.

    ``voter_of(n)`` picks the voter of each of ``n`` votes (default: in turn);
    ``more_columns(n)`` adds columns (``response_ms``, ``created_at``...).
    """
    from collector.models import Ballot, Comparison, Vote
    from collector.studies import bulk_sql

    comps = np.array(
        Comparison.objects.filter(ballot=ballot).values_list(
            "id", "item_left__index", "item_right__index", "item_left_id", "item_right_id"
        ),
        dtype=np.int64,
    ).reshape(-1, 5)
    n = len(comps)
    u = rng.random(n)
    better_left = comps[:, 1] < comps[:, 2]
    choice = np.where(u < 0.05, "tie", np.where((u < 0.85) == better_left, "left", "right"))
    voters = voter_of(n) if voter_of else voter_ids[np.arange(n) % voter_ids.size]
    bulk_sql.bulk_insert(
        Vote,
        {
            "comparison_id": comps[:, 0],
            "voter_id": voters,
            "choice": choice,
            "pair_low": comps[:, 3:5].min(axis=1),
            "pair_high": comps[:, 3:5].max(axis=1),
            **(more_columns(n) if more_columns else {}),
        },
        {"ballot_id": ballot.pk},
    )
    Comparison.objects.filter(ballot=ballot).update(status=Comparison.Status.ANSWERED)
    Ballot.objects.filter(id=ballot.pk).update(status=Ballot.Status.CLOSING)
    return n
