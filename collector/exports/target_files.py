"""A target study's own exports: its binary comparisons, its gold grouped by target, and the
target design's part of the dataset card.

- comparisons: ``target,candidate_1,candidate_2,votes_1,votes_2,ties,r``, Avraham & Goldberg's
  binary comparisons ``R>(w1, w2; wt)``: one row per unordered pair of candidates voted at least
  once (over all ballots), ``r = (votes_1 + ties / 2) / (votes_1 + votes_2 + ties)`` the share of
  votes for ``candidate_1`` (the candidate first in the study's item order); votes of excluded
  voters are left out. At any time (the votes so far), as the votes export.
- gold grouped: ``query,candidate,score``, each target (query) with its candidates, best first,
  ``score`` the study's final score scaled linearly within the target to 0-10 (its lowest
  candidate 0, its highest 10): the grouped gold ``python -m ranking.evaluate --gold`` reads.

Both refuse an area study (:class:`NotATargetStudy`).
"""

from __future__ import annotations

from collections.abc import Iterator
from statistics import median
from typing import Any

import numpy as np
from django.db.models import Count

from collector.csv_cells import csv_lines
from collector.exports.study_files import CHUNK, gold_scaled
from collector.models import Item, Study
from collector.studies import bulk_sql
from collector.studies.lifecycle import require_finished
from ranking.evaluation import pair_counts
from ranking.files import CANDIDATE_KINDS, COMPARISONS_HEADER

GROUPED_HEADER = ["query", "candidate", "score"]


class NotATargetStudy(Exception):
    """An area study has no targets: no binary comparisons, no grouped gold."""


def require_targets(study: Study) -> None:
    """Raise :class:`NotATargetStudy` unless ``study`` is a target study."""
    if not study.targets:
        raise NotATargetStudy(
            f"study {study.slug} is an area study: binary comparisons and the grouped gold "
            "belong to target studies (created from a target,candidate list)"
        )


def _names(study: Study) -> tuple[list[str], list[str]]:
    """Target and candidate of every item, by ``Item.index``."""
    rows = list(
        Item.objects.filter(study=study)
        .order_by("index")
        .values_list("area__name", "token_b__text")
    )
    return [r[0] for r in rows], [r[1] for r in rows]


def comparisons_rows(
    study: Study, start: int = 0, stop: int | None = None
) -> tuple[int, Iterator[list[Any]]]:
    """How many binary comparisons the study has, and their rows ``start:stop`` by target and
    then candidate order (items of a target are consecutive). Raises :class:`NotATargetStudy`
    for an area study, at the call."""
    require_targets(study)
    votes = bulk_sql.study_votes(study.pk).trusted()
    found = pair_counts(votes.pairs, votes.first_score)
    target, candidate = _names(study)

    def rows() -> Iterator[list[Any]]:
        counts = found.votes if found.votes is not None else np.zeros((found.n, 3), np.int64)
        end = found.n if stop is None else min(stop, found.n)
        for first in range(start, end, CHUNK):  # Python rows a page at a time
            page = slice(first, min(first + CHUNK, end))
            for a, b, (v1, v2, ties), r in zip(
                found.first[page].tolist(), found.second[page].tolist(),
                counts[page].tolist(), found.r[page].tolist(), strict=True,
            ):  # fmt: skip
                yield [target[a], candidate[a], candidate[b], v1, v2, ties, r]

    return found.n, rows()


def comparisons_page(study: Study, after: int, limit: int) -> tuple[int, list[dict[str, Any]]]:
    """The API's page of binary comparisons: rows ``after + 1`` to ``after + limit`` (numbered
    ``row`` from 1), keyed by the CSV's columns, and how many there are. Raises
    :class:`NotATargetStudy` for an area study."""
    count, rows = comparisons_rows(study, after, after + limit)
    header = list(COMPARISONS_HEADER)
    return count, [
        {"row": after + offset + 1, **dict(zip(header, row, strict=True))}
        for offset, row in enumerate(rows)
    ]


def comparisons_csv(study: Study) -> Iterator[str]:
    """``comparisons.csv`` (module docstring). Raises :class:`NotATargetStudy` at the call."""
    return csv_lines(list(COMPARISONS_HEADER), comparisons_rows(study)[1])


def gold_grouped_rows(study: Study) -> Iterator[list[Any]]:
    """The grouped gold's rows, target by target, each target's best candidate first. Raises
    :class:`NotATargetStudy` or :class:`NotFinished` at the call."""
    require_targets(study)
    require_finished(study)
    sizes = list(
        study.areas.order_by("position").annotate(n=Count("items")).values_list("position", "n")
    )
    items = Item.objects.filter(study=study).order_by("area__position", "rank_in_target")

    def scaled() -> Iterator[list[Any]]:
        # Whole targets a page at a time (about CHUNK items): one query per page.
        start = 0
        while start < len(sizes):
            end, count = start, 0
            while end < len(sizes) and (count == 0 or count + sizes[end][1] <= CHUNK):
                count += sizes[end][1]
                end += 1
            page = items.filter(
                area__position__gte=sizes[start][0], area__position__lte=sizes[end - 1][0]
            ).values_list("area__position", "area__name", "token_b__text", "final_score")
            group: list[tuple[str, str, float | None]] = []
            position = None
            for pos, name, cand, score in page:
                if group and pos != position:
                    yield from _scaled(group)
                    group = []
                position = pos
                group.append((name, cand, score))
            yield from _scaled(group)
            start = end

    return scaled()


def _scaled(group: list[tuple[str, str, float | None]]) -> Iterator[list[Any]]:
    """One target's rows, its scores mapped linearly to 0-10 (an unscored candidate: 0)."""
    known = [score for _, _, score in group if score is not None]
    lo, hi = (min(known), max(known)) if known else (0.0, 0.0)
    for target, candidate, score in group:
        value = 0.0 if score is None else gold_scaled(score, lo, hi)
        yield [target, candidate, round(value, 6)]


def gold_grouped_csv(study: Study) -> Iterator[str]:
    """``gold-grouped.csv`` (module docstring); raises at the call."""
    return csv_lines(GROUPED_HEADER, gold_grouped_rows(study))


def target_design(study: Study) -> dict[str, Any]:
    """The dataset card's description of a target study's design."""
    require_targets(study)
    sizes = list(
        study.areas.order_by("position").annotate(n=Count("items")).values_list("name", "n")
    )
    counts = [n for _, n in sizes]
    kinds = dict(
        Item.objects.filter(study=study)
        .values("kind")
        .annotate(n=Count("id"))
        .values_list("kind", "n")
    )
    return {
        "targets": len(sizes),
        "candidates_per_target": {
            "min": min(counts, default=0),
            "median": median(counts) if counts else 0,
            "max": max(counts, default=0),
        },
        # Candidates of each kind given (without one: "none"); no kind given at all: null.
        "kinds": {kind or "none": kinds[kind] for kind in (*CANDIDATE_KINDS, "") if kinds.get(kind)}
        if any(kinds.get(kind) for kind in CANDIDATE_KINDS)
        else None,
        "question_template": study.question,
        "comparisons": "comparisons.csv: Avraham & Goldberg's binary comparisons "
        "R>(candidate_1, candidate_2; target), one row per unordered pair of candidates of one "
        "target voted at least once, r = (votes_1 + ties / 2) / (votes_1 + votes_2 + ties); "
        "votes of excluded voters left out. Every comparison of the study pairs two candidates "
        "of one target.",
        "per_target": [{"target": name, "candidates": n} for name, n in sizes],
    }
