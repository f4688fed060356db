"""The data of a study: its areas, tokens and items, its ballots, comparisons, votes and scores
(:mod:`.studies`), its voters' attention checks (:mod:`.checks`), its models' evaluations
(:mod:`.evaluations`), its team (:mod:`.members`), its audit trail (:mod:`.audit`), its
reliability reports (:mod:`.reliability`), its releases (:mod:`.releases`) and its Prolific study
(:mod:`.prolific`); a background job's row has the shape of :class:`.jobs.BackgroundJob`.

Item ids used by ``ranking`` are ``Item.index`` (0..N-1 in the study's item order), so the
collector hands plain arrays to the library and back. The defaults below live here because the
migrations name them by this module's path.
"""

from __future__ import annotations

import secrets

from django.core.files.storage import Storage, storages

DEFAULT_QUESTION = "Which pair is more related?"
# A target study's question: a template, {target} replaced by each comparison's target.
DEFAULT_TARGET_QUESTION = "Which is more related to {target}?"


def new_completion_code() -> str:
    return secrets.token_hex(4).upper()


def new_voter_token() -> str:
    return secrets.token_urlsafe(24)


def new_pseudonym() -> str:
    return "v-" + secrets.token_hex(6)


def evaluation_uploads() -> Storage:
    """Where uploaded model files wait for their evaluation's job (``EVALUATION_UPLOAD_DIR``)."""
    return storages["evaluation_uploads"]


# The models, after the defaults they use.
from .audit import AuditEntry  # noqa: E402
from .checks import AttentionCheck, CheckAnswer  # noqa: E402
from .evaluations import Evaluation, ModelComparison  # noqa: E402
from .members import StudyMember  # noqa: E402
from .prolific import ProlificLink, ProlificPayment  # noqa: E402
from .releases import Release  # noqa: E402
from .reliability import StudyReliability, VoteSetChange  # noqa: E402
from .studies import (  # noqa: E402
    Area,
    Ballot,
    Comparison,
    ForgottenParticipant,
    Item,
    ItemScore,
    Study,
    Token,
    VoidedVote,
    Vote,
    Voter,
)

__all__ = [
    "DEFAULT_QUESTION",
    "DEFAULT_TARGET_QUESTION",
    "Area",
    "AttentionCheck",
    "AuditEntry",
    "Ballot",
    "CheckAnswer",
    "Comparison",
    "Evaluation",
    "ForgottenParticipant",
    "Item",
    "ItemScore",
    "Release",
    "ModelComparison",
    "ProlificLink",
    "ProlificPayment",
    "Study",
    "StudyMember",
    "StudyReliability",
    "Token",
    "VoidedVote",
    "Vote",
    "VoteSetChange",
    "Voter",
    "evaluation_uploads",
    "new_completion_code",
    "new_pseudonym",
    "new_voter_token",
]
