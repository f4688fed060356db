"""Staff JSON API: the final ranking and the votes of a study, paged by a keyset cursor, and the
evaluation of models against the study (submit one, read the leaderboard and each result).

``GET /api/v1/staff/studies/<slug>/ranking?after=<rank>&limit=<n>`` and
``GET /api/v1/staff/studies/<slug>/votes?after=<vote id>&limit=<n>`` answer
``{"count": ..., "next": <url or null>, "results": [...]}``; each result has the CSV export's
columns as keys. Keyset paging stays fast on the last page of a million votes, unlike OFFSET.
``GET /api/v1/staff/studies/<slug>/comparisons?after=<row>&limit=<n>`` pages a target study's
binary comparisons the same way (``row`` numbers them from 1; an area study is a 404).
``POST /api/v1/staff/studies/<slug>/evaluations`` (multipart: ``name``, ``source`` scores or
vectors, ``file``, optional ``vectors_format`` and ``missing``) answers 202 at once with the
evaluation's id and URL (the file is read in the background); ``GET`` on it gives its status,
stage, progress, a refusal's reason (status ``refused``) and, once done, its result; 429 when
the study has ``EVALUATION_MAX_QUEUED`` evaluations pending; ``GET .../evaluations`` is the
leaderboard. Staff authentication (session or basic); another staff
member's study is a 404.
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from collector.access import visible_studies
from collector.evaluation import leaderboard, submitting
from collector.evaluation.study_data import gold_provenance
from collector.models import Evaluation, Study, Vote
from collector.staff import exports, target_exports
from collector.staff.forms import EvaluationForm
from collector.studies import lifecycle

# Every staff endpoint may answer these, as JSON {"detail": ...}.
ERRORS: dict[int, type] = {400: dict, 401: dict, 403: dict, 404: dict}

DEFAULT_LIMIT = 1000
MAX_LIMIT = 10000
PAGING = [
    OpenApiParameter("after", int, description="Return rows after this key (0 = from the start)"),
    OpenApiParameter("limit", int, description=f"Rows per page (default {DEFAULT_LIMIT})"),
]


class TooManyPending(APIException):
    status_code = 429
    default_detail = "The study has as many evaluations pending as it may have."


class Conflict(APIException):
    status_code = 409
    default_detail = "The study is not finished."


def _paging(request: Request) -> tuple[int, int]:
    try:
        after = int(request.query_params.get("after", 0))
        limit = int(request.query_params.get("limit", DEFAULT_LIMIT))
    except ValueError:
        raise ValidationError({"detail": "after and limit must be integers."}) from None
    if after < 0 or not 1 <= limit <= MAX_LIMIT:
        raise ValidationError(
            {"detail": f"after must be >= 0 and limit between 1 and {MAX_LIMIT}."}
        )
    return after, limit


def _page(request: Request, results: list[dict[str, Any]], key: str, limit: int, count: int):
    nxt = None
    if len(results) == limit:
        nxt = request.build_absolute_uri(f"{request.path}?after={results[-1][key]}&limit={limit}")
    return Response({"count": count, "next": nxt, "results": results})


class _StudyView(APIView):
    permission_classes = [IsAdminUser]

    def study(self, request: Request, slug: str) -> Study:
        return get_object_or_404(visible_studies(request.user), slug=slug)


class RankingView(_StudyView):
    @extend_schema(parameters=PAGING, responses={200: dict, **ERRORS, 409: dict})
    def get(self, request: Request, slug: str) -> Response:
        study = self.study(request, slug)
        after, limit = _paging(request)
        try:
            rows = exports.ranking_rows(study, after_rank=after, limit=limit)
        except lifecycle.NotFinished as exc:
            raise Conflict(str(exc)) from None
        header = exports.ranking_header(study)
        results = [dict(zip(header, row, strict=True)) for row in rows]
        return _page(request, results, "rank", limit, study.items.count())


class VotesView(_StudyView):
    @extend_schema(parameters=PAGING, responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        study = self.study(request, slug)
        after, limit = _paging(request)
        results = []
        for row in exports.votes_rows(study, after_id=after, limit=limit):
            item = dict(zip(exports.VOTES_HEADER, exports.vote_row_values(row), strict=True))
            item["vote_id"] = row[0]
            results.append(item)
        count = Vote.objects.filter(ballot__study=study).count()
        return _page(request, results, "vote_id", limit, count)


class ComparisonsView(_StudyView):
    @extend_schema(parameters=PAGING, responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        """A target study's binary comparisons (the comparisons.csv rows, numbered ``row``)."""
        study = self.study(request, slug)
        after, limit = _paging(request)
        try:
            count, rows = target_exports.comparisons_rows(study, after, after + limit)
        except target_exports.NotATargetStudy as exc:
            raise NotFound(str(exc)) from None
        header = target_exports.COMPARISONS_HEADER
        results = [
            {"row": after + offset + 1, **dict(zip(header, row, strict=True))}
            for offset, row in enumerate(rows)
        ]
        return _page(request, results, "row", limit, count)


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
    }


class EvaluationsView(_StudyView):
    parser_classes = [MultiPartParser]

    @extend_schema(operation_id="staff_evaluations_list", responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        """The study's leaderboard: one row per model, best rho_w first; ``gold`` says whether
        the study's votes came from people (a simulated gold carries a warning)."""
        study = self.study(request, slug)
        return Response({"gold": gold_provenance(study), "models": leaderboard.rows(study)})

    @extend_schema(
        operation_id="staff_evaluations_create",
        request=EVALUATION_UPLOAD,
        responses={202: dict, **ERRORS, 409: dict, 429: dict},
    )
    def post(self, request: Request, slug: str) -> Response:
        """Submit a model: answered at once. A bad name, size, compressed file or vectors
        header is a 400 (nothing stored); the file is then read and checked in the background,
        and a bad line leaves the evaluation ``refused`` with its reason."""
        study = self.study(request, slug)
        if study.status != Study.Status.FINISHED:
            raise Conflict("The study is not finished: there is no gold ranking yet.")
        form = EvaluationForm(request.data, request.FILES)
        if not form.is_valid():
            field, errors = next(iter(form.errors.items()))
            raise ValidationError({"detail": f"{field}: {errors[0]}"})
        try:
            evaluation = form.submit(study, request.user)
        except submitting.TooManyEvaluations as exc:
            raise TooManyPending(str(exc)) from None
        except submitting.EvaluationRefused as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response(_evaluation_json(request, evaluation), status=202)


class EvaluationView(_StudyView):
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
