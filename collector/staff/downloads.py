"""A study's downloads: every file of :mod:`collector.exports.registry` at its URL
(``/staff/<slug>/<path>``, one view for all), and the staff API's paged exports, which give the
files' rows with their registered columns as keys.

``GET /api/v1/staff/studies/<slug>/ranking?after=<rank>&limit=<n>`` and
``GET /api/v1/staff/studies/<slug>/votes?after=<vote id>&limit=<n>`` answer
``{"count": ..., "next": <url or null>, "results": [...]}``; each result has the CSV export's
columns as keys. Keyset paging stays fast on the last page of a million votes, unlike OFFSET.
``GET /api/v1/staff/studies/<slug>/comparisons?after=<row>&limit=<n>`` pages a target study's
binary comparisons the same way (``row`` numbers them from 1; an area study is a 404).
"""

from __future__ import annotations

from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    JsonResponse,
    StreamingHttpResponse,
)
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import get_study, staff_required
from collector.exports import registry, study_files, target_files
from collector.exports.options import Options
from collector.models import Vote
from collector.staff.study_api import ERRORS, PAGING, Conflict, StudyView, page, paging
from collector.studies import lifecycle


def download(lines, filename: str, content_type: str = "text/csv") -> StreamingHttpResponse:
    """A streamed text download (CSV by default)."""
    response = StreamingHttpResponse(lines, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@staff_required
def export_file(request: HttpRequest, slug: str, export: str) -> HttpResponseBase:
    """The study's file ``<slug>-<name>`` of the registered export ``export`` (every download URL
    of :data:`collector.exports.registry.EXPORTS` is this view), if the user's role may read it
    (a participant-data file: owners and editors; a viewer gets 403). A study that has no such file
    yet (not finished, too few votes: 409) or at all (not a target study: 404) gets the reason:
    as text, or as ``{"detail": ...}`` for a JSON file."""
    found = registry.get(export)
    study = get_study(request, slug, found.permission)
    options = Options(
        base_url=request.build_absolute_uri(f"/staff/{slug}/"), query=request.GET.dict()
    )
    try:
        lines = found.lines(study, options)
    except registry.Refused as exc:
        status = registry.refusal_status(exc)
        if found.media_type == registry.JSON:
            return JsonResponse({"detail": str(exc)}, status=status)
        return HttpResponse(str(exc), status=status, content_type="text/plain")
    if found.streamed:
        return download(lines, found.filename(study), found.media_type)
    response = HttpResponse("".join(lines), content_type=found.media_type)
    response["Content-Disposition"] = f'attachment; filename="{found.filename(study)}"'
    return response


class RankingView(StudyView):
    @extend_schema(parameters=PAGING, responses={200: dict, **ERRORS, 409: dict})
    def get(self, request: Request, slug: str) -> Response:
        study = self.study(request, slug)
        after, limit = paging(request)
        try:
            rows = study_files.ranking_rows(study, after_rank=after, limit=limit)
        except lifecycle.NotFinished as exc:
            raise Conflict(str(exc)) from None
        header = registry.get("ranking.csv").columns(study)
        results = [dict(zip(header, row, strict=True)) for row in rows]
        return page(request, results, "rank", limit, study.items.count())


class VotesView(StudyView):
    @extend_schema(parameters=PAGING, responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        study = self.study(request, slug)
        after, limit = paging(request)
        header = registry.get("votes.csv").columns(study)
        results = []
        for row in study_files.votes_rows(study, after_id=after, limit=limit):
            item = dict(zip(header, study_files.vote_row_values(row), strict=True))
            item["vote_id"] = row[0]
            results.append(item)
        count = Vote.objects.filter(ballot__study=study).count()
        return page(request, results, "vote_id", limit, count)


class ComparisonsView(StudyView):
    @extend_schema(parameters=PAGING, responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        """A target study's binary comparisons (the comparisons.csv rows, numbered ``row``)."""
        study = self.study(request, slug)
        after, limit = paging(request)
        try:
            count, rows = target_files.comparisons_rows(study, after, after + limit)
        except target_files.NotATargetStudy as exc:
            raise NotFound(str(exc)) from None
        header = registry.get("comparisons.csv").columns(study)
        results = [
            {"row": after + offset + 1, **dict(zip(header, row, strict=True))}
            for offset, row in enumerate(rows)
        ]
        return page(request, results, "row", limit, count)
