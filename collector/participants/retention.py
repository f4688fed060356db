"""``DATA_RETENTION_DAYS``: once a study has been finished that long, its voters' identifiers
go: the hashed platform ids, the hashed addresses and the platform data (session and assignment
ids), and the hashed ids of the participants whose data was deleted at their request
(``ForgottenParticipant``). Nobody can then be linked to their votes any more, nor found by
their platform id; votes, pseudonyms and scores stay. Unset, identifiers are kept. Beat runs
:func:`remove_expired` (``collector.tasks.remove_expired_identities``); the study page says when
it will happen (:func:`removal_date`), or that it waits for the end of a study archived before it
finished (:func:`kept_until_finished`).
"""

from __future__ import annotations

import datetime as dt
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from collector.models import ForgottenParticipant, Study, Voter

__all__ = ["kept_until_finished", "remove_expired", "removal_date", "retention"]

# A voter who can still be linked to a person: what retention removes.
IDENTIFIED = ~Q(participant="") | ~Q(address="") | ~Q(platform_data={})


def retention() -> timedelta | None:
    days = settings.DATA_RETENTION_DAYS
    return None if days is None else timedelta(days=days)


def removal_date(study: Study) -> dt.datetime | None:
    """When the study's voters' identifiers will be (or were) removed; None when kept."""
    keep = retention()
    if keep is None or study.finished_at is None or study.status != Study.Status.FINISHED:
        return None
    return study.finished_at + keep


def kept_until_finished(study: Study) -> bool:
    """Whether the study was archived before it finished and holds identifiers that retention
    will not remove while it stays unfinished (retention counts from a study's end; an archived
    study hands out nothing). False when ``DATA_RETENTION_DAYS`` is unset: nothing is removed."""
    return (
        retention() is not None
        and study.archived_at is not None
        and study.status != Study.Status.FINISHED
        and Voter.objects.filter(study=study).filter(IDENTIFIED).exists()
    )


def remove_expired(now: dt.datetime | None = None) -> dict[str, int]:
    """Remove the identifiers of every study finished longer ago than the retention."""
    keep = retention()
    if keep is None:
        return {"studies": 0, "voters": 0}
    cutoff = (now or timezone.now()) - keep
    due = Study.objects.filter(
        status=Study.Status.FINISHED, finished_at__lt=cutoff, identities_removed_at__isnull=True
    ).values_list("id", flat=True)
    studies = voters = 0
    for study_id in list(due):
        with transaction.atomic():
            voters += (
                Voter.objects.filter(study_id=study_id)
                .filter(IDENTIFIED)
                .update(participant="", address="", platform_data={})
            )
            ForgottenParticipant.objects.filter(study_id=study_id).delete()
            Study.objects.filter(pk=study_id).update(identities_removed_at=timezone.now())
            studies += 1
    return {"studies": studies, "voters": voters}
