"""A participant's erasure request carried out, the one sequence the Participants page, its API
and ``manage.py forget_participant`` share: forget their data, record it, and (if asked) rescore
each study whose scored ballots lost votes and record that; and the study page's "Rescore
without them", rescore and record."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet
from django.http import HttpRequest

from collector.audit.trail import Actor
from collector.models import Study
from collector.participants import forgetting, recording
from collector.participants.forgetting import Forgotten
from collector.studies import rescoring
from collector.studies.lifecycle import LifecycleError

__all__ = ["Erased", "erase", "rescore"]


@dataclass(frozen=True)
class Erased:
    """One study's part of an erasure: what was deleted, and the rescore asked for."""

    forgotten: Forgotten
    rescored: int | None = None  # closed ballots rescored; None: not rescored
    not_rescored: str = ""  # why a rescore asked for was refused (a ballot is closing)


def erase(
    who: HttpRequest | Actor, platform_id: str, studies: QuerySet[Study], *, rescore_too: bool
) -> list[Erased]:
    """Delete the participant's data in ``studies`` (:func:`forgetting.forget_participant`),
    record it, and with ``rescore_too`` rescore each study whose scored ballots lost votes (a
    study whose ballot is closing is left for the study page's "Rescore without them")."""
    done = forgetting.forget_participant(platform_id, studies)
    recording.forgotten(who, done)
    erased = []
    for result in done:
        if not (rescore_too and result.withdrawn):
            erased.append(Erased(result))
            continue
        try:
            n = rescore(who, Study.objects.get(slug=result.study))
        except LifecycleError as exc:
            erased.append(Erased(result, not_rescored=str(exc)))
        else:
            erased.append(Erased(result, rescored=n))
    return erased


def rescore(who: HttpRequest | Actor, study: Study) -> int:
    """Rescore the study without its withdrawn votes and record it; the ballots rescored.
    Raises :class:`LifecycleError` while a ballot is closing."""
    n = rescoring.rescore_without_withdrawn(study.pk)
    recording.rescored(who, study, n)
    return n
