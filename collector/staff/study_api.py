"""The base of every staff JSON API view (``/api/v1/staff/studies/<slug>/...``): staff
authentication (session or basic), the study looked up among those the user is a member of (a
non-member gets 404, a member whose role falls short of the view's permission 403), the errors
every endpoint may answer, and keyset paging.

Each feature module holds its own API views (:mod:`collector.staff.downloads`,
:mod:`collector.staff.evaluations`, :mod:`collector.staff.live`, :mod:`collector.staff.voters`,
:mod:`collector.staff.checks`, :mod:`collector.staff.figures`, :mod:`collector.staff.crowd`,
:mod:`collector.staff.history`), each a :class:`StudyView`.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from collector.access import VIEW, get_study
from collector.models import Study

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


def paging(request: Request) -> tuple[int, int]:
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


def page(request: Request, results: list[dict[str, Any]], key: str, limit: int, count: int):
    next_page = None
    if len(results) == limit:
        next_page = request.build_absolute_uri(
            f"{request.path}?after={results[-1][key]}&limit={limit}"
        )
    return Response({"count": count, "next": next_page, "results": results})


class StudyView(APIView):
    permission_classes = [IsAdminUser]

    def study(self, request: Request, slug: str, perm: str = VIEW) -> Study:
        """The study, if the user may ``perm`` it (:func:`collector.access.get_study`: 404 for a
        non-member, 403 for a member whose role falls short)."""
        return get_study(request, slug, perm)
