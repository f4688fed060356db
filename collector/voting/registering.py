"""Registering a voter through the voting API (``POST /api/v1/studies/<slug>/voters``), with
the same rules as the study link's pages:

- a study that takes no voters (not started, finished, archived) refuses a participant it has
  never seen: :class:`Refused`, a 409 with the reason (the pages say the same);
- a returning participant gets what they earned there, in every state: their token, and the
  code of their outcome when the study has nothing more for them
  (:func:`collector.voting.exits.earned_exit`);
- ``consent: false`` declines: of a platform participant only that is stored (their hashed id),
  and they get the no-consent code, then and whenever they register again, until they send
  ``consent: true``. Declining gives no token;
- a participant whose data was deleted at their request gets no token either, only the code
  they had earned (:mod:`collector.voting.forgotten`), and is never registered again.
"""

from __future__ import annotations

from dataclasses import dataclass

from collector.models import Study, Voter
from collector.studies import lifecycle
from collector.voting import exits, forgotten, identity

__all__ = ["Refused", "Registration", "register", "refusal"]

REASONS = {
    "not_started": "This study has not started yet and takes no voters.",
    "finished": "This study is finished and takes no new voters.",
    "archived": "This study is closed and takes no new voters.",
}


class Refused(Exception):
    """A new participant on a study that takes no voters (``reason``: a key of REASONS)."""

    def __init__(self, reason: str) -> None:
        super().__init__(REASONS[reason])
        self.reason = reason
        self.detail = REASONS[reason]


@dataclass(frozen=True)
class Registration:
    token: str | None
    created: bool
    outcome: str | None = None
    completion_code: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {
            "token": self.token,
            "outcome": self.outcome,
            "completion_code": self.completion_code,
        }


def refusal(study: Study) -> str | None:
    """Why the study takes no new voters (a key of REASONS), or None when it takes them."""
    if lifecycle.takes_voters(study):
        return None
    if lifecycle.is_archived(study):
        return "archived"
    return "finished" if study.status == Study.Status.FINISHED else "not_started"


def _declined(study: Study) -> Registration:
    code = exits.way_out(study, exits.Outcome.NO_CONSENT).code
    return Registration(None, False, exits.Outcome.NO_CONSENT.value, code)


def register(
    study: Study, participant: str, *, consent: bool | None = None, address: str = ""
) -> Registration:
    """Register (or find) the voter of ``participant`` ("" anonymous); see the module
    docstring. Raises :class:`Refused`."""
    who = (
        identity.Identity(Voter.Source.PARTICIPANT, participant)
        if participant
        else identity.Identity()
    )
    if (gone := forgotten.of_participant(study, who)) is not None:
        if gone.exit is None:
            return Registration(None, False)
        return Registration(None, False, gone.exit.outcome.value, gone.exit.code)
    known = identity.platform_voter(study, who)
    why = refusal(study)
    if known is None and why is not None:
        raise Refused(why)
    if consent is False and why is None:
        identity.decline(study, who)  # unless they agreed or answered before
        known = identity.platform_voter(study, who)
        if known is None:  # anonymous: nothing stored
            return _declined(study)
    if known is not None and known.declined_at is not None:
        if consent is not True or why is not None:
            return _declined(study)
        Voter.objects.filter(pk=known.pk).update(declined_at=None)  # agreed after all
    if why is not None:
        assert known is not None
        earned = exits.earned_exit(study, known)
        if earned is None:
            return Registration(known.token, False)
        return Registration(known.token, False, earned.outcome.value, earned.code)
    voter, created = identity.get_or_create_voter(study, who, address=address)
    return Registration(voter.token, created)
