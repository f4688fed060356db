"""The background run of an evaluation: ``ranking.evaluate`` on the study's gold and votes.

Every model of a study is evaluated with the same seeded generator (the study's seed, purpose
``EVALUATION``), so their chance baselines and voter resamples are the same draws. Progress
(0-1) is written to the evaluation at most twice a second; a failure is stored as a message.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from collector.evaluation.study_data import gold_of, votes_of
from collector.models import Evaluation
from collector.studies.designs import Purpose, study_rng
from ranking.evaluation import evaluate

log = logging.getLogger(__name__)

LARGE_STUDY_ITEMS = 10_000
_PROGRESS_EVERY = 0.5  # seconds between progress writes


def resamples_for(n_items: int) -> int:
    """Voter-bootstrap resamples for a study of ``n_items`` (settings ``EVALUATION_RESAMPLES``
    and, over 10,000 items, ``EVALUATION_RESAMPLES_LARGE``)."""
    if n_items > LARGE_STUDY_ITEMS:
        return settings.EVALUATION_RESAMPLES_LARGE
    return settings.EVALUATION_RESAMPLES


def run_evaluation(evaluation_id: int, progress: Callable[[int, int], object] | None = None) -> str:
    """Run a queued (or interrupted) evaluation and store its result; returns a summary line.

    ``progress(done, total)`` is called besides the stored progress (the command's bar).
    """
    with transaction.atomic():
        evaluation = (
            Evaluation.objects.select_for_update().select_related("study").get(pk=evaluation_id)
        )
        if evaluation.status in (Evaluation.Status.DONE, Evaluation.Status.FAILED):
            return f"evaluation {evaluation_id} is {evaluation.status} already"
        evaluation.status = Evaluation.Status.RUNNING
        evaluation.save(update_fields=["status"])
    study = evaluation.study
    last_write = 0.0

    def report(done: int, total: int) -> None:
        nonlocal last_write
        if progress is not None:
            progress(done, total)
        now = time.monotonic()
        if now - last_write >= _PROGRESS_EVERY or done == total:
            last_write = now
            Evaluation.objects.filter(pk=evaluation_id).update(progress=done / max(total, 1))

    try:
        gold = gold_of(study)
        votes = votes_of(study, gold)
        scores = np.array(
            [np.nan if v is None else v for v in evaluation.item_scores], dtype=np.float64
        )
        result = evaluate(
            gold,
            {evaluation.name: scores},
            missing=evaluation.missing,  # type: ignore[arg-type]
            rng=study_rng(study, 0, Purpose.EVALUATION),
            votes=votes,
            resamples=resamples_for(gold.n_items) if votes is not None else 0,
            estimator=study.estimator,
            progress=report,
        )
    except Exception as exc:
        log.exception("evaluation %s failed", evaluation_id)
        Evaluation.objects.filter(pk=evaluation_id).update(
            status=Evaluation.Status.FAILED, error=str(exc)[:2000], finished_at=timezone.now()
        )
        return f"evaluation {evaluation_id} failed: {exc}"
    Evaluation.objects.filter(pk=evaluation_id).update(
        status=Evaluation.Status.DONE, result=result, progress=1.0, finished_at=timezone.now()
    )
    return (
        f"{evaluation.name} on {study.slug}: rho_w {result['rho_w']:.4f}, "
        f"tau_w {result['tau_w']:.4f}, n {result['n']}, coverage {result['coverage']:.3f}"
    )
