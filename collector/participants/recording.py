"""The audit trail of a participant's data: what was looked at, exported, deleted or rescored,
per study, with counts and never the platform id (:func:`collector.audit.trail.record`)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from collector.audit.trail import Actor, record
from collector.models import Study
from collector.participants.forgetting import Forgotten


def exported(who: HttpRequest | Actor, stored: dict[str, Any]) -> None:
    """One ``participant.export`` entry per study the exported data came from (a study where
    their data was deleted: ``deleted`` true, what it keeps of them)."""
    _per_study(who, "participant.export", stored)


def viewed(who: HttpRequest | Actor, stored: dict[str, Any]) -> None:
    """One ``participant.view`` entry per study whose data about the participant a page showed
    (the Participants look-up, the delete confirmation)."""
    _per_study(who, "participant.view", stored)


def _per_study(who: HttpRequest | Actor, action: str, stored: dict[str, Any]) -> None:
    for entry in stored["studies"]:
        study = Study.objects.get(slug=entry["study"]["slug"])
        record(who, action, study, votes=len(entry["votes"]))
    for entry in stored["deleted"]:
        study = Study.objects.get(slug=entry["study"]["slug"])
        record(who, action, study, votes=0, deleted=True)


def forgotten(who: HttpRequest | Actor, done: list[Forgotten]) -> None:
    """One ``participant.forget`` entry per study that lost the participant's data."""
    for result in done:
        counts = {k: v for k, v in result.as_dict().items() if k != "study"}
        record(who, "participant.forget", Study.objects.get(slug=result.study), **counts)


def rescored(who: HttpRequest | Actor, study: Study, ballots: int) -> None:
    record(who, "study.rescore", study, ballots=ballots)
