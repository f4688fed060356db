"""The voter's ways out of a study: which code each outcome gets and where the voter goes with it.

Four outcomes end a voter's part:

- ``complete``: they answered their quota (or the study finished after they took part): the
  study's ``completion_code``;
- ``no_consent``: they declined on the consent page: ``no_consent_code``;
- ``partial``: they were left waiting with no pair for ``stranded_minutes``
  (:mod:`collector.voting.waiting`): ``partial_code``;
- ``excluded``: staff (or the attention checks) excluded them: ``excluded_code``.

Where the code goes (:func:`way_out`, the one place that decides it):

- an MTurk worker whose ``turkSubmitTo`` is MTurk's sandbox or production host gets a form that
  posts the code to ``<host>/mturk/externalSubmit`` with their ``assignmentId`` (any other
  ``turkSubmitTo`` is ignored: no form, the code alone);
- otherwise, ``Study.redirect_url`` with a ``{code}`` placeholder is every outcome's destination,
  the placeholder replaced by that outcome's code (``https://app.prolific.com/submissions/
  complete?cc={code}``); without the placeholder the URL is the destination of ``complete``
  alone, and the other outcomes show their code only;
- with ``Study.auto_redirect`` the page sends the voter on by itself after
  :data:`AUTO_REDIRECT_SECONDS`, with a visible countdown they can stop, except for ``partial``: a
  stranded voter may still prefer to wait for more pairs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import quote, urlsplit

from collector.models import Study, Voter
from collector.voting import returning, store
from collector.voting.identity import MTURK_PREVIEW

__all__ = [
    "AUTO_REDIRECT_SECONDS",
    "CODE_PLACEHOLDER",
    "MTURK_ORIGINS",
    "Exit",
    "MTurkSubmit",
    "Outcome",
    "declined_exit",
    "earned_exit",
    "mturk_submit",
    "way_out",
]

CODE_PLACEHOLDER = "{code}"
# MTurk's hosts that take an ExternalQuestion's answer (and frame the voter's pages).
MTURK_ORIGINS = ("https://workersandbox.mturk.com", "https://www.mturk.com")
MTURK_SUBMIT_PATH = "/mturk/externalSubmit"
AUTO_REDIRECT_SECONDS = 20


class Outcome(StrEnum):
    COMPLETE = "complete"
    NO_CONSENT = "no_consent"
    PARTIAL = "partial"
    EXCLUDED = "excluded"


@dataclass(frozen=True)
class MTurkSubmit:
    """The form that submits an MTurk assignment: POST ``action`` with the assignment's id."""

    action: str
    assignment_id: str


@dataclass(frozen=True)
class Exit:
    """An outcome's code and where the voter takes it (``url`` None: they copy the code)."""

    outcome: Outcome
    code: str
    url: str | None = None
    automatic: bool = False  # the page goes to ``url`` by itself
    mturk: MTurkSubmit | None = None

    @property
    def delay(self) -> int:
        """Seconds before an automatic redirect (time to see the code)."""
        return AUTO_REDIRECT_SECONDS


_CODES = {
    Outcome.COMPLETE: "completion_code",
    Outcome.NO_CONSENT: "no_consent_code",
    Outcome.PARTIAL: "partial_code",
    Outcome.EXCLUDED: "excluded_code",
}


def mturk_submit(platform: Mapping[str, object]) -> MTurkSubmit | None:
    """The MTurk submit form for a worker's platform data (``assignmentId``, ``turkSubmitTo``),
    or None when the data is not a worker's accepted assignment on MTurk's two hosts."""
    assignment = platform.get("assignmentId")
    target = platform.get("turkSubmitTo")
    if not isinstance(assignment, str) or not isinstance(target, str) or not assignment:
        return None
    if assignment == MTURK_PREVIEW:  # the HIT's preview: nothing to submit
        return None
    try:
        parts = urlsplit(target.strip())
        port = parts.port  # raises on a port that is not a number in 0-65535
    except ValueError:
        return None
    origin = f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}"
    clean = port is None and not parts.username and not parts.password
    if origin not in MTURK_ORIGINS or not clean or parts.path not in ("", "/"):
        return None
    return MTurkSubmit(origin + MTURK_SUBMIT_PATH, assignment)


def way_out(study: Study, outcome: Outcome, platform: Mapping[str, object] | None = None) -> Exit:
    """The code of ``outcome`` in ``study`` and where it goes (see the module docstring)."""
    code = getattr(study, _CODES[outcome])
    if submit := mturk_submit(platform or {}):
        return Exit(outcome, code, mturk=submit)
    target = study.redirect_url
    if CODE_PLACEHOLDER in target:
        url: str | None = target.replace(CODE_PLACEHOLDER, quote(code, safe=""))
    else:
        url = target if target and outcome == Outcome.COMPLETE else None
    automatic = bool(url) and study.auto_redirect and outcome != Outcome.PARTIAL
    return Exit(outcome, code, url, automatic)


def declined_exit(study: Study, voter: Voter | None) -> Exit | None:
    """The no-consent way out of a platform participant who declined (and has not agreed
    since: :func:`collector.voting.identity.decline`), else None."""
    if voter is None or voter.declined_at is None:
        return None
    return way_out(study, Outcome.NO_CONSENT, voter.platform_data)


def earned_exit(study: Study, voter: Voter, *, leaving: bool = False) -> Exit | None:
    """The way out a returning voter has earned on a study that takes no voters (finished,
    archived, not started): the no-consent code if they declined, else the code of what they
    answered (:mod:`collector.voting.returning`), else None. Hands out nothing (a comparison
    still in their hand is not work they can be paid for any more).

    ``leaving``: the voter leaves a study that may still take them (their data is about to be
    deleted at their request): what they answered is then all they will answer, as on a
    finished study (:func:`collector.voting.returning.idle_outcome`).
    """
    if declined := declined_exit(study, voter):
        return declined
    a = store.standing(voter)
    if a.outcome is None and leaving and (earned := returning.idle_outcome(voter.pk, leaving=True)):
        return way_out(study, Outcome(earned[0]), voter.platform_data)
    if a.completion_code is None or a.outcome is None:
        return None
    return way_out(study, Outcome(a.outcome), voter.platform_data)
