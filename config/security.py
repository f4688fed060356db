"""The Content-Security-Policy header on every response (Django 5.2 has no setting for it).

Pages load scripts only from this server, and no page has an inline script or event handler
(styles may be inline: matplotlib's SVG figures and Swagger UI carry some). The policy is
``settings.CONTENT_SECURITY_POLICY``; an empty one sends no header.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response
