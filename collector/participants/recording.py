"""The audit trail of a participant's data: what was exported, deleted or rescored, per study,
with counts and never the platform id (:func:`collector.audit.trail.record`)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from collector.audit.trail import Actor, record
from collector.models import Study
from collector.participants.forgetting import Forgotten


def exported(who: HttpRequest | Actor, stored: dict[str, Any]) -> None:
    """One ``participant.export`` entry per study the exported data came from (a study where
    their data was deleted: ``deleted`` true, what it keeps of them)."""
    for entry in stored["studies"]:
        study = Study.objects.get(slug=entry["study"]["slug"])
        record(who, "participant.export", study, votes=len(entry["votes"]))
    for entry in stored["deleted"]:
        study = Study.objects.get(slug=entry["study"]["slug"])
        record(who, "participant.export", study, votes=0, deleted=True)


def forgotten(who: HttpRequest | Actor, done: list[Forgotten]) -> None:
    """One ``participant.forget`` entry per study that lost the participant's data."""
    for result in done:
        counts = {k: v for k, v in result.as_dict().items() if k != "study"}
        record(who, "participant.forget", Study.objects.get(slug=result.study), **counts)


def rescored(who: HttpRequest | Actor, study: Study, ballots: int) -> None:
    record(who, "study.rescore", study, ballots=ballots)
