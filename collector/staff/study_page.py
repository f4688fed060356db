"""The study page: settings, ballots with their progress, exports, the final ranking and, once
the study is finished, model evaluation (the upload form and the leaderboard)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from collector.evaluation import leaderboard
from collector.models import Study
from collector.staff import exports
from collector.staff.forms import EvaluationForm
from collector.studies import creating, lifecycle

RANKING_ROWS_SHOWN = 200


def render_study_page(
    request: HttpRequest,
    study: Study,
    *,
    status: int = 200,
    evaluation_form: EvaluationForm | None = None,
) -> HttpResponse:
    """The study page; with ``evaluation_form``, a refused model upload and its errors."""
    progress = exports.progress(study)
    for row in progress:
        if row["ballot"].status == row["ballot"].Status.OPEN:
            # Shown before an early close: these items would get no score from this ballot.
            row["items_without_answer"] = lifecycle.items_without_answer(row["ballot"].pk)
    context: dict[str, Any] = {
        "study": study,
        "progress": progress,
        "plan": creating.describe_plan(study),
        "voter_url": request.build_absolute_uri(f"/s/{study.slug}/"),
    }
    if study.status == Study.Status.FINISHED:
        header = exports.ranking_header(study)
        rows = list(exports.ranking_rows(study, limit=RANKING_ROWS_SHOWN))
        context.update(ranking_header=header, ranking_rows=rows, ranking_limit=RANKING_ROWS_SHOWN)
        context.update(
            evaluation_form=evaluation_form or EvaluationForm(),
            leaderboard=leaderboard.rows(study),
        )
    return render(request, "staff/study_detail.html", context, status=status)
