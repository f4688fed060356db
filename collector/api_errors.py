"""The API's errors: DRF's exception handler plus a retryable 503 while the database is
unreachable, and a JSON 404 for any path under ``/api/`` that no URL matches."""

from __future__ import annotations

from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found
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


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """``handler404``: JSON under ``/api/`` (a client there reads JSON), Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)
