"""A study's data files, as row iterators read in pages by key (never a whole table in memory).

- ranking: ``rank,item_id,area,token_a,token_b,score,last_ballot,appearances,wins,ties,x_1..x_K``
  (K ballots the study runs; ``x_k`` empty where the item was not in ballot k; ``score`` is ybar,
  or the Bradley-Terry strength; appearances, wins and ties are summed over the ballots); a
  target study's adds ``target,candidate,kind,rank_in_target`` (area and token_a are the
  target, token_b the candidate; ``rank_in_target`` 1 = the target's most related candidate);
- votes: ``ballot,comparison_id,item_left,item_right,choice,voter,created_at,response_ms,
  left_token_a,left_token_b,right_token_a,right_token_b,voter_excluded``
  (item ids are ``Item.index``, ranking's ids; voter is the pseudonym, never the participant id;
  ``voter_excluded`` is true for the votes an excluded voter gave in ballots closed before the
  exclusion, which stay but are left out of pooled estimates; attention checks are not votes);
- items: ``item_id,area,token_a,token_b``, at any time;
- ranking.jsonl: the ranking's rows as JSON objects (one a line, the CSV's columns as keys), with
  the tokens exact: the CSV files neutralise spreadsheet formulas (:mod:`collector.csv_cells`).

The CSV files, the staff downloads and the JSON API all read these iterators (through
:mod:`collector.exports.registry`). Each page is its own
query (``key > last key ORDER BY key LIMIT CHUNK``), not a server-side cursor: those do not outlive
a transaction behind PgBouncer in transaction pooling, and a client-side cursor over the whole
query would hold every row in memory at once. Memory stays at one page, direct or through
PgBouncer. Votes stored during a download are in it if their id comes after the current page.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any

from django.db.models import Case, F, Max, QuerySet, When

from collector.csv_cells import csv_lines
from collector.models import Item, Study, Vote
from collector.reports.tables import item_totals
from collector.studies.designs import ballots_run
from collector.studies.lifecycle import require_finished

VOTES_HEADER = [
    "ballot",
    "comparison_id",
    "item_left",
    "item_right",
    "choice",
    "voter",
    "created_at",
    "response_ms",
    "left_token_a",
    "left_token_b",
    "right_token_a",
    "right_token_b",
    "voter_excluded",
]
ITEMS_HEADER = ["item_id", "area", "token_a", "token_b"]
RANKING_FIXED = [
    "rank",
    "item_id",
    "area",
    "token_a",
    "token_b",
    "score",
    "last_ballot",
    "appearances",
    "wins",
    "ties",
]
RANKING_TARGET = ["target", "candidate", "kind", "rank_in_target"]
CHUNK = 2000  # rows per page (one query each)
GOLD_SCALE = 10.0  # the published gold's scores run from 0 to this


def gold_scaled(score: float, lo: float, hi: float) -> float:
    """A final score on the published gold's 0-10 scale: linear from ``lo`` (0) to ``hi`` (10);
    10 when every score is the same."""
    return GOLD_SCALE * (score - lo) / (hi - lo) if hi > lo else GOLD_SCALE


def ranking_header(study: Study) -> list[str]:
    xs = [f"x_{k}" for k in range(1, ballots_run(study) + 1)]
    return RANKING_FIXED + xs + (RANKING_TARGET if study.targets else [])


def ranking_rows(study: Study, *, after_rank: int = 0, limit: int | None = None) -> Iterator[list]:
    """Rows of the final ranking, best first. Raises :class:`NotFinished` (at the call)."""
    require_finished(study)
    xs = {
        f"x_{k}": Max(Case(When(scores__ballot__number=k, then=F("scores__x"))))
        for k in range(1, ballots_run(study) + 1)
    }
    query = _ranking_query(study, xs)
    return _pages(lambda after: query.filter(final_rank__gt=after), after_rank, limit)


def _ranking_query(study: Study, xs: dict[str, Any]) -> QuerySet[Any]:
    # A target study's target is its item's area (and token_a), its candidate token_b.
    targets = ("area__name", "token_b__text", "kind", "rank_in_target") if study.targets else ()
    return (
        Item.objects.filter(study=study)
        .annotate(**item_totals(), **xs)
        .order_by("final_rank")
        .values_list(
            "final_rank",
            "index",
            "area__name",
            "token_a__text",
            "token_b__text",
            "final_score",
            "last_ballot",
            "n_appearances",
            "n_wins",
            "n_ties",
            *xs,
            *targets,
        )  # fmt: skip
    )


def _pages(page: Callable[[int], QuerySet[Any]], after: int, limit: int | None) -> Iterator[list]:
    """The rows of ``page(key)`` (rows whose key, their first value, is above ``key``, in key
    order), at most ``limit``, fetched ``CHUNK`` at a time by keyset pagination."""
    left = limit
    while left is None or left > 0:
        size = CHUNK if left is None else min(CHUNK, left)
        rows = list(page(after)[:size])
        for row in rows:
            yield list(row)
        if len(rows) < size:
            return
        after = rows[-1][0]
        if left is not None:
            left -= len(rows)


def votes_rows(study: Study, *, after_id: int = 0, limit: int | None = None) -> Iterator[list]:
    """Every vote of the study, by ballot then vote order; ``after_id`` pages by vote id."""
    query = _votes_query(study)
    return _pages(lambda after: query.filter(id__gt=after), after_id, limit)


def _votes_query(study: Study) -> QuerySet[Any]:
    return (
        Vote.objects.filter(ballot__study=study)
        .order_by("id")
        .values_list(
            "id",
            "ballot__number",
            "comparison_id",
            "comparison__item_left__index",
            "comparison__item_right__index",
            "choice",
            "voter__pseudonym",
            "created_at",
            "response_ms",
            "comparison__item_left__token_a__text",
            "comparison__item_left__token_b__text",
            "comparison__item_right__token_a__text",
            "comparison__item_right__token_b__text",
            "voter__excluded_at",
        )  # fmt: skip
    )


def items_rows(study: Study) -> Iterator[list]:
    """Every item of the study in its order (any time: a study's items never change)."""
    # The paging key is index + 1, so that the first page starts above key 0.
    query = (
        Item.objects.filter(study=study)
        .order_by("index")
        .annotate(key=F("index") + 1)
        .values_list("key", "index", "area__name", "token_a__text", "token_b__text")
    )
    rows = _pages(lambda after: query.filter(index__gte=after), 0, None)
    return (row[1:] for row in rows)


def items_csv(study: Study) -> Iterator[str]:
    return csv_lines(ITEMS_HEADER, items_rows(study))


def vote_row_values(row: list) -> list:
    """A :func:`votes_rows` row as exported: without the paging key (the vote id), and with
    whether the voter was excluded instead of when."""
    return [*row[1:-1], row[-1] is not None]


def ranking_page(study: Study, after: int, limit: int) -> tuple[int, list[dict[str, Any]]]:
    """The API's page of the final ranking: the items ranked after ``after`` (``limit`` of them),
    keyed by the CSV's columns, and how many items there are. Raises :class:`NotFinished`."""
    rows = ranking_rows(study, after_rank=after, limit=limit)
    header = ranking_header(study)
    return study.items.count(), [dict(zip(header, row, strict=True)) for row in rows]


def votes_page(study: Study, after: int, limit: int) -> tuple[int, list[dict[str, Any]]]:
    """The API's page of votes: those whose id (``vote_id``) comes after ``after``, keyed by the
    CSV's columns, and how many votes the study has."""
    results = [
        {**dict(zip(VOTES_HEADER, vote_row_values(row), strict=True)), "vote_id": row[0]}
        for row in votes_rows(study, after_id=after, limit=limit)
    ]
    return Vote.objects.filter(ballot__study=study).count(), results


def ranking_csv(study: Study) -> Iterator[str]:
    rows = ranking_rows(study)  # raises NotFinished now, not half-way through a download
    return csv_lines(ranking_header(study), rows)


def ranking_jsonl(study: Study) -> Iterator[str]:
    """The final ranking as JSON Lines, for tools: one object per item, best first, with the
    ranking CSV's columns as keys and every token exactly as stored (the CSV writes a token
    that a spreadsheet would run behind a ``'``). Raises :class:`NotFinished` at the call."""
    header = ranking_header(study)
    rows = ranking_rows(study)
    return (_json_line(dict(zip(header, row, strict=True))) for row in rows)


def _json_line(record: dict[str, Any]) -> str:
    finite = {
        k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in record.items()
    }
    return json.dumps(finite, ensure_ascii=False, allow_nan=False) + "\n"


def votes_csv(study: Study) -> Iterator[str]:
    return csv_lines(VOTES_HEADER, (vote_row_values(r) for r in votes_rows(study)))
