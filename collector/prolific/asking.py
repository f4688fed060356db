"""The lifecycle's one call into Prolific: ask for a study's Prolific job after each change of
its ballots or switches (:func:`request`); the job itself is :func:`collector.prolific.waves.apply`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from collector import jobs
from collector.models import ProlificLink

__all__ = ["request"]


def request(study_id: int) -> None:
    """Ask for the study's Prolific job once the current transaction commits (nothing without a
    token or a linked Prolific study)."""
    if not settings.PROLIFIC_API_TOKEN:
        return
    now = timezone.now()
    link_id = ProlificLink.objects.filter(study_id=study_id).values_list("pk", flat=True).first()
    if link_id is None:
        return
    # The caller may hold a ballot's lock: never wait here for a job that is talking to Prolific
    # (it locks its link's row). A link locked so keeps its stamps; the job sent below, and beat's
    # sweep (which compares the wave wanted with the one applied), bring it to the wanted wave.
    with transaction.atomic():
        free = ProlificLink.objects.select_for_update(skip_locked=True).filter(pk=link_id)
        ProlificLink.objects.filter(pk__in=list(free.values_list("pk", flat=True))).update(
            wanted_at=now, sent_at=now
        )
    jobs.send_after_commit(jobs.PROLIFIC, link_id)
