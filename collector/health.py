"""``GET /healthz``: this web process answers; what a load balancer's health check asks.

It reads neither the database nor the cache. While PostgreSQL restarts, a check that read it
would fail on every node at once and leave the load balancer nothing to send requests to; the
voting API answers a retryable 503 then instead. A node fails the check when it does not answer
at all (stopped, killed, hung).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse


def alive(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok\n", content_type="text/plain")
