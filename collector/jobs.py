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
# One quick retry only: a close is sent after a vote committed, inside the voter's request.
_SEND_RETRY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}


def finish_close_after_commit(ballot_id: int) -> None:
    """Send the finishing of ``ballot_id``'s close (the task ``finish_close_job``) once the
    current transaction commits."""
    transaction.on_commit(lambda: send_finish_close(ballot_id))


def send_finish_close(ballot_id: int) -> None:
    """Send the finishing of ``ballot_id``'s close now; with no broker (the demo), run it in
    this process.

    A broker that is down is logged, not raised: the vote is stored and the ballot stays
    ``closing``, and the sweep resends the close after ``STUCK_CLOSING_SECONDS``.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        current_app.tasks[FINISH_CLOSE_JOB].apply(args=(ballot_id,))
        return
    try:
        # No result: subscribing to it retries a dead Redis for ~20 s (and nothing reads it).
        current_app.send_task(
            FINISH_CLOSE_JOB, (ballot_id,), retry=True, retry_policy=_SEND_RETRY, ignore_result=True
        )
    except Exception:
        log.exception("cannot enqueue the close of ballot %s; the sweep will resend it", ballot_id)


def pooled_fit_after_commit(study_id: int) -> None:
    """Send the pooled fit of a study that has just finished, once its close commits."""
    transaction.on_commit(lambda: send_pooled_fit(study_id))


def send_pooled_fit(study_id: int) -> None:
    """Send a finished study's pooled fit now (with no broker, the demo, run it here).

    A broker that is down is logged, not raised: the study is finished and its ranking stored;
    the sweep resends the fit after ``STUCK_CLOSING_SECONDS``.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        current_app.tasks[STORE_POOLED_FIT].apply(args=(study_id,))
        return
    try:
        current_app.send_task(
            STORE_POOLED_FIT, (study_id,), retry=True, retry_policy=_SEND_RETRY, ignore_result=True
        )
    except Exception:
        log.exception(
            "cannot enqueue the pooled fit of study %s; the sweep will resend it", study_id
        )


def _send_after_commit(task: str, *args: int) -> None:
    """Send ``task(*args)`` once the current transaction commits (with no broker, the demo,
    run it in this process)."""

    def send() -> None:
        if settings.CELERY_TASK_ALWAYS_EAGER:
            current_app.tasks[task].apply(args=args)
        else:
            current_app.send_task(task, args, ignore_result=True)

    transaction.on_commit(send)


def refit_pooled_after_commit(study_id: int) -> None:
    """Refit a finished study's stored pooled Bradley-Terry strengths (after an exclusion)."""
    _send_after_commit(REFIT_POOLED, study_id)


def evaluate_after_commit(evaluation_id: int) -> None:
    """Run a queued evaluation."""
    _send_after_commit(EVALUATE_MODEL, evaluation_id)


def send_evaluation(evaluation_id: int) -> None:
    """Send a queued evaluation's run now (the sweep's resend of a lost message)."""
    current_app.send_task(EVALUATE_MODEL, (evaluation_id,), ignore_result=True)


def build_release_after_commit(release_id: int) -> None:
    """Write a building release's bundle (:mod:`collector.releases.building`)."""
    _send_after_commit(BUILD_RELEASE, release_id)


def send_release_build(release_id: int) -> None:
    """Send a building release's job now (the sweep's resend of a lost one)."""
    current_app.send_task(BUILD_RELEASE, (release_id,), ignore_result=True)


def study_reliability_after_commit(study_id: int, ballot: int) -> None:
    """Compute and store the study's reliability and settled top after ``ballot``, once the
    close that asks for it commits; a broker that is down is logged, not raised (the close has
    committed): the sweep resends the job after ``RELIABILITY_STUCK_SECONDS``."""

    def send() -> None:
        try:
            send_reliability(study_id, ballot)
        except Exception:
            log.exception(
                "cannot enqueue the reliability of study %s after ballot %s; the sweep will "
                "resend it",
                study_id,
                ballot,
            )

    transaction.on_commit(send)


def send_reliability(study_id: int, ballot: int) -> None:
    """Send the reliability job now (with no broker, the demo, run it here)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        current_app.tasks[STUDY_RELIABILITY].apply(args=(study_id, ballot))
        return
    current_app.send_task(
        STUDY_RELIABILITY, (study_id, ballot), retry=True, retry_policy=_SEND_RETRY,
        ignore_result=True,
    )  # fmt: skip


def settled_top_k_after_commit(reliability_id: int, k: int) -> None:
    """Compute a typed top ``k`` of a stored reliability report."""
    _send_after_commit(SETTLED_TOP_K, reliability_id, k)


def send_settled_top_k(reliability_id: int, k: int) -> None:
    """Send a typed top's job now (the sweep's resend of a lost one)."""
    current_app.send_task(SETTLED_TOP_K, (reliability_id, k), ignore_result=True)


def compare_models_after_commit(comparison_id: int) -> None:
    """Compare two evaluated models on the same voter resamples."""
    _send_after_commit(COMPARE_MODELS, comparison_id)


def send_comparison(comparison_id: int) -> None:
    """Send a queued model comparison's job now (the sweep's resend of a lost one)."""
    current_app.send_task(COMPARE_MODELS, (comparison_id,), ignore_result=True)


def recompute_after_commit(study_id: int) -> None:
    """Recompute a study's figures stale after a change of its counted votes, once the change
    commits (:func:`collector.studies.vote_sets.recompute`); a broker that is down is logged,
    not raised: beat's sweep sends it again."""

    def send() -> None:
        try:
            send_recompute(study_id)
        except Exception:
            log.exception("cannot enqueue the recompute of study %s: sweep resends it", study_id)

    transaction.on_commit(send)


def prolific_after_commit(link_id: int) -> None:
    """Bring a study's Prolific study to its wave (:mod:`collector.prolific.waves`) once the
    change that asks for it commits; a broker that is down is logged, not raised: the sweep
    resends the job after ``PROLIFIC_RESEND_SECONDS``."""

    def send() -> None:
        try:
            send_prolific(link_id)
        except Exception:
            log.exception(
                "cannot enqueue the Prolific job of link %s; the sweep resends it", link_id
            )

    transaction.on_commit(send)


def send_recompute(study_id: int) -> None:
    """Send the recomputing of a study's stale figures now (with no broker, run it here)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        current_app.tasks[RECOMPUTE_STALE].apply(args=(study_id,))
        return
    current_app.send_task(
        RECOMPUTE_STALE, (study_id,), retry=True, retry_policy=_SEND_RETRY, ignore_result=True
    )


def send_prolific(link_id: int) -> None:
    """Send a study's Prolific job now (with no broker, the demo, run it here)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        current_app.tasks[PROLIFIC].apply(args=(link_id,))
        return
    current_app.send_task(
        PROLIFIC, (link_id,), retry=True, retry_policy=_SEND_RETRY, ignore_result=True
    )


def sent_before(when: datetime, stamp: str = "sent_at") -> Q:
    """Rows whose job was last sent before ``when``, or never (their ``stamp`` field unset)."""
    return Q(**{f"{stamp}__lt": when}) | Q(**{f"{stamp}__isnull": True})


def resend_stale(
    rows: QuerySet[Any],
    send: Callable[[int], object],
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
    send
        Sends one row's job (or jobs) now, given its primary key.
    older_than
        How long after its last send (or at once, when never sent) a row's job is sent again.
    now
        The sweep's time: each row sent again gets it as its ``stamp``, before it is sent.
    what
        The row's kind in the log line of a send that fails (``"evaluation"``).
    stamp
        The model's field holding when the row's job was last sent (``sent_at``; a study's
        pooled fit: ``pooled_fit_sent_at``; a reliability report: ``requested_at``).

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
            send(pk)
        except Exception:
            log.exception("cannot send %s %s again; the next sweep tries again", what, pk)
    return len(lost)
