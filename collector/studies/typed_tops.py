"""A settled top of a ``k`` staff type, computed in the background after the latest stored
report (:mod:`collector.studies.reliability`) on the same generator as its stored tops, so it
agrees with them where they overlap; kept in the report's ``custom`` with the vote set it was
computed from."""

from __future__ import annotations

from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from collector import jobs
from collector.models import Study, StudyReliability
from collector.studies.designs import study_groups
from collector.studies.reliability import (
    ReliabilityRefused,
    _latest,
    _top_entries,
    generators,
    settled_top,
    study_votes,
)

__all__ = ["MAX_CUSTOM_K", "MAX_CUSTOM_PER_BALLOT", "request_k", "store_k"]

MAX_CUSTOM_K = 1000  # the largest k staff may type (each costs one posterior fit and its draws)
MAX_CUSTOM_PER_BALLOT = 10  # typed k kept per ballot


def request_k(study: Study, k: int) -> tuple[StudyReliability, bool]:
    """Ask for the settled top ``k`` after the latest stored ballot (computed in the
    background): the report's row, and whether a job was sent (False: that ``k`` is stored or
    computing already); raises :class:`ReliabilityRefused` for a ``k`` out of range."""
    row = _latest(study)
    if row is None:
        raise ReliabilityRefused("no reliability figures yet: wait for the first ballot's close")
    groups = study_groups(study)
    largest = int(np.bincount(groups).max()) if groups is not None else study.items.count()
    most = min(MAX_CUSTOM_K, largest - 1)
    if not 1 <= k <= most:
        which = "a target's candidates" if groups is not None else "the study's items"
        raise ReliabilityRefused(
            f"k must be a whole number from 1 to {most} (fewer than {which}, at most "
            f"{MAX_CUSTOM_K}), got {k}"
        )
    with transaction.atomic():
        row = StudyReliability.objects.select_for_update().get(pk=row.pk)
        known = {e["k"] for e in (row.result or {}).get("settled_top", []) if not e["custom"]}
        if k in known or str(k) in row.custom or k in row.requested:
            return row, False
        if len(row.custom) + len(row.requested) >= MAX_CUSTOM_PER_BALLOT:
            raise ReliabilityRefused(
                f"at most {MAX_CUSTOM_PER_BALLOT} typed tops per ballot; these are computed: "
                + ", ".join(str(x) for x in sorted([*map(int, row.custom), *row.requested]))
            )
        row.requested = sorted([*row.requested, k])
        row.sent_at = timezone.now()
        row.save(update_fields=["requested", "sent_at"])
        jobs.send_after_commit(jobs.SETTLED_TOP_K, row.pk, k)
    return row, True


def store_k(row_id: int, k: int) -> str:
    """Compute and store the typed top ``k`` of a stored report (the background job)."""
    row = StudyReliability.objects.select_related("study").filter(pk=row_id).first()
    if row is None or row.result is None:
        return f"reliability {row_id} is gone or not computed"
    study = row.study
    computed_from = study.vote_set
    inputs = study_votes(study)
    entries: list[dict[str, Any]] = []
    if inputs is not None:
        _, top_rng = generators(row.seed, row.ballot)
        top = settled_top(
            inputs.votes, top_rng, after=row.ballot, ks=[k], with_survivors=False,
            resamples=settings.RELIABILITY_RESAMPLES, estimator=study.estimator,
            threshold=study.settled_threshold,
        )  # fmt: skip
        entries = _top_entries(top, inputs, np.zeros(1, dtype=np.int64), custom=True)
        entries = [{**e, "vote_set": computed_from} for e in entries]
    with transaction.atomic():
        row = StudyReliability.objects.select_for_update().get(pk=row_id)
        row.custom = {**row.custom, str(k): entries}
        row.requested = [x for x in row.requested if x != k]
        row.save(update_fields=["custom", "requested"])
    return f"study {study.slug} after ballot {row.ballot}: top {k} stored"
