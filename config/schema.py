"""The OpenAPI schema: the voting API for everyone, the whole API (staff endpoints too) for staff.

A voter's client needs the voting API's schema; the staff API's shape is nobody else's business.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView
from rest_framework.request import Request
from rest_framework.response import Response


class SchemaView(SpectacularAPIView):
    @extend_schema(exclude=True)  # the schema is not part of itself
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        staff = bool(request.user and request.user.is_authenticated and request.user.is_staff)
        # The voting URLconf holds the voting API's full paths: the public schema is made of it.
        self.urlconf = None if staff else "collector.voting.urls"
        return super().get(request, *args, **kwargs)
