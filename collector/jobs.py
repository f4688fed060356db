"""Sending the background jobs by task name: the lifecycle asks for a ballot's close here, and a
submitted evaluation for its run, so neither imports the Celery task module (which imports them).

:func:`resend_stale` is beat's one rule for a job whose message may be lost (an evaluation, a
model comparison, a release build, a reliability report or typed top, a finished study's pooled
fit, a study's Prolific wave): a row not finished whose time of last send (``sent_at``, or the
model's field of that meaning) is older than a timeout (or unset) is sent again and that time set
to now, so it is sent once per timeout at most.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet

log = logging.getLogger(__name__)

FINISH_CLOSE_JOB = "collector.tasks.finish_close_job"
REFIT_POOLED = "collector.tasks.refit_pooled"
STORE_POOLED_FIT = "collector.tasks.store_pooled_fit"
EVALUATE_MODEL = "collector.tasks.evaluate_model"
BUILD_RELEASE = "collector.tasks.build_release"
STUDY_RELIABILITY = "collector.tasks.study_reliability"
SETTLED_TOP_K = "collector.tasks.settled_top_k"
COMPARE_MODELS = "collector.tasks.compare_models"
RECOMPUTE_STALE = "collector.tasks.recompute_stale"
PROLIFIC = "collector.tasks.prolific_job"
# One quick retry only: a job is often sent after a vote committed, inside the voter's request.
_SEND_RETRY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}


def send(task: str, *args: int) -> None:
    """Send the job ``task(*args)`` now; with no broker (the demo, ``CELERY_TASK_ALWAYS_EAGER``),
    run it in this process.

    A broker that is down is logged, not raised: the row that asked for the job keeps its
    not-finished state, and beat's sweep sends the job again after its timeout.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        current_app.tasks[task].apply(args=args)
        return
    try:
        # No result: subscribing to it retries a dead Redis for ~20 s (and nothing reads it).
        current_app.send_task(task, args, retry=True, retry_policy=_SEND_RETRY, ignore_result=True)
    except Exception:
        log.exception("cannot enqueue %s%s; the sweep will resend it", task, args)


def send_after_commit(task: str, *args: int) -> None:
    """:func:`send` the job ``task(*args)`` once the current transaction commits (at once when
    none is open)."""
    transaction.on_commit(lambda: send(task, *args))


def sent_before(when: datetime, stamp: str = "sent_at") -> Q:
    """Rows whose job was last sent before ``when``, or never (their ``stamp`` field unset)."""
    return Q(**{f"{stamp}__lt": when}) | Q(**{f"{stamp}__isnull": True})


def resend_stale(
    rows: QuerySet[Any],
    job: str | Callable[[int], object],
    *,
    older_than: timedelta,
    now: datetime,
    what: str,
    stamp: str = "sent_at",
) -> int:
    """Send again the jobs of ``rows`` last sent more than ``older_than`` before ``now``.

    Parameters
    ----------
    rows
        The rows whose job has not finished (the caller's filter: a status, a silent heartbeat,
        a message the broker does not hold); the model has the field ``stamp``.
    job
        The task name of one row's job, sent with the row's primary key by :func:`send`; or a
        function that sends one row's job (or jobs) now, given its primary key.
    older_than
        How long after its last send (or at once, when never sent) a row's job is sent again.
    now
        The sweep's time: each row sent again gets it as its ``stamp``, before it is sent.
    what
        The row's kind in the log line of a send that fails (``"evaluation"``).
    stamp
        The model's field holding when the row's job was last sent (``sent_at``; a study's
        pooled fit: ``pooled_fit_sent_at``).

    Returns
    -------
    int
        How many were sent again (a send that fails counts: it is logged, and the next sweep
        tries again once ``older_than`` has passed); 0 with no broker (the demo), where every
        job ran in the process that asked for it.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return 0
    lost = list(rows.filter(sent_before(now - older_than, stamp)).values_list("pk", flat=True))
    for pk in lost:
        rows.model.objects.filter(pk=pk).update(**{stamp: now})
        try:
            if isinstance(job, str):
                send(job, pk)
            else:
                job(pk)
        except Exception:
            log.exception("cannot send %s %s again; the next sweep tries again", what, pk)
    return len(lost)
