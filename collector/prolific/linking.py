"""The Prolific study of a product study: created from it (a draft with its public name and
description, the study URL with Prolific's three placeholders, one completion code per outcome
with its action, the estimated time, the reward and the first ballot's places), or linked by id.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median

from django.db import connection, transaction

from collector.models import Ballot, ProlificLink, Study, Vote
from collector.prolific.client import ProlificClient

__all__ = [
    "AlreadyLinked",
    "MEASURED_AFTER",
    "MINIMUM_HOURLY",
    "Terms",
    "completion_codes",
    "create",
    "estimated_minutes",
    "link_existing",
    "save_terms",
    "places_for",
    "reward",
    "seconds_per_answer",
    "study_body",
    "study_url",
]

# Prolific's minimum reward per hour (in the account currency's cents or pence: £6.00).
MINIMUM_HOURLY = 600
# Answers timed before the measured time per answer replaces the planned one.
MEASURED_AFTER = 20
# pg_advisory_xact_lock(space, study id): one creation of a study's Prolific study at a time.
_CREATE_LOCK = 734_212


class AlreadyLinked(Exception):
    """The study has its Prolific study already (a second press while the first was sent)."""

    def __init__(self, link: ProlificLink) -> None:
        super().__init__(f"Prolific study {link.prolific_id} is linked to this study already.")
        self.link = link


PLACEHOLDERS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


@dataclass(frozen=True)
class Terms:
    """What the staff set: reward per hour, margin of places, the promised partial payment (in
    cents), the actions of the partial and excluded codes, the planned time per answer."""

    hourly_rate: int = 900
    margin_percent: int = 10
    partial_amount: int = 0
    partial_action: str = ProlificLink.Action.RETURN
    excluded_action: str = ProlificLink.Action.REVIEW
    planned_seconds: int = 8

    def fields(self) -> dict[str, object]:
        return dict(self.__dict__)

    @classmethod
    def of(cls, link: ProlificLink | None) -> Terms:
        """The terms a link holds (the defaults without one)."""
        if link is None:
            return cls()
        return cls(**{name: getattr(link, name) for name in cls().fields()})


def save_terms(link: ProlificLink, terms: Terms) -> None:
    """Store new terms of a linked study: its next ballot's places and the payments use them."""
    ProlificLink.objects.filter(pk=link.pk).update(**terms.fields())


def study_url(study: Study, base_url: str) -> str:
    """The voter link with Prolific's three placeholders."""
    return f"{base_url.rstrip('/')}/s/{study.slug}/?{PLACEHOLDERS}"


def seconds_per_answer(study: Study, planned: int) -> float:
    """The median measured time per answer once :data:`MEASURED_AFTER` answers were timed, else
    ``planned``."""
    times = [
        ms
        for ms in Vote.objects.filter(ballot__study=study, response_ms__isnull=False)
        .order_by("-id")
        .values_list("response_ms", flat=True)[:1000]
        if ms is not None
    ]
    if len(times) < MEASURED_AFTER:
        return float(planned)
    return median(times) / 1000


def estimated_minutes(quota: int, seconds: float) -> int:
    """Minutes a voter's quota takes, rounded up (at least 1)."""
    return max(1, math.ceil(quota * seconds / 60))


def reward(minutes: int, hourly_rate: int) -> int:
    """The reward (cents) for ``minutes`` at ``hourly_rate`` cents an hour, rounded up."""
    return max(1, math.ceil(hourly_rate * minutes / 60))


def places_for(comparisons: int, quota: int, margin_percent: int) -> int:
    """Places a ballot needs: its comparisons over the quota, rounded up, plus the margin rounded
    down (so the places never pass the margin the staff set)."""
    base = math.ceil(comparisons / max(1, quota))
    return base + base * margin_percent // 100


def completion_codes(study: Study, terms: Terms) -> list[dict[str, object]]:
    """One completion code per outcome, each with its action."""
    return [
        _code(study.completion_code, "COMPLETED", ProlificLink.Action.APPROVE),
        _code(study.no_consent_code, "NO_CONSENT", ProlificLink.Action.RETURN),
        _code(study.partial_code, "OTHER", terms.partial_action),
        _code(study.excluded_code, "FAILED_ATTENTION_CHECK", terms.excluded_action),
    ]


def _code(code: str, code_type: str, action: str) -> dict[str, object]:
    return {"code": code, "code_type": code_type, "actions": [{"action": action}]}


def study_body(study: Study, terms: Terms, base_url: str) -> dict[str, object]:
    """The draft's fields (``POST /api/v1/studies/``)."""
    minutes = estimated_minutes(
        study.per_voter_cap, seconds_per_answer(study, terms.planned_seconds)
    )
    first = Ballot.objects.filter(study=study).order_by("number").first()
    comparisons = first.n_comparisons if first else 0
    return {
        "name": study.name,
        "internal_name": study.slug,
        "description": study.instructions or study.question,
        "external_study_url": study_url(study, base_url),
        "prolific_id_option": "url_parameters",
        "completion_codes": completion_codes(study, terms),
        "estimated_completion_time": minutes,
        "reward": reward(minutes, terms.hourly_rate),
        "total_available_places": places_for(
            comparisons, study.per_voter_cap, terms.margin_percent
        ),
    }


def create(study: Study, terms: Terms, base_url: str) -> ProlificLink:
    """Create the draft on Prolific and store its id (raises ``ProlificError``), once: under a
    lock of the study, a study linked meanwhile (two presses, two staff) raises
    :class:`AlreadyLinked` and sends nothing."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_CREATE_LOCK, study.pk])
        if (linked := ProlificLink.objects.filter(study=study).first()) is not None:
            raise AlreadyLinked(linked)
        body = study_body(study, terms, base_url)
        with ProlificClient() as client:
            made = client.create_study(body)
        return _store(study, str(made["id"]), terms, created_here=True, made=made)


def link_existing(study: Study, prolific_id: str, terms: Terms) -> ProlificLink:
    """Link a study made on Prolific by hand (it must exist: raises ``ProlificError``)."""
    with ProlificClient() as client:
        found = client.study(prolific_id)
    return _store(study, prolific_id, terms, created_here=False, made=found)


def _store(
    study: Study, prolific_id: str, terms: Terms, *, created_here: bool, made: dict[str, object]
) -> ProlificLink:
    with transaction.atomic():
        link, _ = ProlificLink.objects.update_or_create(
            study=study,
            defaults={
                "prolific_id": prolific_id, "created_here": created_here, **terms.fields(),
                "prolific_status": str(made.get("status", "")),
                "places": int(str(made.get("total_available_places", 0))),
                "places_taken": int(str(made.get("places_taken", 0))),
                "last_error": "",
            },
        )  # fmt: skip
    return link
