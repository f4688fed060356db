"""A participant whose data was deleted at their request coming back.

Deleting a participant's data (:mod:`collector.participants.forgetting`) keeps only the outcome
they had earned: on their emptied voter row, which the same browser session still names, and
with the keyed hash of their platform id (``ForgottenParticipant``), which their platform link
finds. Coming back either way they get the page "Your data was deleted" with that outcome's code
and its way out (:func:`collector.voting.exits.way_out`, with the platform data of the link they
came with: a new MTurk assignment is submitted with the code), or no code when they had answered
nothing. Nothing is handed out to them and nothing new is stored: they never become a new voter.

A platform link decides by its own id (another participant in the same browser is not the
forgotten one); a page without one, by the session's voter.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest

from collector.models import ForgottenParticipant, Study, Voter
from collector.voting import exits, identity
from collector.voting.participant_ids import participant_key

__all__ = ["Deleted", "of_participant", "of_session", "returning"]


@dataclass(frozen=True)
class Deleted:
    """A forgotten participant's way out: ``exit`` None when they had earned no code."""

    exit: exits.Exit | None


def _deleted(study: Study, outcome: str, who: identity.Identity) -> Deleted:
    if not outcome:
        return Deleted(None)
    return Deleted(exits.way_out(study, exits.Outcome(outcome), who.platform_data))


def of_participant(study: Study, who: identity.Identity) -> Deleted | None:
    """The way out of the platform participant ``who`` if their data in ``study`` was deleted,
    else None (an anonymous visitor or an MTurk preview: None)."""
    if who.preview or not who.participant:
        return None
    outcome = (
        ForgottenParticipant.objects.filter(
            study=study, source=who.source, participant=participant_key(who.participant)
        )
        .values_list("outcome", flat=True)
        .first()
    )
    return None if outcome is None else _deleted(study, outcome, who)


def of_session(request: HttpRequest, study: Study, who: identity.Identity) -> Deleted | None:
    """The way out of the session's voter of ``study`` if their data was deleted, else None."""
    stub = identity.session_voter(request, study.slug)
    if stub is None:
        return None
    outcome = (
        Voter.objects.filter(pk=stub.pk, study=study, forgotten_at__isnull=False)
        .values_list("forgotten_outcome", flat=True)
        .first()
    )
    return None if outcome is None else _deleted(study, outcome, who)


def returning(request: HttpRequest, study: Study, who: identity.Identity) -> Deleted | None:
    """The visitor as a forgotten participant of ``study``: by the platform id of their link
    when it has one, else by the session's voter (module docstring); None when they are not."""
    if who.participant and not who.preview:
        return of_participant(study, who)
    return of_session(request, study, who)
