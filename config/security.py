"""The Content-Security-Policy header on every response (Django 5.2 has no setting for it).

Pages load scripts only from this server, and no page has an inline script or event handler
(styles may be inline: matplotlib's SVG figures and Swagger UI carry some). The policy is
``settings.CONTENT_SECURITY_POLICY``; an empty one sends no header.

A view may widen the policy for its own responses with :func:`extend_policy` (the voter's pages:
MTurk shows them in a frame and they post the finished HIT back to MTurk); a response that
already carries the header keeps it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

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


def widened(policy: str, sources: dict[str, tuple[str, ...]]) -> str:
    """``policy`` with more sources for some directives (``{"form-action": ("https://x",)}``).

    A directive's sources are kept and the new ones appended; ``'none'`` gives way to them. A
    directive the policy lacks is added. Directive names are case-insensitive (CSP's rule).
    """
    directives: dict[str, list[str]] = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            directives.setdefault(words[0].lower(), words[1:])
    for name, extra in sources.items():
        have = [s for s in directives.get(name, []) if s != "'none'"]
        directives[name] = have + [s for s in extra if s not in have]
    return "; ".join(" ".join([name, *values]) for name, values in directives.items())


def extend_policy(**sources: tuple[str, ...]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a view: its responses carry the policy widened by ``sources`` (keyword names
    with ``_`` for ``-``: ``frame_ancestors=("https://www.mturk.com",)``)."""
    named = {name.replace("_", "-"): values for name, values in sources.items()}

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            response = view(request, *args, **kwargs)
            policy = settings.CONTENT_SECURITY_POLICY
            if policy:
                response["Content-Security-Policy"] = widened(policy, named)
            return response

        return wrapper

    return decorate
