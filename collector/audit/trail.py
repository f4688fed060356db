"""The audit trail: who changed what in which study, when and from which address.

Every staff action that changes a study or its data calls :func:`record` once, from the one
place the action happens (its view, API view or management command), after the change
succeeded and in the same transaction where there is one::

    from collector.audit.trail import record

    record(request, "study.pause", study)                      # a page or API view
    record(request, "voter.exclude", study, voter=p, voided=3)  # detail: short JSON values
    record(self.actor, "ballot.open", study, ballot=2)         # a command (see commands/_common)

``who`` is the request (its user, and its client address as the rate limits read it: behind
``NUM_PROXIES`` proxies, the address the outermost one saw) or an :class:`Actor`
(:func:`command_actor` for a management command: "command line", or the ``--as`` user). The
row names the study and the actor by plain values, so a deleted study or user keeps its trail;
a trigger refuses every UPDATE and DELETE of a row (append-only).

The actions, with the words the History page shows, are :data:`ACTIONS`; add one there before
recording it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest

from collector.client_address import client_address as address_of
from collector.models import AuditEntry, Study

COMMAND_LINE = "command line"

ACTIONS = {
    "study.create": "created the study",
    "study.duplicate": "created the study as a duplicate",
    "study.edit": "edited the texts",
    "study.pause": "paused the study",
    "study.resume": "resumed the study",
    "study.archive": "archived the study",
    "study.unarchive": "unarchived the study",
    "study.delete": "deleted the study",
    "ballot.open": "opened a ballot",
    "ballot.close": "closed a ballot early",
    "votes.simulate": "simulated votes",
    "voter.exclude": "excluded a voter",
    "checks.settings": "changed the attention-check settings",
    "checks.add": "added attention checks",
    "checks.remove": "removed an attention check",
    "evaluation.submit": "submitted a model for evaluation",
    "evaluation.remove": "removed an evaluation",
    "evaluation.compare": "asked for the paired difference of two models",
    "reliability.top_k": "asked for the settled top of a typed k",
    "reliability.threshold": "changed the probability a settled top needs",
    "member.add": "added a member",
    "member.role": "changed a member's role",
    "member.remove": "removed a member",
    "release.publish": "released the dataset",
    "participant.find": "looked up a platform id's voter",
    "participant.view": "looked at a participant's data",
    "participant.export": "exported a participant's data",
    "participant.forget": "deleted a participant's data",
    "study.rescore": "rescored the study without withdrawn votes",
    "prolific.create": "created the Prolific study",
    "prolific.link": "linked a Prolific study",
    "prolific.terms": "changed the Prolific terms",
    "prolific.transition": "changed the Prolific study's places or status",
    "prolific.sync": "approved and paid on Prolific",
}


@dataclass(frozen=True)
class Actor:
    """Who did it: a user (id and name as they were then) or the command line; from where."""

    user_id: int | None
    name: str
    address: str | None = None


def client_address(request: HttpRequest) -> str | None:
    """The request's client address, as the rate limits read it (``NUM_PROXIES``)."""
    return address_of(request) or None


def request_actor(request: HttpRequest) -> Actor:
    user = request.user
    return Actor(user.pk, user.get_username(), client_address(request))


def command_actor(user=None) -> Actor:
    """A management command's actor: the ``--as`` user, else "command line"."""
    if user is None:
        return Actor(None, COMMAND_LINE)
    return Actor(user.pk, user.get_username())


def record(who: HttpRequest | Actor, action: str, study: Study | None, **detail: Any):
    """Append one entry: ``who`` (a request or an :class:`Actor`) did ``action`` (one of
    :data:`ACTIONS`) to ``study``, with ``detail`` (JSON values: what, e.g. a ballot number)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}: add it to ACTIONS")
    actor = who if isinstance(who, Actor) else request_actor(who)
    return AuditEntry.objects.create(
        actor_id=actor.user_id,
        actor=actor.name,
        address=actor.address,
        action=action,
        study_id=study.pk if study is not None else None,
        study_slug=study.slug if study is not None else "",
        detail=detail,
    )


def trail(study_id: int) -> QuerySet[AuditEntry]:
    """The study's entries, newest first (a deleted study's too: by its id)."""
    return AuditEntry.objects.filter(study_id=study_id).order_by("-id")


def describe(entry: AuditEntry) -> str:
    return ACTIONS.get(entry.action, entry.action)
