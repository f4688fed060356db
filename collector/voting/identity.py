"""Who is voting: crowd-platform participants from the study link's query string, or anonymous
visitors kept in the session.

The study link accepts

- Prolific: ``PROLIFIC_PID`` (the participant), ``STUDY_ID``, ``SESSION_ID``;
- MTurk: ``workerId`` (the participant), ``assignmentId``, ``hitId``, ``turkSubmitTo``; while a
  worker only previews the HIT, MTurk sends ``assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE`` and no
  ``workerId``: they see the instructions but get no work;
- ``participant``: any other platform's id.

The same (study, source, participant) is always the same voter, found by the keyed hash of the
id (:mod:`collector.voting.participant_ids`; the id itself is never stored). Anyone else is
anonymous: one new voter per browser session. A platform participant who declines is recorded
(:func:`decline`), so that they get the no-consent code whenever they come back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.utils import timezone

from collector.models import Study, Vote, Voter
from collector.voting.participant_ids import participant_key
from collector.voting.store import address_key

# The voting API's voter credential (returned by POST /api/v1/studies/<slug>/voters).
TOKEN_HEADER = "X-Voter-Token"
TOKEN_META = "HTTP_X_VOTER_TOKEN"  # the header in request.META
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
MAX_PARTICIPANT_LENGTH = 200

PROLIFIC_FIELDS = ("STUDY_ID", "SESSION_ID")
MTURK_FIELDS = ("assignmentId", "hitId", "turkSubmitTo")


@dataclass(frozen=True)
class Identity:
    """Who the study link says the visitor is. ``participant == ""`` means anonymous."""

    source: str = Voter.Source.ANONYMOUS
    participant: str = ""
    platform_data: dict[str, str] = field(default_factory=dict)
    preview: bool = False


def _value(params: Mapping[str, str], name: str) -> str:
    """A query parameter as stored: trimmed, cut to length, without NUL characters (no
    platform sends them, and PostgreSQL's text cannot hold them)."""
    return (params.get(name) or "").replace("\x00", "").strip()[:MAX_PARTICIPANT_LENGTH]


def identify(params: Mapping[str, str]) -> Identity:
    """The identity carried by a study link's query parameters."""
    if pid := _value(params, "PROLIFIC_PID"):
        data = {k: v for k in PROLIFIC_FIELDS if (v := _value(params, k))}
        return Identity(Voter.Source.PROLIFIC, pid, data)
    if _value(params, "assignmentId") == MTURK_PREVIEW:
        return Identity(Voter.Source.MTURK, preview=True)
    if worker := _value(params, "workerId"):
        data = {k: v for k in MTURK_FIELDS if (v := _value(params, k))}
        return Identity(Voter.Source.MTURK, worker, data)
    if participant := _value(params, "participant"):
        return Identity(Voter.Source.PARTICIPANT, participant)
    return Identity()


def _lookup(study: Study, identity: Identity) -> dict[str, Any]:
    """The fields that find a platform participant's voter: (study, source, hashed id)."""
    key = participant_key(identity.participant)
    return {"study": study, "source": identity.source, "participant": key}


def platform_voter(study: Study, identity: Identity) -> Voter | None:
    """The study's voter of this platform participant, if they came before (else None)."""
    if identity.preview or not identity.participant:
        return None
    return Voter.objects.filter(**_lookup(study, identity)).first()


def decline(study: Study, identity: Identity) -> None:
    """A platform participant declined on the consent page: record it (their hashed id and the
    time), unless they agreed before or answered something. Anonymous visitors leave nothing."""
    if identity.preview or not identity.participant:
        return
    voter, created = get_or_create_voter(study, identity)
    if created or (
        voter.consented_at is None
        and voter.declined_at is None
        and not Vote.objects.filter(voter=voter).exists()
    ):
        Voter.objects.filter(pk=voter.pk).update(declined_at=timezone.now())


def get_or_create_voter(
    study: Study, identity: Identity, *, address: str = ""
) -> tuple[Voter, bool]:
    """The study's voter for this identity, created if new (anonymous: always new).

    ``address`` is the registering client's address; a new voter stores its keyed hash, which
    bounds the comparisons one address may hold at once (:mod:`collector.voting.store`).
    """
    if identity.preview:
        raise ValueError("An MTurk preview is not a voter.")
    key = address_key(address)
    if not identity.participant:
        return Voter.objects.create(study=study, source=identity.source, address=key), True
    lookup = _lookup(study, identity)
    try:
        with transaction.atomic():
            voter, created = Voter.objects.get_or_create(
                **lookup, defaults={"platform_data": identity.platform_data, "address": key}
            )
    except IntegrityError:  # two first requests of one participant raced; the other one won
        voter, created = Voter.objects.get(**lookup), False
    if not created and identity.platform_data and voter.platform_data != identity.platform_data:
        # A returning participant may come with a new session or assignment: keep the latest.
        voter.platform_data = {**voter.platform_data, **identity.platform_data}
        voter.save(update_fields=["platform_data"])
    return voter, created


# The session maps a study's slug to the voter id, so the hot path needs no voter query.
def _session_key(slug: str) -> str:
    return f"voter:{slug}"


def remember(request: HttpRequest, study: Study, voter: Voter) -> None:
    request.session[_session_key(study.slug)] = voter.pk


def forget(request: HttpRequest, slug: str) -> None:
    request.session.pop(_session_key(slug), None)


def session_voter(request: HttpRequest, slug: str) -> Voter | None:
    """A voter stub (pk only) for the session's voter of this study, or None."""
    voter_id = request.session.get(_session_key(slug))
    return Voter(pk=voter_id) if isinstance(voter_id, int) else None


def consented_before(study: Study, identity: Identity) -> bool:
    """This platform participant is a voter of the study who agreed to take part before (an
    MTurk preview never is)."""
    if identity.preview or not identity.participant:
        return False
    return Voter.objects.filter(**_lookup(study, identity), consented_at__isnull=False).exists()


def skips_consent(request: HttpRequest, consented: bool) -> bool:
    """Whether opening the study link goes straight on to the voting page: a participant who
    consented before (``consented``, from :func:`consented_before`) whose browser keeps this
    site's cookies. Without them (another browser, or a frame that keeps none) the consent page
    offers **Continue** instead of asking for consent again."""
    return request.method == "GET" and consented and bool(request.COOKIES)


def consent(request: HttpRequest, study: Study, identity: Identity, address: str = "") -> Voter:
    """The visitor agreed to take part: find or create their voter and keep it in the session.

    An anonymous visitor who already has a voter of this study in the session keeps it.
    """
    voter: Voter | None = None
    if not identity.participant and (stub := session_voter(request, study.slug)):
        voter = Voter.objects.filter(pk=stub.pk, study=study).first()
    if voter is None:
        voter, _ = get_or_create_voter(study, identity, address=address)
    if voter.consented_at is None or voter.declined_at is not None:
        voter.consented_at = voter.consented_at or timezone.now()
        voter.declined_at = None  # agreed after all
        voter.save(update_fields=["consented_at", "declined_at"])
    remember(request, study, voter)
    return voter
