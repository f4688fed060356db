"""``GET /healthz``: this web process answers; what a load balancer's health check asks.

It reads neither the database nor the cache. While PostgreSQL restarts, a check that read it
would fail on every node at once and leave the load balancer nothing to send requests to; the
voting API answers a retryable 503 then instead. A node fails the check when it does not answer
at all (stopped, killed, hung).

``GET /healthz?deep=1`` is for people and monitoring, not the load balancer: it also asks the
database, the broker, and the workers which queues they consume, and answers 503 naming what is
wrong, such as a queue nobody consumes (ballots would never close, or evaluations never run).
"""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse

# How long the deep check waits for the workers' replies.
WORKER_REPLY_SECONDS = 1.0


def _database() -> str | None:
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT 1")
    except Exception as exc:
        return f"database: unreachable ({exc.__class__.__name__})"
    return None


def consumed_queues() -> set[str] | None:
    """The queues the running workers consume; None when the broker cannot be reached."""
    from config.celery import app

    try:
        replies = app.control.inspect(timeout=WORKER_REPLY_SECONDS).active_queues() or {}
    except Exception:
        return None
    return {queue["name"] for queues in replies.values() for queue in queues or []}


def problems() -> list[str]:
    """What the deep check finds wrong (empty: all well)."""
    found = [p for p in (_database(),) if p]
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return found  # no broker: tasks run in the web process
    consumed = consumed_queues()
    if consumed is None:
        return [*found, "broker: unreachable"]
    for queue in (settings.CELERY_QUEUE_CLOSES, settings.CELERY_QUEUE_EVALUATIONS):
        if queue not in consumed:
            found.append(f"queue {queue}: no worker consumes it")
    return found


def alive(request: HttpRequest) -> HttpResponse:
    if request.GET.get("deep") not in ("1", "true", "yes"):
        return HttpResponse("ok\n", content_type="text/plain")
    wrong = problems()
    if wrong:
        return HttpResponse("\n".join(wrong) + "\n", content_type="text/plain", status=503)
    return HttpResponse("ok: database, broker, queues consumed\n", content_type="text/plain")
