"""The API's errors: DRF's exception handler plus a retryable 503 while the database is
unreachable, and JSON for the errors Django answers before any view runs (a 404 for a path that
no URL matches, a 400 for a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``) wherever clients read JSON:
under ``/api/`` and the voting page's ``next`` and ``answer``."""

from __future__ import annotations

from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import bad_request, page_not_found
from rest_framework.response import Response
from rest_framework.views import exception_handler

DATABASE_DOWN_RETRY_SECONDS = 2
DATABASE_DOWN_DETAIL = "The database is briefly unavailable; retry the same request."


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, OperationalError | InterfaceError):
        # A database restart: nothing was stored (the transaction rolled back), so the client
        # may resend the same request; say so instead of an HTML 500.
        return Response(
            {"detail": DATABASE_DOWN_DETAIL},
            status=503,
            headers={"Retry-After": str(DATABASE_DOWN_RETRY_SECONDS)},
        )
    return exception_handler(exc, context)


def reads_json(request: HttpRequest) -> bool:
    """Whether the request's client reads JSON: the API, and the voting page's script."""
    path = request.path
    return path.startswith("/api/") or (
        path.startswith("/s/") and path.rstrip("/").rsplit("/", 1)[-1] in ("next", "answer")
    )


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """``handler404``: JSON where the client reads JSON, Django's page elsewhere."""
    if reads_json(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)


def refused(request: HttpRequest, exception: Exception) -> HttpResponse:
    """``handler400`` (a body too large, a bad request caught before any view): JSON where the
    client reads JSON, Django's page elsewhere."""
    if reads_json(request):
        detail = "Bad request: the body is too large or malformed."
        return JsonResponse({"detail": detail}, status=400)
    return bad_request(request, exception)
