"""Sending the background jobs by task name: the lifecycle asks for a ballot's close here, and a
submitted evaluation for its run, so neither imports the Celery task module (which imports them)."""

from __future__ import annotations

import logging

from celery import current_app
from django.conf import settings
from django.db import transaction

log = logging.getLogger(__name__)

CLOSE_BALLOT = "collector.tasks.close_ballot"
REFIT_POOLED = "collector.tasks.refit_pooled"
EVALUATE_MODEL = "collector.tasks.evaluate_model"
STUDY_RELIABILITY = "collector.tasks.study_reliability"
SETTLED_TOP_K = "collector.tasks.settled_top_k"
COMPARE_MODELS = "collector.tasks.compare_models"
# One quick retry only: a close is sent after a vote committed, inside the voter's request.
_SEND_RETRY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}


def close_ballot_after_commit(ballot_id: int) -> None:
    """Send the close of ``ballot_id`` once the current transaction commits."""
    transaction.on_commit(lambda: send_close_ballot(ballot_id))


def send_close_ballot(ballot_id: int) -> None:
    """Send the close of ``ballot_id`` now; with no broker (the demo), run it in this process.

    A broker that is down is logged, not raised: the vote is stored and the ballot stays
    ``closing``, and the sweep resends the close after ``STUCK_CLOSING_SECONDS``.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        current_app.tasks[CLOSE_BALLOT].apply(args=(ballot_id,))
        return
    try:
        # No result: subscribing to it retries a dead Redis for ~20 s (and nothing reads it).
        current_app.send_task(
            CLOSE_BALLOT, (ballot_id,), retry=True, retry_policy=_SEND_RETRY, ignore_result=True
        )
    except Exception:
        log.exception("cannot enqueue the close of ballot %s; the sweep will resend it", ballot_id)


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


def study_reliability_after_commit(study_id: int, ballot: int) -> None:
    """Compute and store the study's reliability and settled top after ``ballot``."""
    _send_after_commit(STUDY_RELIABILITY, study_id, ballot)


def settled_top_k_after_commit(reliability_id: int, k: int) -> None:
    """Compute a typed top ``k`` of a stored reliability report."""
    _send_after_commit(SETTLED_TOP_K, reliability_id, k)


def compare_models_after_commit(comparison_id: int) -> None:
    """Compare two evaluated models on the same voter resamples."""
    _send_after_commit(COMPARE_MODELS, comparison_id)
