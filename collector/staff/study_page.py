"""The study page: settings (the design, and a target study's targets and candidates), ballots
with their progress, the reliability box, exports, the final ranking (a target study's one
target at a time, ``?target=``, with ``rank_in_target`` first) and, once the study is finished,
model evaluation (the upload form and the leaderboard)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from collector.access import get_study, staff_required
from collector.evaluation import leaderboard
from collector.evaluation.study_data import gold_provenance
from collector.exports import study_files
from collector.models import Study
from collector.reports import reliability
from collector.reports.tables import (
    RANKING_ROWS_SHOWN,
    ballot_progress,
    interim_ranking,
    target_counts,
    target_ranking,
)
from collector.staff import model_pairs, prolific
from collector.staff.evaluation_form import EvaluationForm
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


def _shown(value: Any) -> str:
    """A ranking cell as the page shows it: scores (floats) to four decimals, nothing for None."""
    if value is None:
        return ""
    return f"{value:.4f}" if isinstance(value, float) else str(value)
