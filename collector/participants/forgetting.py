"""Deleting a participant's data at their request (the voter pages' "forget me" is staff's to
run: the staff page and API, ``manage.py forget_participant``).

Per voter of the participant, in one transaction under the study's ballot locks (as an
exclusion takes them, so a close or a last vote racing with it waits):

- the comparison in their hand goes back to the pool;
- their votes of the open ballot are deleted and those comparisons open again for other voters
  (as an exclusion does, but nothing is kept of the votes);
- their votes of closed (and closing) ballots are deleted too, those comparisons left void; the
  study counts the deleted votes its stored scores still include (``Study.withdrawn_votes``,
  those of closed ballots) until it is rescored without them
  (:func:`collector.studies.rescoring.rescore_without_withdrawn`);
- their voided votes and attention-check answers are deleted;
- the voter row stays, for the study's counts, without any identifier: no hashed platform id,
  no platform data, no address hash, a new pseudonym and token (their old link and token lead
  nowhere), ``forgotten_at`` set; it is excluded so that nothing is handed to it again;
- what they had earned is kept, and nothing else: the outcome of the code they would get on
  leaving the study now (:func:`collector.voting.exits.earned_exit`: the completion code for
  their share of a ballot, else the partial code for some answers, the no-consent code after
  declining, the excluded code if staff or the checks excluded them; "" when they answered
  nothing), on the voter row (``forgotten_outcome``: the same browser session comes back to it)
  and, with the keyed hash of their platform id, as a :class:`ForgottenParticipant` (their
  platform link comes back to it). Coming back, they get the page "Your data was deleted" with
  that code (:mod:`collector.voting.forgotten`), never new comparisons, never a new voter row.

A finished study's stored pooled fit is computed again once committed; the deleted votes of
closed ballots change the study's vote set (:mod:`collector.studies.vote_sets`): every figure
computed from them says so until it is computed again, in the background.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from collector import jobs
from collector.models import (
    Ballot,
    CheckAnswer,
    Comparison,
    ForgottenParticipant,
    Study,
    VoidedVote,
    Voter,
    new_pseudonym,
    new_voter_token,
)
from collector.participants.data import find_voters
from collector.studies import vote_sets
from collector.voting import exits

__all__ = ["FORGOTTEN_REASON", "Forgotten", "forget_participant", "forget_voter"]

FORGOTTEN_REASON = "data deleted at the participant's request"


@dataclass(frozen=True)
class Forgotten:
    """What deleting one voter's data did, per study (no identifier in it)."""

    study: str  # the study's slug
    returned: int  # open ballot's votes deleted, their comparisons back to other voters
    withdrawn: int  # closed ballots' votes deleted: the scores include them until rescored
    deleted: int  # every vote deleted (returned, withdrawn, and those of a closing ballot)

    def as_dict(self) -> dict[str, object]:
        return {
            "study": self.study,
            "returned_to_other_voters": self.returned,
            "withdrawn_from_scored_ballots": self.withdrawn,
            "votes_deleted": self.deleted,
        }


def forget_voter(voter_id: int) -> Forgotten | None:
    """Delete one voter's data (module docstring); None when there is no such voter or it was
    forgotten before."""
    with transaction.atomic():
        voter = (
            Voter.objects.select_for_update(of=("self",))
            .select_related("study")
            .filter(pk=voter_id, forgotten_at__isnull=True)
            .first()
        )
        if voter is None:
            return None
        study = voter.study
        # Ballots first (as collector_exclude_voter): a racing close or last vote waits here.
        ballots = dict(
            Ballot.objects.select_for_update(no_key=True)
            .filter(study=study)
            .exclude(status=Ballot.Status.PENDING)
            .order_by("number")
            .values_list("id", "status")
        )
        # What they earned, from their answers before these go (the rule that picks every code).
        earned = exits.earned_exit(study, voter, leaving=True)
        outcome = earned.outcome.value if earned is not None else ""
        if voter.participant:
            ForgottenParticipant.objects.get_or_create(
                study=study,
                source=voter.source,
                participant=voter.participant,
                defaults={"outcome": outcome},
            )
        # No comparison points to the emptied row: the one in their hand goes back to the pool,
        # those their deleted votes answered (voided below) keep no trace of them.
        Comparison.objects.filter(leased_to=voter).update(leased_to=None, lease_expires_at=None)
        with connection.cursor() as cur:
            cur.execute(
                "DELETE FROM collector_vote WHERE voter_id = %s RETURNING comparison_id, ballot_id",
                [voter.pk],
            )
            gone = cur.fetchall()
        open_ids = [c for c, b in gone if ballots.get(b) == Ballot.Status.OPEN]
        other_ids = [c for c, b in gone if ballots.get(b) != Ballot.Status.OPEN]
        Comparison.objects.filter(id__in=open_ids).update(
            status=Comparison.Status.OPEN, leased_to=None, lease_expires_at=None
        )
        Comparison.objects.filter(id__in=other_ids).update(status=Comparison.Status.VOID)
        withdrawn = sum(1 for _c, b in gone if ballots.get(b) == Ballot.Status.CLOSED)
        VoidedVote.objects.filter(voter=voter).delete()
        CheckAnswer.objects.filter(voter=voter).delete()
        now = timezone.now()
        Voter.objects.filter(pk=voter.pk).update(
            participant="",
            platform_data={},
            address="",
            pseudonym=new_pseudonym(),
            token=new_voter_token(),
            consented_at=None,
            declined_at=None,
            waiting_since=None,
            partial_at=None,
            excluded_at=now,
            excluded_reason=FORGOTTEN_REASON,
            checks_passed=0,
            checks_failed=0,
            forgotten_at=now,
            forgotten_outcome=outcome,
        )
        if withdrawn:
            Study.objects.filter(pk=study.pk).update(
                withdrawn_votes=F("withdrawn_votes") + withdrawn
            )
        counted = len(gone) - len(open_ids)  # votes of closed (and closing) ballots
        if counted:
            vote_sets.bump(study.pk, vote_sets.Kind.WITHDRAWN, votes=counted, voters=1)
        if gone and study.status == Study.Status.FINISHED:
            jobs.send_after_commit(jobs.REFIT_POOLED, study.pk)
    return Forgotten(study.slug, len(open_ids), withdrawn, len(gone))


def forget_participant(platform_id: str, studies: QuerySet[Study]) -> list[Forgotten]:
    """Delete the data of the participant with ``platform_id`` in every one of ``studies``."""
    done = []
    for voter_id in find_voters(platform_id, studies).values_list("id", flat=True):
        if (result := forget_voter(voter_id)) is not None:
            done.append(result)
    return done
