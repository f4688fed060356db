"""Submitting a model for evaluation: check what can be checked at once, store the file, enqueue.

The request answers at once: it refuses a bad name, a file over the size limit, a compressed
file, a vectors header that claims more than the file holds, a name already taken and a study
with ``EVALUATION_MAX_QUEUED`` evaluations queued or running (a stuck one does not count:
:mod:`collector.evaluation.queueing`); otherwise it stores the upload
(``EVALUATION_UPLOAD_DIR``) and a queued evaluation. The background job
(:mod:`collector.evaluation.running`) reads and checks the whole file with
:func:`read_item_scores`, keeps the model's score for every item and removes the file; a file
that cannot be read leaves the evaluation ``refused`` with the reason and the line.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File
from django.db import IntegrityError, transaction
from django.utils import timezone

from collector import jobs
from collector.evaluation import queueing
from collector.evaluation.study_data import gold_of
from collector.models import Evaluation, Study
from collector.studies.lifecycle import NotFinished
from ranking.files import (
    InputFileError,
    check_vector_file_start,
    item_scores,
    load_word_vectors,
    read_model_scores,
    refuse_compressed,
)

NAME_MAX = 100  # Evaluation.name's max_length
PENDING = (Evaluation.Status.QUEUED, Evaluation.Status.RUNNING)


class EvaluationRefused(Exception):
    """A submission that cannot be evaluated; ``str()`` says why (with the file's line)."""


class TooManyEvaluations(EvaluationRefused):
    """The study has ``EVALUATION_MAX_QUEUED`` evaluations queued or running already."""


def read_item_scores(
    study: Study,
    path: str | Path,
    source: str,
    vectors_format: str | None = None,
    *,
    filename: str = "",
    progress: Callable[[int, int], object] | None = None,
) -> tuple[list[float | None], str]:
    """The model's score of every item of ``study`` (``Item.index`` order, None = no score)
    and a line describing how it was read. Raises :class:`EvaluationRefused`, naming the file
    ``filename`` (an upload's own name, not its stored path) and the line at fault.

    Only the vectors of the study's tokens (or the scores of its items) are kept while the
    file is read, one line at a time; ``progress(bytes_read, file_bytes)`` follows the read.
    """
    try:
        gold = gold_of(study)
    except NotFinished as exc:
        raise EvaluationRefused(str(exc)) from None
    try:
        if source == Evaluation.Source.SCORES:
            model: Any = read_model_scores(path, name=filename, only=gold, progress=progress)
            detail = "scores per item"
        elif source == Evaluation.Source.VECTORS:
            fmt = vectors_format or None
            model = load_word_vectors(
                path, fmt,  # type: ignore[arg-type]
                only_for=gold.token_a + gold.token_b, file_name=filename or None,
                progress=progress,
            )  # fmt: skip
            detail = f"word vectors ({fmt or 'format detected'}), cosine per item"
        else:
            raise EvaluationRefused(f"unknown source {source!r}: use scores or vectors")
        scores = item_scores(model, gold)
    except ValueError as exc:  # ranking's InputFileError included: it names the line
        raise EvaluationRefused(_named(exc, path, filename)) from None
    except OSError as exc:
        raise EvaluationRefused(f"the file cannot be read ({exc.strerror or exc})") from None
    values = [None if math.isnan(v) else float(v) for v in scores.tolist()]
    if all(v is None for v in values):
        raise EvaluationRefused(
            "the model scores none of the study's items (check the tokens or the item ids)"
        )
    return values, detail


def _named(error: Exception, path: str | Path, filename: str) -> str:
    """The error's message with the file's own name in place of its stored path."""
    return str(error).replace(str(path), filename or Path(path).name)


def submit(
    study: Study,
    name: str,
    upload: File | str | Path,
    source: str,
    *,
    vectors_format: str | None = None,
    missing: str = "skip",
    filename: str = "",
    created_by: Any = None,
    enqueue: bool = True,
) -> Evaluation:
    """Check the submission, store its file and a queued evaluation, and send the job once
    committed. A refused evaluation of the same name is replaced.

    ``upload`` is an uploaded file (a Django ``File``) or a file's path (copied).
    Raises :class:`EvaluationRefused` (:class:`TooManyEvaluations` when the study has its
    bound of evaluations pending); then nothing is stored.
    """
    if isinstance(upload, str | Path):
        with open(upload, "rb") as handle:
            return submit(
                study, name, File(handle, name=Path(upload).name), source,
                vectors_format=vectors_format, missing=missing, filename=filename,
                created_by=created_by, enqueue=enqueue,
            )  # fmt: skip
    name = name.strip()
    filename = filename or Path(upload.name or "model").name
    if not name or len(name) > NAME_MAX:
        raise EvaluationRefused(f"give the model a name of 1 to {NAME_MAX} characters")
    if missing not in Evaluation.Missing.values:
        raise EvaluationRefused(f"missing must be skip or last, got {missing!r}")
    if source not in Evaluation.Source.values:
        raise EvaluationRefused(f"unknown source {source!r}: use scores or vectors")
    if upload.size is not None and upload.size > settings.EVALUATION_MAX_UPLOAD_BYTES:
        raise EvaluationRefused(
            f"the file is {upload.size:,} bytes, over the limit of "
            f"{settings.EVALUATION_MAX_UPLOAD_BYTES:,} bytes"
        )
    _check_room(study, name)
    evaluation = Evaluation(
        study=study,
        name=name,
        source=source,
        source_detail=filename[:300],  # with how it was read, once read
        file_name=filename[:255],
        vectors_format=vectors_format or "",
        missing=missing,
        created_by=created_by,
    )
    evaluation.upload.save(uuid.uuid4().hex, upload, save=False)
    try:
        _check_start(evaluation)
        with transaction.atomic():
            Study.objects.select_for_update().filter(pk=study.pk).first()  # one submit at a time
            _check_room(study, name)
            Evaluation.objects.filter(
                study=study, name=name, status=Evaluation.Status.REFUSED
            ).delete()
            if enqueue:
                evaluation.sent_at = timezone.now()
            evaluation.save()
            if enqueue:
                jobs.send_after_commit(jobs.EVALUATE_MODEL, evaluation.pk)
    except IntegrityError:  # the same name submitted twice at once
        evaluation.upload.delete(save=False)
        raise EvaluationRefused(f"this study already has a model named {name!r}") from None
    except BaseException:
        evaluation.upload.delete(save=False)
        raise
    return evaluation


def _check_room(study: Study, name: str) -> None:
    """Refuse a name in use (but by a refused model) and a study with its evaluations' bound
    queued or running."""
    evaluations = Evaluation.objects.filter(study=study)
    if evaluations.filter(name=name).exclude(status=Evaluation.Status.REFUSED).exists():
        raise EvaluationRefused(f"this study already has a model named {name!r}")
    pending = queueing.pending(evaluations)  # a stuck one does not count
    if pending >= settings.EVALUATION_MAX_QUEUED:
        raise TooManyEvaluations(
            f"this study has {pending} evaluations queued or running, the most it may have "
            f"(EVALUATION_MAX_QUEUED = {settings.EVALUATION_MAX_QUEUED}): submit this model "
            "when one has finished"
        )


def _check_start(evaluation: Evaluation) -> None:
    """The checks that read only the start of the stored file: compression and a vectors
    header's claim. Raises :class:`EvaluationRefused`."""
    path = evaluation.upload.path
    try:
        if evaluation.source == Evaluation.Source.VECTORS:
            check_vector_file_start(
                path, evaluation.vectors_format or None,  # type: ignore[arg-type]
                name=evaluation.file_name,
            )  # fmt: skip
        else:
            refuse_compressed(path)
    except InputFileError as exc:
        raise EvaluationRefused(_named(exc, path, evaluation.file_name)) from None


def discard_upload(evaluation: Evaluation) -> None:
    """Remove the evaluation's stored file (read, or refused) and forget it."""
    if evaluation.upload:
        evaluation.upload.delete(save=False)
        Evaluation.objects.filter(pk=evaluation.pk).update(upload="")
