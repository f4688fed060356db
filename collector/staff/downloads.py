"""A study's downloads: the files (CSV, TSV, JSON Lines, JSON) at ``/staff/<slug>/<file>``, and
the staff API's paged exports.

``GET /api/v1/staff/studies/<slug>/ranking?after=<rank>&limit=<n>`` and
``GET /api/v1/staff/studies/<slug>/votes?after=<vote id>&limit=<n>`` answer
``{"count": ..., "next": <url or null>, "results": [...]}``; each result has the CSV export's
columns as keys. Keyset paging stays fast on the last page of a million votes, unlike OFFSET.
``GET /api/v1/staff/studies/<slug>/comparisons?after=<row>&limit=<n>`` pages a target study's
binary comparisons the same way (``row`` numbers them from 1; an area study is a 404).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import download, get_study, staff_required
from collector.models import Study, Vote
from collector.staff import dataset, exports, target_exports
from collector.staff.study_api import ERRORS, PAGING, Conflict, StudyView, page, paging
from collector.studies import lifecycle


def _export(
    request: HttpRequest,
    slug: str,
    lines: Callable[[Study], Any],
    name: str,
    content_type: str = "text/csv",
) -> HttpResponseBase:
    """The study's file ``<slug>-<name>`` from ``lines(study)``; a study that has no such file
    yet (not finished: 409) or at all (not a target study: 404) gets the reason as text."""
    study = get_study(request, slug)
    try:
        body = lines(study)
    except (lifecycle.NotFinished, target_exports.NotATargetStudy) as exc:
        status = 404 if isinstance(exc, target_exports.NotATargetStudy) else 409
        return HttpResponse(str(exc), status=status, content_type="text/plain")
    return download(body, f"{study.slug}-{name}", content_type)


@staff_required
def ranking_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    return _export(request, slug, exports.ranking_csv, "ranking.csv")


@staff_required
def ranking_jsonl(request: HttpRequest, slug: str) -> HttpResponseBase:
    return _export(request, slug, exports.ranking_jsonl, "ranking.jsonl", "application/jsonl")


@staff_required
def votes_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    study = get_study(request, slug)
    return download(exports.votes_csv(study), f"{study.slug}-votes.csv")


@staff_required
def gold_tsv(request: HttpRequest, slug: str) -> HttpResponseBase:
    return _export(request, slug, dataset.gold_tsv, "gold.tsv", "text/tab-separated-values")


@staff_required
def comparisons_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    return _export(request, slug, target_exports.comparisons_csv, "comparisons.csv")


@staff_required
def gold_grouped_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    return _export(request, slug, target_exports.gold_grouped_csv, "gold-grouped.csv")


@staff_required
def dataset_json(request: HttpRequest, slug: str) -> HttpResponseBase:
    study = get_study(request, slug)
    try:
        card = dataset.dataset_card(study, base_url=request.build_absolute_uri(f"/staff/{slug}/"))
    except lifecycle.NotFinished as exc:
        return JsonResponse({"detail": str(exc)}, status=409)
    response = JsonResponse(card, json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-dataset.json"'
    return response


@staff_required
def items_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    study = get_study(request, slug)
    return download(exports.items_csv(study), f"{study.slug}-items.csv")


class RankingView(StudyView):
    @extend_schema(parameters=PAGING, responses={200: dict, **ERRORS, 409: dict})
    def get(self, request: Request, slug: str) -> Response:
        study = self.study(request, slug)
        after, limit = paging(request)
        try:
            rows = exports.ranking_rows(study, after_rank=after, limit=limit)
        except lifecycle.NotFinished as exc:
            raise Conflict(str(exc)) from None
        header = exports.ranking_header(study)
        results = [dict(zip(header, row, strict=True)) for row in rows]
        return page(request, results, "rank", limit, study.items.count())


class VotesView(StudyView):
    @extend_schema(parameters=PAGING, responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        study = self.study(request, slug)
        after, limit = paging(request)
        results = []
        for row in exports.votes_rows(study, after_id=after, limit=limit):
            item = dict(zip(exports.VOTES_HEADER, exports.vote_row_values(row), strict=True))
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
            count, rows = target_exports.comparisons_rows(study, after, after + limit)
        except target_exports.NotATargetStudy as exc:
            raise NotFound(str(exc)) from None
        header = target_exports.COMPARISONS_HEADER
        results = [
            {"row": after + offset + 1, **dict(zip(header, row, strict=True))}
            for offset, row in enumerate(rows)
        ]
        return page(request, results, "row", limit, count)
