"""The background run of an evaluation: read the uploaded file, then ``ranking.evaluate`` on
the study's gold and votes.

The job first reads and checks the stored upload (:func:`collector.evaluation.submitting.
read_item_scores`), keeps the model's score per item and removes the file; a file that cannot
be read leaves the evaluation ``refused`` with the reason and nothing scored. Progress (0-1)
covers both: the first half follows the bytes read, the second the evaluation's steps (all of
it when the scores were read before). It is written at most twice a second; a failure is
stored as a message.

A message delivered twice (Redis redelivers one unacknowledged after ``CELERY_VISIBILITY_TIMEOUT``)
runs the evaluation once: the job writes ``heartbeat_at`` with its progress, and a running
evaluation with a heartbeat younger than :data:`ALIVE_FOR` is left to its job.

Every model of a study is evaluated with the same seeded generator (the study's seed, purpose
``EVALUATION``), so their chance baselines and voter resamples are the same draws.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from collector.evaluation.queueing import ALIVE_FOR
from collector.evaluation.study_data import gold_of, votes_of
from collector.evaluation.submitting import (
    PENDING,
    EvaluationRefused,
    discard_upload,
    read_item_scores,
)
from collector.models import Evaluation
from collector.studies import vote_sets
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
        if evaluation.status not in PENDING:
            return f"evaluation {evaluation_id} is {evaluation.status} already"
        beat = evaluation.heartbeat_at
        alive = beat is not None and timezone.now() - beat < ALIVE_FOR
        if evaluation.status == Evaluation.Status.RUNNING and alive:  # a message redelivered
            return f"evaluation {evaluation_id} is running in another job"
        evaluation.status = Evaluation.Status.RUNNING
        evaluation.heartbeat_at = timezone.now()
        evaluation.save(update_fields=["status", "heartbeat_at"])
    study = evaluation.study
    computed_from = vote_sets.current(study.pk)  # before the votes are read
    last_write = 0.0
    start, share = 0.0, 1.0  # the part of the progress bar the current step fills

    def report(done: int, total: int) -> None:
        nonlocal last_write
        if progress is not None:
            progress(done, total)
        now = time.monotonic()
        if now - last_write >= _PROGRESS_EVERY or done == total:
            last_write = now
            value = start + share * done / max(total, 1)
            Evaluation.beat(evaluation_id, progress=value)

    try:
        if evaluation.item_scores is None:
            share = 0.5
            refusal = _read_upload(evaluation, report)
            if refusal is not None:
                return refusal
            start = 0.5
        gold = gold_of(study)
        votes = votes_of(study, gold)
        scores = np.array(
            [np.nan if v is None else v for v in evaluation.item_scores or []], dtype=np.float64
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
        Evaluation.failed(evaluation_id, exc, vote_set=computed_from)
        return f"evaluation {evaluation_id} failed: {exc}"
    Evaluation.done(evaluation_id, result=result, progress=1.0, vote_set=computed_from)
    vote_sets.follow_up(study.pk, computed_from)
    return (
        f"{evaluation.name} on {study.slug}: rho_w {result['rho_w']:.4f}, "
        f"tau_w {result['tau_w']:.4f}, n {result['n']}, coverage {result['coverage']:.3f}"
    )


def _read_upload(evaluation: Evaluation, report: Callable[[int, int], None]) -> str | None:
    """Read the evaluation's stored file into ``item_scores`` and remove the file; on a bad
    file store the refusal and return its summary (None: read)."""
    try:
        if not evaluation.upload:
            raise EvaluationRefused("the uploaded file is gone: submit the model again")
        try:
            path = evaluation.upload.path
        except NotImplementedError:  # a storage without local paths is not supported
            raise EvaluationRefused("the uploaded file cannot be read from here") from None
        values, detail = read_item_scores(
            evaluation.study, path, evaluation.source, evaluation.vectors_format or None,
            filename=evaluation.file_name, progress=report,
        )  # fmt: skip
    except EvaluationRefused as exc:
        discard_upload(evaluation)
        Evaluation.objects.filter(pk=evaluation.pk).update(
            status=Evaluation.Status.REFUSED,
            error=str(exc)[:2000],
            source_detail=f"{evaluation.file_name}: refused"[:300],
            finished_at=timezone.now(),
        )
        return f"evaluation {evaluation.pk} refused: {exc}"
    evaluation.item_scores = values
    evaluation.source_detail = f"{evaluation.file_name}: {detail}"[:300]
    Evaluation.objects.filter(pk=evaluation.pk).update(
        item_scores=values, source_detail=evaluation.source_detail
    )
    discard_upload(evaluation)
    return None
