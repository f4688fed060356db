"""A finished study's pooled Bradley-Terry fit, stored with its items.

Fitting every vote of a 100,000-item study (two million votes) takes tens of seconds, too long
for a page and too long for the close that finishes the study: that close stores the final
ranking and marks the study finished, then sends :func:`store_pooled_fit` as a task of its own
on the closes queue (``collector.tasks.store_pooled_fit``); until it has run the study's
``pooled_fit_at`` is empty and the pages and ``dataset.json`` say the fit is pending. Beat's
sweep sends a pending fit again once its job was last sent (``pooled_fit_sent_at``) over
``STUCK_CLOSING_SECONDS`` ago (:func:`resend_lost`), and an exclusion after the end stores it
again (``collector.tasks.refit_pooled``). The fit: every item's
log-strength and a 95% Wald interval for the best ``TOP`` items of the final ranking (of every
target's ranking in a target study: ``rank_in_target`` up to ``TOP``), by
:func:`ranking.protocol.strength_intervals`, one sparse solve each. Votes of excluded voters are
left out. The study's top-ranking figure reads them.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

import ranking
from collector import jobs
from collector.models import Item, Study
from collector.studies import bulk_sql

TOP = 30  # items of the final ranking that get an interval
_LOCK_SPACE = 0x9F17  # pg_advisory_xact_lock(space, study id): one fit of a study at a time


def store_pooled_fit(study_id: int, *, again: bool = True) -> str:
    """Fit and store the pooled log-strengths, and the intervals of the final top ``TOP``.

    Runs under a transaction-scoped advisory lock of the study, so two fits (the finishing
    close's and an exclusion's refit, or a resent one) never interleave and the last one reads
    every exclusion committed before it. ``again=False`` (the fit sent by the finishing close and
    by the sweep) does nothing when a fit is stored already. Returns what happened, for the log.
    """
    with transaction.atomic():
        lock(study_id)
        study = (
            Study.objects.filter(id=study_id).values("status", "pooled_fit_at", "vote_set").first()
        )
        if study is None or study["status"] != Study.Status.FINISHED:
            return f"study {study_id} is not finished: no pooled fit to store"
        if not again and study["pooled_fit_at"] is not None:
            return f"study {study_id}: pooled fit stored already"
        _fit(study_id)
        Study.objects.filter(id=study_id).update(
            pooled_fit_at=timezone.now(), pooled_fit_vote_set=study["vote_set"]
        )
    return f"study {study_id}: pooled fit stored"


def lock(study_id: int) -> None:
    """Take the study's pooled-fit lock for the current transaction (re-entrant).

    The one lock order of every path that takes it with the study's rows: **this lock first**,
    then the ballots, then the study row (:func:`collector.studies.rescoring.
    rescore_without_withdrawn`; a fit updates the study row under it). A path that held the
    study row while waiting for this lock would deadlock with a fit waiting for that row.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_SPACE, study_id])


def _fit(study_id: int) -> None:
    rows = bulk_sql.study_votes(study_id).trusted()
    item_ids = bulk_sql.item_ids_by_index(study_id)
    n = item_ids.size
    strength = np.full(n, np.nan)
    low, high = np.full(n, np.nan), np.full(n, np.nan)
    if rows.voter.size and n >= 2:
        strength = ranking.bradley_terry(n, rows.pairs, rows.first_score)
        ranked = Item.objects.filter(study_id=study_id, final_rank__isnull=False)
        if ranked.filter(rank_in_target__isnull=False).exists():  # a target study: per target
            chosen = ranked.filter(rank_in_target__lte=TOP).values_list("index", flat=True)
        else:
            chosen = ranked.order_by("final_rank").values_list("index", flat=True)[:TOP]
        top = np.array(list(chosen), dtype=np.int64)
        if top.size:
            low[top], high[top] = ranking.protocol.strength_intervals(
                n, rows.pairs, rows.first_score, strength, top
            )
    bulk_sql.update_items(
        study_id, item_ids, {"pooled_strength": strength, "pooled_low": low, "pooled_high": high}
    )


def is_pending(study: Study) -> bool:
    """Whether the study is finished and its pooled fit not stored yet."""
    return study.status == Study.Status.FINISHED and study.pooled_fit_at is None


def fit_status(study: Study) -> dict[str, Any]:
    """The pooled fit's state for ``dataset.json`` and the API: ``pending`` or ``stored`` (when)."""
    if study.pooled_fit_at is None:
        return {"status": "pending", "stored": None}
    return {"status": "stored", "stored": study.pooled_fit_at.isoformat()}


def resend_lost(now: datetime | None = None) -> int:
    """Send again the fits pending since their job was last sent over ``STUCK_CLOSING_SECONDS``
    ago (the task was lost: a broker down at the end, a worker killed mid-fit), by beat's one rule
    :func:`collector.jobs.resend_stale` (``pooled_fit_sent_at``: the last send): each at most once
    per ``STUCK_CLOSING_SECONDS``. Returns how many were sent."""
    return jobs.resend_stale(
        Study.objects.filter(status=Study.Status.FINISHED, pooled_fit_at__isnull=True),
        jobs.STORE_POOLED_FIT,
        older_than=timedelta(seconds=settings.STUCK_CLOSING_SECONDS),
        now=now or timezone.now(),
        what="the pooled fit of study",
        stamp="pooled_fit_sent_at",
    )
