"""Nothing waits forever in a queue: evaluations whose message was lost are sent again, and an
evaluation nobody takes stops holding a place under ``EVALUATION_MAX_QUEUED``.

A queued evaluation's message can be lost with Redis (a restart without persistence, a flush);
a worker killed before it acknowledged leaves a running evaluation whose heartbeat stops. Beat's
sweep (``collector.tasks.sweep_ballots``, every ``SWEEP_SECONDS``) calls :func:`resend_lost`:

- a queued evaluation sent more than :data:`GRACE` ago whose message the broker holds neither
  waiting nor unacknowledged is sent again (the broker is Redis: its lists are read; with a
  broker that cannot be read, one sent more than ``EVALUATION_RESEND_SECONDS`` ago);
- a running evaluation whose job wrote no heartbeat for
  :data:`ALIVE_FOR` is sent again (its job died; the run starts
  over, and a late duplicate finds it running or done and does nothing).

*Stuck* (:func:`stuck`): queued for ``EVALUATION_STUCK_SECONDS`` (no worker consumes the
queue: ``/healthz?deep=1`` says so), or running without a heartbeat for ``ALIVE_FOR``; a stuck
evaluation does not count against ``EVALUATION_MAX_QUEUED``.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import logging
from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from collector import jobs
from collector.models import Evaluation

__all__ = ["ALIVE_FOR", "GRACE", "held_by_broker", "pending", "resend_lost", "stuck"]

log = logging.getLogger(__name__)

# A message is sent once its evaluation's transaction commits: give it this long to arrive.
GRACE = timedelta(seconds=10)
# A running evaluation whose job wrote no progress for this long is taken for dead (its worker
# killed): a redelivered (or resent) message runs it again. A younger one is left to its job.
ALIVE_FOR = timedelta(minutes=5)
_UNACKED = "unacked"  # kombu's Redis transport: unacknowledged messages, by delivery tag
_PRIORITY_SEPARATOR = "\x06\x16"


def stuck(now: dt.datetime | None = None) -> Q:
    """Evaluations nobody is taking (module docstring)."""
    now = now or timezone.now()
    queued_since = now - timedelta(seconds=settings.EVALUATION_STUCK_SECONDS)
    silent_since = now - ALIVE_FOR
    return Q(status=Evaluation.Status.QUEUED, created_at__lt=queued_since) | Q(
        Q(heartbeat_at__lt=silent_since) | Q(heartbeat_at__isnull=True),
        status=Evaluation.Status.RUNNING,
    )


def pending(evaluations: QuerySet[Evaluation], now: dt.datetime | None = None) -> int:
    """Evaluations queued or running that count against ``EVALUATION_MAX_QUEUED``."""
    states = (Evaluation.Status.QUEUED, Evaluation.Status.RUNNING)
    return evaluations.filter(status__in=states).exclude(stuck(now)).count()


def _task_ids(raw: Iterable[bytes | str]) -> set[int]:
    """The evaluation ids of the ``evaluate_model`` messages among kombu's Redis payloads."""
    found = set()
    for item in raw:
        try:
            payload = json.loads(item)
            if isinstance(payload, list):  # the unacked hash: [message, exchange, routing key]
                payload = payload[0]
            if payload.get("headers", {}).get("task") != jobs.EVALUATE_MODEL:
                continue
            body = base64.b64decode(payload["body"])
            args = json.loads(body)[0]
            found.add(int(args[0]))
        except (ValueError, KeyError, IndexError, TypeError):
            continue
    return found


def held_by_broker() -> set[int] | None:
    """Ids of the evaluations whose message the broker holds, waiting or unacknowledged; None
    when the broker cannot be read (not Redis, or unreachable)."""
    if not settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        return None
    from config.celery import app

    queue = settings.CELERY_QUEUE_EVALUATIONS
    try:
        with app.connection_for_read() as connection:
            client = connection.default_channel.client
            keys = [queue] + [f"{queue}{_PRIORITY_SEPARATOR}{p}" for p in range(1, 10)]
            raw: list[bytes] = []
            for key in keys:
                raw.extend(client.lrange(key, 0, -1))
            raw.extend(client.hvals(_UNACKED))
    except Exception:
        log.warning("cannot read the broker's queue %s", queue, exc_info=True)
        return None
    return _task_ids(raw)


def resend_lost(now: dt.datetime | None = None) -> dict[str, int]:
    """Send again the evaluations whose message is lost or whose job died (module docstring)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"evaluations_resent": 0}
    now = now or timezone.now()
    queued = Evaluation.objects.filter(
        Q(sent_at__lt=now - GRACE) | Q(sent_at__isnull=True, created_at__lt=now - GRACE),
        status=Evaluation.Status.QUEUED,
    )
    held = held_by_broker() if queued.exists() else set()
    if held is None:  # the broker cannot be read: by age
        resend_after = timedelta(seconds=settings.EVALUATION_RESEND_SECONDS)
        queued = queued.filter(Q(sent_at__lt=now - resend_after) | Q(sent_at__isnull=True))
        held = set()
    dead = Evaluation.objects.filter(
        Q(heartbeat_at__lt=now - ALIVE_FOR) | Q(heartbeat_at__isnull=True),
        Q(sent_at__lt=now - ALIVE_FOR) | Q(sent_at__isnull=True),  # once per ALIVE_FOR at most
        status=Evaluation.Status.RUNNING,
    )
    lost = [pk for pk in queued.values_list("id", flat=True) if pk not in held]
    lost += list(dead.values_list("id", flat=True))
    for pk in lost:
        Evaluation.objects.filter(pk=pk).update(sent_at=now)
        try:
            jobs.send_evaluation(pk)
        except Exception:
            log.exception("cannot send evaluation %s again; the next sweep tries again", pk)
    return {"evaluations_resent": len(lost)}
