"""What is stored about a participant, found by their platform id (a Prolific PID, an MTurk
worker id, a ``participant``), across the studies a staff member may see: per study their
voter's pseudonym and times, platform data, codes issued, votes with their items and times,
votes voided by an exclusion, attention checks, the voter table's flags and their exclusion;
and per study where their data was deleted at their request, what is kept of them
(:class:`~collector.models.ForgottenParticipant`: the outcome they had earned, its code, and when
retention removes it).

The platform id itself is nowhere in the result (it is not stored: its keyed hash found the
voters).
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from collector.models import (
    CheckAnswer,
    ForgottenParticipant,
    Item,
    Study,
    VoidedVote,
    Vote,
    Voter,
)
from collector.participants import retention
from collector.studies.voter_quality import FLAGS, voter_table
from collector.voting import exits, store
from collector.voting.participant_ids import participant_key

__all__ = ["FORMAT", "find_deleted", "find_voters", "stored_data"]

FORMAT = "collector.participant-data/1"
MAX_PLATFORM_ID = 200


def _key(platform_id: str) -> str:
    return participant_key(platform_id.strip()[:MAX_PLATFORM_ID])


def find_voters(platform_id: str, studies: QuerySet[Study]) -> QuerySet[Voter]:
    """The voters of ``platform_id`` (any platform) in ``studies``, oldest first."""
    key = _key(platform_id)
    if not key:
        return Voter.objects.none()
    return (
        Voter.objects.filter(participant=key, study__in=studies)
        .exclude(source=Voter.Source.SIMULATED)
        .select_related("study")
        .order_by("created_at", "id")
    )


def find_deleted(platform_id: str, studies: QuerySet[Study]) -> QuerySet[ForgottenParticipant]:
    """What ``studies`` keep of ``platform_id`` (any platform) after deleting their data at
    their request, in the order of the studies' creation."""
    key = _key(platform_id)
    if not key:
        return ForgottenParticipant.objects.none()
    return (
        ForgottenParticipant.objects.filter(participant=key, study__in=studies)
        .select_related("study")
        .order_by("study__created_at", "study_id", "source")
    )


def _time(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _item(item: Item) -> dict[str, Any]:
    return {"item": item.index, "token_a": item.token_a.text, "token_b": item.token_b.text}


def _votes(voter: Voter) -> list[dict[str, Any]]:
    rows = (
        Vote.objects.filter(voter=voter)
        .select_related(
            "ballot",
            "comparison__item_left__token_a",
            "comparison__item_left__token_b",
            "comparison__item_right__token_a",
            "comparison__item_right__token_b",
        )
        .order_by("created_at", "id")
    )
    return [
        {
            "ballot": v.ballot.number,
            "comparison": v.comparison_id,
            "left": _item(v.comparison.item_left),
            "right": _item(v.comparison.item_right),
            "choice": v.choice,
            "response_ms": v.response_ms,
            "answered_at": _time(v.created_at),
        }
        for v in rows
    ]


def _voided(voter: Voter) -> list[dict[str, Any]]:
    rows = VoidedVote.objects.filter(voter=voter).select_related("ballot").order_by("id")
    return [
        {
            "ballot": v.ballot.number,
            "comparison": v.comparison_id,
            "choice": v.choice,
            "response_ms": v.response_ms,
            "answered_at": _time(v.created_at),
            "voided_at": _time(v.voided_at),
        }
        for v in rows
    ]


def _checks(voter: Voter) -> list[dict[str, Any]]:
    rows = CheckAnswer.objects.filter(voter=voter).order_by("id")
    return [
        {
            "shown_at": _time(c.shown_at),
            "choice": c.choice or None,
            "passed": c.passed,
            "response_ms": c.response_ms,
            "answered_at": _time(c.answered_at),
        }
        for c in rows
    ]


def codes_issued(voter: Voter) -> list[dict[str, Any]]:
    """The codes the voter has been given (or is owed now): no consent when they declined,
    partial when the wait page offered it, and where they stand now."""
    study = voter.study
    codes = []
    if voter.declined_at is not None:
        codes.append({"outcome": "no_consent", "code": study.no_consent_code})
    if voter.partial_at is not None:
        codes.append(
            {"outcome": "partial", "code": study.partial_code, "at": _time(voter.partial_at)}
        )
    now = store.standing(voter)
    if now.completion_code and now.outcome not in {c["outcome"] for c in codes}:
        codes.append({"outcome": now.outcome, "code": now.completion_code})
    return codes


def _flags(voter: Voter) -> dict[str, Any]:
    """The voter table's row of this voter (default thresholds): figures and flags."""
    if not Vote.objects.filter(voter=voter).exists():
        return {}
    table = voter_table(voter.study)
    row = next((r for r in table["rows"] if r["voter_id"] == voter.pk), None)
    if row is None:
        return {}
    keys = ("votes", "median_response_ms", "tie_rate", "left_share", "agreement")
    return {
        **{k: row.get(k) for k in keys},
        "flags": [f for f in FLAGS if row.get(f)],
    }


def voter_data(voter: Voter) -> dict[str, Any]:
    """Everything stored about one voter of one study."""
    study = voter.study
    return {
        "study": {"slug": study.slug, "name": study.name, "status": study.status},
        "platform": voter.source,
        "pseudonym": voter.pseudonym,
        "registered_at": _time(voter.created_at),
        "consented_at": _time(voter.consented_at),
        "declined_at": _time(voter.declined_at),
        "platform_data": voter.platform_data,
        "codes": codes_issued(voter),
        "excluded": {"at": _time(voter.excluded_at), "reason": voter.excluded_reason}
        if voter.excluded_at
        else None,
        "stranded_at": _time(voter.partial_at),
        "attention_checks": {
            "passed": voter.checks_passed,
            "failed": voter.checks_failed,
            "answers": _checks(voter),
        },
        "quality": _flags(voter),
        "votes": _votes(voter),
        "voided_votes": _voided(voter),
        "address": "a keyed hash of the address they registered from" if voter.address else None,
    }


def deleted_data(kept: ForgottenParticipant) -> dict[str, Any]:
    """What one study keeps of a participant whose data it deleted at their request: the
    outcome they had earned and its code (None: they had earned none), kept under the keyed hash
    of their platform id so that they get the code if they come back, until retention removes
    it with the study's other identifiers (``removed_on``; None: no date yet, or no
    ``DATA_RETENTION_DAYS``)."""
    study = kept.study
    outcome = exits.Outcome(kept.outcome) if kept.outcome else None
    removal = retention.removal_date(study)
    return {
        "study": {"slug": study.slug, "name": study.name, "status": study.status},
        "platform": kept.source,
        "participant": "a keyed hash of their platform id",
        "outcome": outcome.value if outcome else None,
        "code": exits.way_out(study, outcome).code if outcome else None,
        "removed_on": _time(removal),
    }


def stored_data(platform_id: str, studies: QuerySet[Study]) -> dict[str, Any]:
    """What is stored about the participant with ``platform_id`` in ``studies``: ``studies``,
    their data per study; ``deleted``, what is kept of them where it was deleted."""
    found = list(find_voters(platform_id, studies))
    return {
        "format": FORMAT,
        "generated_at": _time(timezone.now()),
        "about": "Everything stored about one participant, found by the keyed hash of their "
        "platform id (the id itself is not stored).",
        "studies": [voter_data(v) for v in found],
        "deleted": [deleted_data(kept) for kept in find_deleted(platform_id, studies)],
    }
