"""Nothing waits forever in a queue: evaluations whose message was lost are sent again, and an
evaluation nobody takes stops holding a place under ``EVALUATION_MAX_QUEUED``.

A queued evaluation's message can be lost with Redis (a restart without persistence, a flush);
a worker killed before it acknowledged leaves a running evaluation whose heartbeat stops. Beat's
sweep (``collector.tasks.sweep_jobs``, every ``SWEEP_SECONDS``) calls :func:`resend_lost`:

- a queued evaluation sent more than :data:`GRACE` ago whose message the broker holds neither
  waiting nor unacknowledged is sent again (the broker is Redis: its lists are read; with a
  broker that cannot be read, one sent more than ``EVALUATION_RESEND_SECONDS`` ago);
- a running evaluation whose job wrote no heartbeat for
  :data:`ALIVE_FOR` is sent again (its job died; the run starts
  over, and a late duplicate finds it running or done and does nothing).

A queued model comparison (:func:`collector.evaluation.paired.resend_lost`) is sent again by the
first rule: :func:`unheld` gives both the rows whose message the broker does not hold. Each is
sent by :func:`collector.jobs.resend_stale`, which sets its ``sent_at`` to the sweep's time.

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
from typing import TypeVar

from django.conf import settings
from django.db.models import Model, Q, QuerySet
from django.utils import timezone

from collector import jobs
from collector.models import Evaluation

__all__ = ["ALIVE_FOR", "GRACE", "held_by_broker", "pending", "resend_lost", "stuck", "unheld"]

log = logging.getLogger(__name__)
M = TypeVar("M", bound=Model)

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
    return Q(status=Evaluation.Status.QUEUED, created_at__lt=queued_since) | Q(
        Evaluation.silent(now, ALIVE_FOR), status=Evaluation.Status.RUNNING
    )


def pending(evaluations: QuerySet[Evaluation], now: dt.datetime | None = None) -> int:
    """Evaluations queued or running that count against ``EVALUATION_MAX_QUEUED``."""
    states = (Evaluation.Status.QUEUED, Evaluation.Status.RUNNING)
    return evaluations.filter(status__in=states).exclude(stuck(now)).count()


def _task_ids(raw: Iterable[bytes | str], task: str) -> set[int]:
    """The first arguments (the row ids) of the ``task`` messages among kombu's Redis payloads."""
    found = set()
    for item in raw:
        try:
            payload = json.loads(item)
            if isinstance(payload, list):  # the unacked hash: [message, exchange, routing key]
                payload = payload[0]
            if payload.get("headers", {}).get("task") != task:
                continue
            body = base64.b64decode(payload["body"])
            args = json.loads(body)[0]
            found.add(int(args[0]))
        except (ValueError, KeyError, IndexError, TypeError):
            continue
    return found


def held_by_broker(task: str = jobs.EVALUATE_MODEL) -> set[int] | None:
    """Ids of the rows whose ``task`` message (on the evaluations queue: an evaluation's run by
    default, or a model comparison) the broker holds, waiting or unacknowledged; None when the
    broker cannot be read (not Redis, or unreachable)."""
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
    return _task_ids(raw, task)


def unheld(queued: QuerySet[M], task: str, now: dt.datetime) -> tuple[QuerySet[M], timedelta]:
    """The queued rows whose ``task`` message the broker does not hold, and how long after its
    last send such a row is taken for lost (module docstring).

    A row never sent is counted from its creation. The broker is read only when a row was sent
    over :data:`GRACE` ago; when it cannot be read, every queued row is returned, to be sent
    again once ``EVALUATION_RESEND_SECONDS`` have passed.
    """
    queued = queued.exclude(sent_at__isnull=True, created_at__gte=now - GRACE)
    waiting = queued.filter(jobs.sent_before(now - GRACE))
    held = held_by_broker(task) if waiting.exists() else set()
    if held is None:  # the broker cannot be read: by age
        return queued, max(GRACE, timedelta(seconds=settings.EVALUATION_RESEND_SECONDS))
    return (queued.exclude(pk__in=held) if held else queued), GRACE


def resend_lost(now: dt.datetime | None = None) -> dict[str, int]:
    """Send again the evaluations whose message is lost or whose job died (module docstring)."""
    now = now or timezone.now()
    queued, after = unheld(
        Evaluation.objects.filter(status=Evaluation.Status.QUEUED), jobs.EVALUATE_MODEL, now
    )
    dead = Evaluation.objects.filter(
        Evaluation.silent(now, ALIVE_FOR), status=Evaluation.Status.RUNNING
    )
    sent = jobs.resend_stale(
        queued, jobs.EVALUATE_MODEL, older_than=after, now=now, what="evaluation"
    )
    # A dead one once per ALIVE_FOR at most.
    sent += jobs.resend_stale(
        dead, jobs.EVALUATE_MODEL, older_than=ALIVE_FOR, now=now, what="evaluation"
    )
    return {"evaluations_resent": sent}
