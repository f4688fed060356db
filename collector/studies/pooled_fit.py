"""A finished study's pooled Bradley-Terry fit, stored with its items.

Fitting every vote of a 100,000-item study (two million votes) takes tens of seconds, too long
for a page; the close of the last ballot stores the fit instead (and an exclusion after the end
stores it again, in the background): every item's log-strength and a 95% Wald interval for the
best ``TOP`` items of the final ranking (of every target's ranking in a target study:
``rank_in_target`` up to ``TOP``), by :func:`ranking.protocol.strength_intervals`, one sparse
solve each. Votes of excluded voters are left out. The study's top-ranking figure reads them.
"""

from __future__ import annotations

import numpy as np

import ranking
from collector.models import Item
from collector.studies import bulk_sql

TOP = 30  # items of the final ranking that get an interval


def store_pooled_fit(study_id: int) -> None:
    """Fit and store the pooled log-strengths, and the intervals of the final top ``TOP``."""
    rows = bulk_sql.study_votes(study_id).trusted()
    item_ids = bulk_sql.item_ids_by_index(study_id)
    n = item_ids.size
    strength = np.full(n, np.nan)
    low, high = np.full(n, np.nan), np.full(n, np.nan)
    if rows.voter.size and n >= 2:
        strength = ranking.bradley_terry(n, rows.pairs, rows.first_score)
        ranked = Item.objects.filter(study_id=study_id, final_rank__isnull=False)
        if ranked.filter(rank_in_target__isnull=False).exists():  # a target study: per target
            chosen = ranked.filter(rank_in_target__lte=TOP).values_list("index", flat=True)
        else:
            chosen = ranked.order_by("final_rank").values_list("index", flat=True)[:TOP]
        top = np.array(list(chosen), dtype=np.int64)
        if top.size:
            low[top], high[top] = ranking.protocol.strength_intervals(
                n, rows.pairs, rows.first_score, strength, top
            )
    bulk_sql.update_items(
        study_id, item_ids, {"pooled_strength": strength, "pooled_low": low, "pooled_high": high}
    )
