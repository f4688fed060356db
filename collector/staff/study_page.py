"""The study page: settings (the design, and a target study's targets and candidates), ballots
with their progress, the reliability box, exports, the final ranking (a target study's one
target at a time, ``?target=``, with ``rank_in_target`` first) and, once the study is finished,
model evaluation (the upload form and the leaderboard)."""

from __future__ import annotations

from typing import Any

import numpy as np
from django.db.models import Count, Max, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from collector.access import get_study, staff_required
from collector.evaluation import leaderboard
from collector.evaluation.study_data import gold_provenance
from collector.exports import study_files
from collector.models import Area, Ballot, Item, ItemScore, Study, VoidedVote, Vote
from collector.staff import model_pairs, prolific, reliability
from collector.staff.forms import EvaluationForm
from collector.studies import creating, lifecycle
from collector.studies.designs import study_design

# The leaderboard's columns after Model and Status: (header, cell), a cell naming the row's keys:
# a count with its coverage, a text, or a figure (with its 95% interval when it has one). The
# first figure column decides whether a row is scored.
AREA_LEADERBOARD = [
    ("n (coverage)", {"count": "n", "value": "coverage"}),
    ("rho_w [95%]", {"value": "rho_w", "low": "rho_w_low", "high": "rho_w_high"}),
    ("tau_w [95%]", {"value": "tau_w", "low": "tau_w_low", "high": "tau_w_high"}),
    ("rho", {"value": "rho"}),
    ("rho / ceiling", {"value": "rho_of_ceiling"}),
    ("tau", {"value": "tau"}),
    ("chance rho_w [95%]", {"value": "chance_rho_w_mean", "low": "chance_rho_w_low",
                            "high": "chance_rho_w_high"}),
    ("rho_w against chance", {"text": "z_rho_w_text"}),
    ("agrees with votes", {"value": "vote_agreement"}),
]  # fmt: skip
TARGET_LEADERBOARD = [
    ("targets (coverage)", {"count": "targets", "value": "coverage"}),
    ("macro rho_w [95%]", {"value": "macro_rho_w", "low": "macro_rho_w_low",
                           "high": "macro_rho_w_high"}),
    ("macro tau_w [95%]", {"value": "macro_tau_w", "low": "macro_tau_w_low",
                           "high": "macro_tau_w_high"}),
    ("macro rho", {"value": "macro_rho"}),
    ("macro rho / ceiling", {"value": "rho_of_ceiling"}),
    ("macro tau", {"value": "macro_tau"}),
    ("A&G score [95%]", {"value": "ag_score", "low": "ag_score_low", "high": "ag_score_high"}),
    ("MRR", {"value": "mrr"}),
    ("agrees with votes", {"value": "vote_agreement"}),
]  # fmt: skip
RANKING_ROWS_SHOWN = 200
# The final ranking's text columns (the others are numbers, right-aligned on the page).
TEXT_COLUMNS = {"area", "token_a", "token_b", "target", "candidate", "kind"}


@staff_required
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    return render_study_page(request, get_study(request, slug))


def render_study_page(
    request: HttpRequest,
    study: Study,
    *,
    status: int = 200,
    evaluation_form: EvaluationForm | None = None,
) -> HttpResponse:
    """The study page; with ``evaluation_form``, a refused model upload and its errors."""
    progress = ballot_progress(study)
    for row in progress:
        if row["ballot"].status == row["ballot"].Status.OPEN:
            # Shown before an early close: these items would get no score from this ballot.
            row["items_without_answer"] = lifecycle.items_without_answer(row["ballot"].pk)
    planned = creating.study_plan(study)
    context: dict[str, Any] = {
        "study": study,
        "progress": progress,
        "plan": planned.text(),
        "parameters": planned.parameters_text(),
        "design": study_design(study).describe(),
        "voter_url": request.build_absolute_uri(f"/s/{study.slug}/"),
        "target_counts": target_counts(planned.targets) if planned.targets is not None else None,
    }
    context.update(reliability.box(study))
    context.update(prolific.box(study, request))
    if study.status == Study.Status.RUNNING:
        context.update(interim_ranking(study))
        rows = context.get("interim_rows") or []
        if rows:
            context.update(reliability.annotate_interim(context["reliability"], rows))
        chances = context.get("interim_probability") or [None] * len(rows)
        context["interim_table"] = [(*r, c) for r, c in zip(rows, chances, strict=True)]
    if study.status == Study.Status.FINISHED:
        raw: list[Any]
        if study.targets:
            names = list(study.areas.order_by("position").values_list("name", flat=True))
            asked = request.GET.get("target")
            target = asked if asked in names else names[0]
            header, raw = target_ranking(study, target)
            context.update(ranking_targets=names, ranking_target=target)
        else:
            header = study_files.ranking_header(study)
            raw = list(study_files.ranking_rows(study, limit=RANKING_ROWS_SHOWN))
        text = [name in TEXT_COLUMNS for name in header]
        shown = [
            [(not is_text, _shown(v)) for is_text, v in zip(text, row, strict=True)] for row in raw
        ]
        context.update(ranking_header=header, ranking_rows=shown, ranking_limit=RANKING_ROWS_SHOWN)
        context.update(models_board(study), evaluation_form=evaluation_form or EvaluationForm())
    return render(request, "staff/study_detail.html", context, status=status)


def models_board(study: Study) -> dict[str, Any]:
    """The context of a finished study's leaderboard (``staff/_models_board.html``): its rows
    and table, the human ceiling, the gold's provenance, the paired differences and, for a
    target study, each model's rho_w per target. The study page shows it; the page fetches it
    again (``/staff/<slug>/models/board``) when a model or a comparison it shows running ends."""
    board = leaderboard.rows(study)
    ceiling = leaderboard.ceiling(study)
    context: dict[str, Any] = {
        "study": study,
        "leaderboard": board,
        "ceiling": ceiling,
        "gold": gold_provenance(study),
        "leaderboard_table": leaderboard_table(board, study.targets, ceiling),
        **model_pairs.page_context(study),
    }
    if study.targets:
        context["target_models"], context["target_table"] = leaderboard.target_table(board)
    return context


def leaderboard_table(
    board: list[dict[str, Any]], targets: bool, ceiling: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The leaderboard as the page's table shows it (``staff/_leaderboard.html``): the column
    headers, the human ceiling's row (:func:`collector.evaluation.leaderboard.ceiling`, None
    until computed) and each model's row with its cells (a row not scored shows its status
    instead)."""
    columns = TARGET_LEADERBOARD if targets else AREA_LEADERBOARD
    primary = columns[1][1]["value"]
    return {
        "columns": [label for label, _ in columns],
        "ceiling": None if ceiling is None else [_ceiling_cell(c, ceiling) for _, c in columns],
        "ceiling_stale": None if ceiling is None else ceiling.get("stale"),
        "rows": [
            {
                "row": r,
                "scored": r.get(primary) is not None,
                "cells": [{part: r.get(key) for part, key in cell.items()} for _, cell in columns],
            }
            for r in board
        ],
    }


def _ceiling_cell(cell: dict[str, str], ceiling: dict[str, Any]) -> dict[str, Any]:
    """The ceiling row's cell under a leaderboard column: its voters, its rho_w and rho with
    their ranges, 1 as its own share; nothing under the other columns."""
    if "count" in cell:
        return {"text": f"{ceiling['voters']} voters"}
    metric = cell.get("value", "").removeprefix("macro_")
    if metric in ("rho_w", "rho"):
        return {
            "value": ceiling[metric],
            "low": ceiling[f"{metric}_low"],
            "high": ceiling[f"{metric}_high"],
        }
    return {"value": 1.0} if metric == "rho_of_ceiling" else {}


TARGET_RANKING_HEADER = [
    "rank_in_target", "candidate", "kind", "score", "rank", "item_id", "last_ballot",
    "appearances", "wins", "ties",
]  # fmt: skip


def target_ranking(study: Study, target: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """One target's final ranking, best first, ``rank_in_target`` first (the page's table; the
    CSV has every column): its best ``RANKING_ROWS_SHOWN`` candidates."""
    area = Area.objects.get(study=study, name=target)
    rows = (
        Item.objects.filter(area=area, final_rank__isnull=False)
        .annotate(
            last_ballot=Max("scores__ballot__number"),
            n_appearances=Sum("scores__appearances"),
            n_wins=Sum("scores__wins"),
            n_ties=Sum("scores__ties"),
        )
        .order_by("rank_in_target")
        .values_list("rank_in_target", "token_b__text", "kind", "final_score", "final_rank",
                     "index", "last_ballot", "n_appearances", "n_wins", "n_ties")
    )  # fmt: skip
    return TARGET_RANKING_HEADER, list(rows[:RANKING_ROWS_SHOWN])


def target_counts(sizes: np.ndarray) -> dict[str, int]:
    """A target study's targets, candidates, and the fewest and most candidates of a target,
    from its candidates per target (``Plan.targets``)."""
    return {"targets": sizes.size, "candidates": int(sizes.sum()), "fewest": int(sizes.min()),
            "most": int(sizes.max())}  # fmt: skip


def _shown(value: Any) -> str:
    """A ranking cell as the page shows it: scores (floats) to four decimals, nothing for None."""
    if value is None:
        return ""
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def interim_ranking(study: Study, limit: int = 30) -> dict[str, Any]:
    """The best items after the latest closed ballot (by its running mean, or strength)."""
    latest = study.ballots.filter(status=Ballot.Status.CLOSED).order_by("-number").first()
    if latest is None:
        return {}
    field = "strength" if study.estimator == Study.Estimator.BRADLEY_TERRY else "ybar"
    rows = list(
        ItemScore.objects.filter(ballot__study=study, ballot__number=latest.number)
        .exclude(**{f"{field}__isnull": True})
        .order_by(f"-{field}", "item__index")
        .values_list("item__index", "item__area__name", "item__token_a__text",
                     "item__token_b__text", field)[:limit]
    )  # fmt: skip
    return {"interim_after": latest.number, "interim_rows": rows, "interim_field": field}


def progress_counts() -> dict[str, Any]:
    """A ballot's progress as annotations of Ballot rows: ``total`` comparisons (all it was
    given, void ones too: left unanswered by an early close or by votes withdrawn), ``answered``
    and ``voided``."""
    return {
        "total": Count("comparisons"),
        "answered": Count("comparisons", filter=Q(comparisons__status="answered")),
        "voided": Count("comparisons", filter=Q(comparisons__status="void")),
    }


def ballot_progress(study: Study) -> list[dict[str, Any]]:
    """Each ballot with its comparisons answered / total (void ones included), the comparisons
    voided by an early close (``voided``), the votes voided by excluding their voters
    (``votes_voided``, what the exclusion's message counts) and its voters."""
    voided_votes = (
        VoidedVote.objects.filter(ballot=OuterRef("pk"))
        .values("ballot")
        .annotate(n=Count("id"))
        .values("n")
    )
    ballots: list[Any] = list(
        Ballot.objects.filter(study=study)
        .annotate(**progress_counts(), votes_voided=Coalesce(Subquery(voided_votes), 0))
        .order_by("number")
    )
    voters = dict(
        Vote.objects.filter(ballot__study=study)
        .values("ballot_id")
        .annotate(n=Count("voter_id", distinct=True))
        .values_list("ballot_id", "n")
    )
    return [
        {
            "ballot": b,
            "answered": b.answered,
            "total": b.total,
            "voided": b.voided,
            "votes_voided": b.votes_voided,
            "voters": voters.get(b.pk, 0),
        }
        for b in ballots
    ]
