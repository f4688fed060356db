"""Staff pages of model evaluation: submit a model, watch its run, the leaderboard, downloads.

The study page shows the upload form and the leaderboard (:mod:`collector.staff.study_page`);
each model has its own page with the per-area breakdown and the rank scatter. The upload
answers at once (POST, redirect to the model's page, GET): what can be checked without reading
the file (name, size, compression, a vectors header, the study's bound of pending evaluations)
is answered on the study page and stores nothing; the background job reads the file, and a
refusal (file, line, reason) is shown on the model's page, with nothing scored.

The staff API: ``POST /api/v1/staff/studies/<slug>/evaluations`` (multipart: ``name``, ``source``
scores or vectors, ``file``, optional ``vectors_format`` and ``missing``) answers 202 at once with
the evaluation's id and URL (the file is read in the background); ``GET`` on it gives its status,
stage, progress, a refusal's reason (status ``refused``) and, once done, its result; 429 when the
study has ``EVALUATION_MAX_QUEUED`` evaluations pending; ``GET .../evaluations`` is the
leaderboard.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import CHANGE, VIEW, get_study, staff_required
from collector.audit.trail import record
from collector.evaluation import figures, leaderboard, paired, submitting
from collector.evaluation.study_data import gold_provenance
from collector.models import Evaluation, Study
from collector.staff.evaluation_form import EvaluationForm
from collector.staff.study_api import ERRORS, Conflict, StudyView
from collector.staff.study_page import models_board, render_study_page


@staff_required
@require_POST
def evaluation_new(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study(request, slug, CHANGE)
    if study.status != study.Status.FINISHED:
        messages.error(request, "Models are evaluated against the final ranking: wait for the end.")
        return render_study_page(request, study, status=409)
    form = EvaluationForm(request.POST, request.FILES)
    status = 400
    if form.is_valid():
        try:
            evaluation = _submit(request, study, form)
        except submitting.EvaluationRefused as exc:
            if isinstance(exc, submitting.TooManyEvaluations):
                status = 429
            form.add_error("file" if "line" in str(exc) or "file" in str(exc) else None, str(exc))
        else:
            messages.success(
                request,
                f"“{evaluation.name}” was uploaded: its file is read and checked, then evaluated.",
            )
            return redirect("staff-evaluation", slug=slug, pk=evaluation.pk)
    return render_study_page(request, study, status=status, evaluation_form=form)


def _submit(request: HttpRequest, study: Study, form: EvaluationForm) -> Evaluation:
    """Submit the form's model and record it in the audit trail."""
    with transaction.atomic():
        evaluation = form.submit(study, request.user)
        record(request, "evaluation.submit", study, evaluation=evaluation.pk, name=evaluation.name)
    return evaluation


def _evaluation(request: HttpRequest, slug: str, pk: int, perm: str = VIEW) -> Evaluation:
    return get_object_or_404(Evaluation, study=get_study(request, slug, perm), pk=pk)


@staff_required
def evaluation_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    evaluation = _evaluation(request, slug, pk)
    context: dict[str, Any] = {
        "study": evaluation.study,
        "evaluation": evaluation,
        "row": leaderboard.row(evaluation),
        "areas": leaderboard.areas(evaluation),
        "targets": leaderboard.targets(evaluation),
        "stage": leaderboard.stage(evaluation.status, evaluation.item_scores is None),
        "gold": gold_provenance(evaluation.study),
    }
    if evaluation.status == Evaluation.Status.DONE:
        svg = figures.rank_scatter(evaluation, "svg").decode()
        context["scatter"] = mark_safe(svg[svg.index("<svg") :])  # noqa: S308 (matplotlib's)
        context["scatter_text"] = figures.describe(evaluation)
    return render(request, "staff/evaluation_detail.html", context)


@staff_required
def evaluation_json(request: HttpRequest, slug: str, pk: int) -> HttpResponseBase:
    evaluation = _evaluation(request, slug, pk)
    response = JsonResponse(
        {
            "model": evaluation.name,
            "status": evaluation.status,
            "gold": gold_provenance(evaluation.study),
            "result": evaluation.result,
        },
        json_dumps_params={"indent": 2},
    )
    response["Content-Disposition"] = (
        f'attachment; filename="{evaluation.study.slug}-{evaluation.pk}-evaluation.json"'
    )
    return response


@staff_required
def evaluation_figure(request: HttpRequest, slug: str, pk: int, fmt: str) -> HttpResponseBase:
    evaluation = _evaluation(request, slug, pk)
    types = {"svg": "image/svg+xml", "png": "image/png", "pdf": "application/pdf"}
    if fmt not in types:
        return HttpResponse("The figure comes as svg, png or pdf.", status=404)
    if evaluation.status != Evaluation.Status.DONE:
        return HttpResponse("The evaluation has not finished.", status=409)
    response = HttpResponse(figures.rank_scatter(evaluation, fmt), content_type=types[fmt])
    response["Content-Disposition"] = (
        f'attachment; filename="{evaluation.study.slug}-{evaluation.pk}-ranks.{fmt}"'
    )
    return response


@staff_required
def evaluation_status(request: HttpRequest, slug: str) -> JsonResponse:
    """The study's evaluations and their progress, and its paired comparisons' states: the
    page's progress bars poll this, and fetch the leaderboard again when one ends."""
    study = get_study(request, slug)
    return JsonResponse(
        {
            "evaluations": [
                {
                    "id": e.pk,
                    "name": e.name,
                    "status": e.status,
                    "stage": leaderboard.stage(e.status, e.reading),  # type: ignore[attr-defined]
                    "progress": e.progress,
                }
                for e in leaderboard.progress_rows(study)
            ],
            "pairs": paired.statuses(study),
        }
    )


@staff_required
def evaluation_board(request: HttpRequest, slug: str) -> HttpResponse:
    """The leaderboard and the paired differences as the study page shows them (an HTML
    fragment): the page puts it in place of its own when a model it shows running ends."""
    study = get_study(request, slug)
    if study.status != Study.Status.FINISHED:
        return HttpResponse("Models are evaluated once the study is finished.", status=409)
    return render(request, "staff/_models_board.html", models_board(study))


@staff_required
@require_POST
def evaluation_delete(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    evaluation = _evaluation(request, slug, pk, CHANGE)
    with transaction.atomic():
        record(request, "evaluation.remove", evaluation.study, evaluation=pk, name=evaluation.name)
        evaluation.delete()
    messages.success(request, f"“{evaluation.name}” was removed from the leaderboard.")
    return redirect("staff-study", slug=slug)


class TooManyPending(APIException):
    status_code = 429
    default_detail = "The study has as many evaluations pending as it may have."


EVALUATION_UPLOAD = inline_serializer(
    "EvaluationUpload",
    {
        "name": serializers.CharField(max_length=100),
        "source": serializers.ChoiceField(choices=["scores", "vectors"]),
        "file": serializers.FileField(),
        "vectors_format": serializers.ChoiceField(
            choices=["word2vec", "word2vec-binary", "glove", "fasttext"], required=False
        ),
        "missing": serializers.ChoiceField(choices=["skip", "last"], required=False),
    },
)


def _evaluation_json(request: Request, evaluation: Evaluation) -> dict[str, Any]:
    slug = evaluation.study.slug
    return {
        "id": evaluation.pk,
        "name": evaluation.name,
        "status": evaluation.status,
        "stage": leaderboard.stage(evaluation.status, evaluation.item_scores is None),
        "progress": evaluation.progress,
        "error": evaluation.error or None,
        "url": request.build_absolute_uri(
            f"/api/v1/staff/studies/{slug}/evaluations/{evaluation.pk}"
        ),
        "gold": gold_provenance(evaluation.study),
        "result": evaluation.result,
        "stale": leaderboard.stale(evaluation),
    }


class EvaluationsView(StudyView):
    parser_classes = [MultiPartParser]

    @extend_schema(operation_id="staff_evaluations_list", responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        """The study's leaderboard: one row per model, best rho_w first, each with its rho as a
        share of the human ceiling (``rho_of_ceiling``); ``ceiling`` is the study's final
        split-half reliability (Spearman-Brown corrected); ``paired`` the models compared on
        the same voter resamples; ``gold`` says whether the study's votes came from people (a
        simulated gold carries a warning)."""
        study = self.study(request, slug)
        return Response(
            {
                "gold": gold_provenance(study),
                "ceiling": leaderboard.ceiling(study),
                "models": leaderboard.rows(study),
                "paired": paired.rows(study),
            }
        )

    @extend_schema(
        operation_id="staff_evaluations_create",
        request=EVALUATION_UPLOAD,
        responses={202: dict, **ERRORS, 409: dict, 429: dict},
    )
    def post(self, request: Request, slug: str) -> Response:
        """Submit a model: answered at once. A bad name, size, compressed file or vectors
        header is a 400 (nothing stored); the file is then read and checked in the background,
        and a bad line leaves the evaluation ``refused`` with its reason."""
        study = self.study(request, slug, CHANGE)
        if study.status != Study.Status.FINISHED:
            raise Conflict("The study is not finished: there is no gold ranking yet.")
        form = EvaluationForm(request.data, request.FILES)
        if not form.is_valid():
            field, errors = next(iter(form.errors.items()))
            raise ValidationError({"detail": f"{field}: {errors[0]}"})
        try:
            evaluation = _submit(request, study, form)
        except submitting.TooManyEvaluations as exc:
            raise TooManyPending(str(exc)) from None
        except submitting.EvaluationRefused as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response(_evaluation_json(request, evaluation), status=202)


class EvaluationView(StudyView):
    @extend_schema(
        operation_id="staff_evaluation_retrieve",
        parameters=[
            OpenApiParameter(
                "id", {"type": "integer", "minimum": 0}, OpenApiParameter.PATH,
                description="The evaluation's id, as the POST answered it.",
            )
        ],
        responses={200: dict, **ERRORS},
    )  # fmt: skip
    def get(self, request: Request, slug: str, pk: int) -> Response:
        """One evaluation: status, progress (0-1) and, once done, every figure."""
        evaluation = get_object_or_404(Evaluation, study=self.study(request, slug), pk=pk)
        return Response(_evaluation_json(request, evaluation))
