"""The study page: settings (the design, and a target study's targets and candidates), ballots
with their progress, the reliability box, exports, the final ranking (a target study's one
target at a time, ``?target=``, with ``rank_in_target`` first) and, once the study is finished,
model evaluation (the upload form and the leaderboard)."""

from __future__ import annotations

from typing import Any

import numpy as np
from django.db.models import Max, Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from collector.access import get_study, staff_required
from collector.evaluation import leaderboard
from collector.evaluation.study_data import gold_provenance
from collector.models import Area, Ballot, Item, ItemScore, Study
from collector.staff import exports, model_pairs, reliability
from collector.staff.forms import EvaluationForm
from collector.studies import creating, lifecycle
from collector.studies.designs import study_design

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
    progress = exports.progress(study)
    for row in progress:
        if row["ballot"].status == row["ballot"].Status.OPEN:
            # Shown before an early close: these items would get no score from this ballot.
            row["items_without_answer"] = lifecycle.items_without_answer(row["ballot"].pk)
    planned = creating.study_plan(study)
    context: dict[str, Any] = {
        "study": study,
        "progress": progress,
        "plan": planned.text(),
        "design": study_design(study).describe(),
        "voter_url": request.build_absolute_uri(f"/s/{study.slug}/"),
        "target_counts": target_counts(planned.targets) if planned.targets is not None else None,
    }
    context.update(reliability.box(study))
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
            header = exports.ranking_header(study)
            raw = list(exports.ranking_rows(study, limit=RANKING_ROWS_SHOWN))
        text = [name in TEXT_COLUMNS for name in header]
        shown = [
            [(not is_text, _shown(v)) for is_text, v in zip(text, row, strict=True)] for row in raw
        ]
        context.update(ranking_header=header, ranking_rows=shown, ranking_limit=RANKING_ROWS_SHOWN)
        board = leaderboard.rows(study)
        context.update(
            evaluation_form=evaluation_form or EvaluationForm(),
            leaderboard=board,
            ceiling=leaderboard.ceiling(study),
            gold=gold_provenance(study),
            **model_pairs.page_context(study),
        )
        if study.targets:
            context["target_models"], context["target_table"] = leaderboard.target_table(board)
    return render(request, "staff/study_detail.html", context, status=status)


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
