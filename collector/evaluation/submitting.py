"""Submitting a model for evaluation: read its scores or vectors, check them, store, enqueue.

Everything that can be wrong with the file is found here, while staff wait for the answer: a
bad file stores nothing. The model's score for every item is kept with the evaluation, so the
background job needs only the database (not the upload).
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from collector import jobs
from collector.evaluation.study_data import gold_of
from collector.models import Evaluation, Study
from collector.staff.exports import NotFinished
from ranking.files import item_scores, load_word_vectors, read_model_scores

NAME_MAX = 100  # Evaluation.name's max_length


class EvaluationRefused(Exception):
    """A submission that cannot be evaluated; ``str()`` says why (with the file's line)."""


def read_item_scores(
    study: Study,
    path: str | Path,
    source: str,
    vectors_format: str | None = None,
    *,
    filename: str = "",
) -> tuple[list[float | None], str]:
    """The model's score of every item of ``study`` (``Item.index`` order, None = no score)
    and a line describing how it was read. Raises :class:`EvaluationRefused`, naming the file
    ``filename`` (an upload's own name, not its temporary path) and the line at fault."""
    try:
        gold = gold_of(study)
    except NotFinished as exc:
        raise EvaluationRefused(str(exc)) from None
    try:
        if source == Evaluation.Source.SCORES:
            model: Any = read_model_scores(path)
            detail = "scores per item"
        elif source == Evaluation.Source.VECTORS:
            fmt = vectors_format or None
            model = load_word_vectors(path, fmt)  # type: ignore[arg-type]
            detail = f"word vectors ({fmt or 'format detected'}), cosine per item"
        else:
            raise EvaluationRefused(f"unknown source {source!r}: use scores or vectors")
        scores = item_scores(model, gold)
    except UnicodeDecodeError as exc:
        raise EvaluationRefused(f"the file is not UTF-8 text ({exc.reason})") from None
    except ValueError as exc:  # ranking's InputFileError included: it names the line
        raise EvaluationRefused(str(exc).replace(str(path), filename or str(path))) from None
    values = [None if math.isnan(v) else float(v) for v in scores.tolist()]
    if all(v is None for v in values):
        raise EvaluationRefused(
            "the model scores none of the study's items (check the tokens or the item ids)"
        )
    return values, detail


def submit(
    study: Study,
    name: str,
    path: str | Path,
    source: str,
    *,
    vectors_format: str | None = None,
    missing: str = "skip",
    filename: str = "",
    created_by: Any = None,
    enqueue: bool = True,
) -> Evaluation:
    """Read the model, store its evaluation (queued) and send the job once committed.

    Raises :class:`EvaluationRefused`; then nothing is stored.
    """
    name = name.strip()
    if not name or len(name) > NAME_MAX:
        raise EvaluationRefused(f"give the model a name of 1 to {NAME_MAX} characters")
    size = Path(path).stat().st_size
    if size > settings.EVALUATION_MAX_UPLOAD_BYTES:
        raise EvaluationRefused(
            f"the file is {size:,} bytes, over the limit of "
            f"{settings.EVALUATION_MAX_UPLOAD_BYTES:,} bytes"
        )
    if missing not in Evaluation.Missing.values:
        raise EvaluationRefused(f"missing must be skip or last, got {missing!r}")
    if Evaluation.objects.filter(study=study, name=name).exists():
        raise EvaluationRefused(f"this study already has a model named {name!r}")
    values, detail = read_item_scores(study, path, source, vectors_format, filename=filename)
    try:
        with transaction.atomic():
            evaluation = Evaluation.objects.create(
                study=study,
                name=name,
                source=source,
                source_detail=f"{filename or Path(path).name}: {detail}"[:300],
                item_scores=values,
                missing=missing,
                created_by=created_by,
            )
            if enqueue:
                jobs.evaluate_after_commit(evaluation.pk)
    except IntegrityError:  # the same name submitted twice at once
        raise EvaluationRefused(f"this study already has a model named {name!r}") from None
    return evaluation


@contextmanager
def upload_path(upload: Any) -> Iterator[Path]:
    """A path to an uploaded file's bytes: Django's temporary file for a large upload, else a
    temporary copy, removed afterwards."""
    if hasattr(upload, "temporary_file_path"):
        yield Path(upload.temporary_file_path())
        return
    with tempfile.NamedTemporaryFile(suffix=Path(upload.name or "").suffix) as tmp:
        for chunk in upload.chunks():
            tmp.write(chunk)
        tmp.flush()
        yield Path(tmp.name)
