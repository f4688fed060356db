"""A study's downloads: every file of :mod:`collector.exports.registry` at its URL
(``/staff/<slug>/<path>``, one view for all), and the staff API's paged rows of every file the
registry gives an ``api`` (one view for all, :class:`ExportRowsView`).

``GET /api/v1/staff/studies/<slug>/ranking?after=<rank>&limit=<n>``,
``.../votes?after=<vote id>&limit=<n>`` and a target study's ``.../comparisons?after=<row>``
(``row`` numbers them from 1; an area study is a 404) answer
``{"count": ..., "next": <url or null>, "results": [...]}``; each result has the CSV export's
columns as keys. Keyset paging stays fast on the last page of a million votes, unlike OFFSET.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    JsonResponse,
    StreamingHttpResponse,
)
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import get_study, staff_required
from collector.exports import registry
from collector.exports.options import Options
from collector.staff.study_api import ERRORS, PAGING, StudyView, page, paging


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


class ExportRowsView(StudyView):
    """The rows of one registered export, paged (every ``api`` of
    :data:`collector.exports.registry.EXPORTS` is this view, named by ``export``): the file's
    columns as keys, with the paging key its :class:`~collector.exports.registry.Api` names."""

    export = ""  # the registered file's name (:meth:`for_export`)

    @classmethod
    def for_export(cls, export: registry.Export) -> Callable[..., HttpResponseBase]:
        """The view of ``export``'s rows, described in the API schema by its registry row."""
        assert export.api is not None, f"{export.name} has no rows in the API"
        doc = (
            f"{export.description} The rows of {export.name}, paged: each result has its "
            f"columns as keys, and ``{export.api.key}``, which ``after`` takes."
        )
        view = cast(
            type[ExportRowsView],
            type(f"{cls.__name__}_{export.api.path}", (cls,), {"__doc__": doc}),
        )
        return view.as_view(export=export.name)

    @extend_schema(parameters=PAGING, responses={200: dict, **ERRORS, 409: dict})
    def get(self, request: Request, slug: str) -> Response:
        found = registry.get(self.export)
        api = found.api
        assert api is not None
        study = self.study(request, slug, found.permission)
        after, limit = paging(request)
        try:
            count, results = api.rows(study, after, limit)
        except registry.Refused as exc:
            refusal = APIException(str(exc))
            refusal.status_code = registry.refusal_status(exc)
            raise refusal from None
        return page(request, results, api.key, limit, count)
