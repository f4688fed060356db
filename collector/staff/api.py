"""Staff JSON API: the final ranking and the votes of a study, paged by a keyset cursor.

``GET /api/v1/staff/studies/<slug>/ranking?after=<rank>&limit=<n>`` and
``GET /api/v1/staff/studies/<slug>/votes?after=<vote id>&limit=<n>`` answer
``{"count": ..., "next": <url or null>, "results": [...]}``; each result has the CSV export's
columns as keys. Keyset paging stays fast on the last page of a million votes, unlike OFFSET.
Staff authentication (session or basic); another staff member's study is a 404.
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from collector.models import Study, Vote
from collector.staff import exports
from collector.staff.views import visible_studies

# Every staff endpoint may answer these, as JSON {"detail": ...}.
ERRORS: dict[int, type] = {400: dict, 401: dict, 403: dict, 404: dict}

DEFAULT_LIMIT = 1000
MAX_LIMIT = 10000
PAGING = [
    OpenApiParameter("after", int, description="Return rows after this key (0 = from the start)"),
    OpenApiParameter("limit", int, description=f"Rows per page (default {DEFAULT_LIMIT})"),
]


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
        except exports.NotFinished as exc:
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
