"""Handing out comparisons and recording votes: Python's side of the voting rules.

The rules live in one SQL function, ``collector_vote_v5`` (``sql/vote_v5.sql``, created by
migration 0033): in one round trip it stores a vote (or an attention check's answer) or says
exactly why not, and hands the voter their next comparison (or check). This module calls it,
reading its columns by name, turns a refusal into :class:`VoteRejected` (an HTTP status and a
message) and tells the lifecycle when a ballot may have received its last vote. Excluding a
voter is the SQL function ``collector_exclude_voter`` (``sql/exclude_voter.sql``), called by
:func:`exclude_voter`.

The rules, in brief (the SQL file has them in full):

- A voter holds at most one outstanding comparison (a lease). Asking again returns it (the lease
  is renewed only once it has expired), so a refresh cannot be used to shop for easy pairs.
- The voters who registered from one address hold at most ``VOTING_ADDRESS_LEASES`` unexpired
  leases at once, and at most ``VOTING_ADDRESS_SHARE`` of the ballot's comparisons: one client
  with many registrations cannot freeze a ballot.
- Nothing new is handed out while the study is paused or archived, nor to an excluded voter
  (whose code is then the study's excluded code).
- Attention checks (``Study.check_every``) come among the comparisons, never first; their answers
  are stored apart (``CheckAnswer``) and never reach a score.
- A new comparison is claimed with ``FOR UPDATE SKIP LOCKED`` from the open ballot of the
  voter's study, skipping comparisons leased to others whose lease has not expired and any whose
  item pair this voter already answered (in any ballot of the study).
- A voter answers at most ``Study.per_voter_cap`` comparisons per ballot. The *quota* reported to
  clients is ``min(per_voter_cap, comparisons in the ballot)`` for the current ballot (the open
  one, else the latest one that was opened); *answered* is this voter's votes in that ballot.
- A vote is accepted only for a comparison leased to this voter (even if the lease has expired,
  as long as nobody else has claimed it since), in an open ballot. A repeated identical vote
  returns the stored one. Everything else is refused and changes nothing.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import hmac
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy

from collector import jobs
from collector.models import Ballot, Comparison, Item, Study, Token, Vote, Voter
from collector.studies import lifecycle, vote_sets
from collector.voting import returning

__all__ = [
    "REFUSALS",
    "Assignment",
    "Pair",
    "Side",
    "StoredVote",
    "VoteRejected",
    "VoterToken",
    "address_key",
    "check_voter",
    "comparison_shape",
    "exclude_voter",
    "exclusion_reason",
    "is_target_study",
    "next_assignment",
    "next_comparison",
    "record_vote",
    "standing",
    "vote_and_next",
]

# Each refusal of the SQL function: the HTTP status and what the voter (or client) is told, in
# the voter's page language (the API's clients get English).
REFUSALS: dict[str, tuple[int, Any]] = {
    "unknown_voter": (401, gettext_lazy("Unknown voter.")),
    "wrong_study": (403, gettext_lazy("This voter token belongs to another study.")),
    "no_comparison": (404, gettext_lazy("No such comparison in this study.")),
    "answered_differently": (
        409,
        gettext_lazy("You already answered this comparison differently."),
    ),
    "answered_by_other": (409, gettext_lazy("This comparison was answered by another voter.")),
    "tie_not_allowed": (400, gettext_lazy("This study does not allow 'can't decide' answers.")),
    "voided": (
        409,
        gettext_lazy("This ballot was closed early; the comparison can no longer be answered."),
    ),
    "ballot_closed": (
        409,
        gettext_lazy("This ballot is closed; the comparison can no longer be answered."),
    ),
    "not_leased": (
        409,
        gettext_lazy("This comparison is not assigned to you (never was, or your lease expired)."),
    ),
    "quota_reached": (
        409,
        gettext_lazy("You have answered all the comparisons you may in this ballot."),
    ),
    "excluded": (409, gettext_lazy("You can no longer take part in this study.")),
}


class VoteRejected(Exception):
    """A request that breaks a rule; nothing was stored.

    ``status_code`` is the HTTP status, ``detail`` the message and ``reason`` the SQL function's
    outcome (or ``"bad_input"``).
    """

    def __init__(self, status_code: int, detail: str, reason: str = "bad_input") -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.detail = detail
        self.reason = reason


class Side(NamedTuple):
    """One item of a handed-out comparison, with its tokens' texts."""

    item_id: int
    item_index: int  # Item.index (not "index": that is tuple.index)
    token_a_id: int
    token_a: str
    token_b_id: int
    token_b: str

    @property
    def shown(self) -> tuple[int, str, str]:
        return self.item_id, self.token_a, self.token_b

    def as_item(self) -> Item:
        return Item(
            id=self.item_id,
            index=self.item_index,
            token_a=Token(id=self.token_a_id, text=self.token_a),
            token_b=Token(id=self.token_b_id, text=self.token_b),
        )


class Pair(NamedTuple):
    """A handed-out comparison as plain values (model instances cost ~0.5 ms per vote)."""

    id: int
    ballot_id: int
    left: Side
    right: Side


class StoredVote(NamedTuple):
    """A stored vote as plain values; :meth:`as_vote` makes the model instance."""

    id: int
    comparison_id: int
    ballot_id: int
    voter_id: int
    choice: str
    response_ms: int | None
    created_at: dt.datetime

    def as_vote(self) -> Vote:
        return Vote(**self._asdict())


@dataclass(frozen=True)
class Assignment:
    """What a voter sees next: a comparison (or none), progress, and the code once done."""

    pair: Pair | None
    answered: int
    quota: int
    completion_code: str | None
    # The voter was excluded: ``completion_code`` is then the study's excluded code.
    excluded: bool = False
    # The study is paused: nothing is handed out until staff resume it.
    paused: bool = False
    # A target study's comparison: its items' token_a is their target.
    targets: bool = False
    # Why the voter has ``completion_code``: "complete", "partial" or "excluded"
    # (collector.voting.exits.Outcome); None while they have none.
    outcome: str | None = None

    @property
    def comparison(self) -> Comparison | None:
        """The pair as a Comparison with its items and tokens filled in (no lazy loads)."""
        p = self.pair
        if p is None:
            return None
        return Comparison(
            id=p.id,
            ballot_id=p.ballot_id,
            item_left=p.left.as_item(),
            item_right=p.right.as_item(),
            status=Comparison.Status.OPEN,
        )

    def as_dict(self) -> dict[str, Any]:
        """The voting API's response shape (also used by the voting page)."""
        p = self.pair
        return {
            "comparison": None
            if p is None
            else comparison_shape(p.id, p.left.shown, p.right.shown, targets=self.targets),
            "progress": {"answered": self.answered, "quota": self.quota},
            "completion_code": self.completion_code,
            "outcome": self.outcome,
        }


def comparison_shape(
    cid: int, left: tuple[int, str, str], right: tuple[int, str, str], *, targets: bool
) -> dict[str, Any]:
    """A comparison as the voting API and the voting page carry it: ``id``, ``left`` and
    ``right``, each side ``{"item_id", "token_a", "token_b"}`` from ``(item_id, token_a,
    token_b)``. A target study's (``targets``) also has ``target`` (both items' ``token_a``) and
    each side its ``candidate`` (its ``token_b``); an area study's has neither."""
    sides = [{"item_id": i, "token_a": a, "token_b": b} for i, a, b in (left, right)]
    if not targets:
        return {"id": cid, "left": sides[0], "right": sides[1]}
    for side in sides:
        side["candidate"] = side["token_b"]
    return {"id": cid, "target": left[1], "left": sides[0], "right": sides[1]}


@functools.lru_cache(maxsize=4096)
def is_target_study(study_id: int) -> bool:
    """Whether the study is a target study. ``Study.targets`` is fixed when the study is created
    and study ids are never reused, so each process reads it once per study (the vote path
    stays one statement)."""
    found = Study.objects.filter(pk=study_id).values_list("targets", flat=True).first()
    return bool(found)


class VoterToken(NamedTuple):
    """The voting API's voter: an API token, checked against the URL's study by the function."""

    token: str
    slug: str


class _Result(NamedTuple):
    """What Python reads of a ``collector_vote_v5`` row (:data:`_COLUMNS` names its columns)."""

    outcome: str
    voter: int | None
    study: int | None
    cap: int | None
    finished: bool | None
    code: str | None
    ballot: int | None
    ballot_open: bool | None
    ballot_size: int | None
    answered: int | None
    vote_id: int | None
    vote_ballot: int | None
    vote_ms: int | None
    vote_created: dt.datetime | None
    open_left: int | None
    excluded: bool | None
    paused: bool | None
    pair_id: int | None
    left: tuple[Any, ...]
    right: tuple[Any, ...]


# Each _Result field and the function's OUT column it reads, by name: the statement selects the
# columns by name, so neither their order in the function nor a column it adds can shift what
# Python reads, and a column it lacks is an error, not a wrong value.
_COLUMNS = {
    "outcome": "outcome", "voter": "out_voter", "study": "out_study", "cap": "out_cap",
    "finished": "out_finished", "code": "out_code", "ballot": "out_ballot",
    "ballot_open": "out_ballot_open", "ballot_size": "out_ballot_size",
    "answered": "out_answered", "vote_id": "vote_id", "vote_ballot": "vote_ballot",
    "vote_ms": "vote_ms", "vote_created": "vote_created", "open_left": "open_left",
    "excluded": "out_excluded", "paused": "out_paused", "pair_id": "pair_id",
}  # fmt: skip
assert tuple(_COLUMNS) == _Result._fields[: len(_COLUMNS)]
_SIDE = ("item", "index", "a", "a_text", "b", "b_text")  # a Side's columns: l_* and r_*
_SELECTED = (*_COLUMNS.values(), *(f"l_{c}" for c in _SIDE), *(f"r_{c}" for c in _SIDE))
_VOTE_SQL = (
    f"SELECT {', '.join(_SELECTED)} FROM collector_vote_v5(%s::text, %s::bigint, %s::text,"
    " %s::bigint, %s::varchar, %s::integer, %s::timestamptz, %s::boolean, %s::integer,"
    " %s::float8)"
)
_N, _S = len(_COLUMNS), len(_SIDE)


def _call(
    voter: Voter | VoterToken,
    cid: int | None = None,
    choice: str | None = None,
    response_ms: int | None = None,
    *,
    now: dt.datetime,
    hand_out: bool = True,
) -> _Result:
    """One call of the SQL function; raises :class:`VoteRejected` for every refusal."""
    if isinstance(voter, VoterToken):
        who: tuple[str | None, int | None, str | None] = (voter.token, None, voter.slug)
    else:
        who = (None, voter.pk, None)
    bound = settings.VOTING_ADDRESS_LEASES, settings.VOTING_ADDRESS_SHARE
    with connection.cursor() as cur:
        cur.execute(_VOTE_SQL, [*who, cid, choice, response_ms, now, hand_out, *bound])
        row = cur.fetchone()
    result = _Result._make((*row[:_N], row[_N : _N + _S], row[_N + _S :]))
    refusal = REFUSALS.get(result.outcome)
    if refusal is not None:
        status, detail = refusal
        if result.outcome == "unknown_voter" and isinstance(voter, VoterToken):
            detail = "Unknown voter token."
        raise VoteRejected(status, detail, result.outcome)
    return result


def _assignment(r: _Result) -> Assignment:
    cap = r.cap or 0
    quota = min(cap, r.ballot_size or 0) if r.ballot else cap
    answered = r.answered or 0
    pair = None
    if r.pair_id is not None:
        assert r.ballot is not None
        pair = Pair(r.pair_id, r.ballot, Side(*r.left), Side(*r.right))
    code, outcome = None, None
    if pair is None:
        if r.excluded:
            code, outcome = r.code, "excluded"
        elif r.ballot is not None and answered >= quota:
            code, outcome = r.code, returning.COMPLETE
        elif r.voter is not None and (earned := returning.idle_outcome(r.voter)):
            # No pair and the current ballot's share not answered: an earlier ballot's share,
            # or what a finished (or archived) study owes them (collector.voting.returning).
            outcome, code = earned
    return Assignment(
        pair=pair,
        answered=answered,
        quota=quota,
        completion_code=code,
        excluded=bool(r.excluded),
        paused=bool(r.paused),
        targets=pair is not None and r.study is not None and is_target_study(r.study),
        outcome=outcome,
    )


def check_voter(voter: Voter | VoterToken) -> None:
    """Raise what the voter deserves (401 unknown, 403 another study's token), changing nothing:
    for the error paths that answer before a vote reaches the rules."""
    _call(voter, now=timezone.now(), hand_out=False)


def standing(voter: Voter | VoterToken) -> Assignment:
    """Where the voter stands, handing out nothing (not even the comparison in their hand):
    their progress and the code they have earned, if any."""
    return _assignment(_call(voter, now=timezone.now(), hand_out=False))


def next_assignment(voter: Voter | VoterToken) -> Assignment:
    """The voter's attention check or outstanding comparison (its lease renewed once expired),
    else a newly claimed one."""
    return _assignment(_call(voter, now=timezone.now()))


def vote_and_next(
    voter: Voter | VoterToken,
    cid: int,
    choice: str,
    response_ms: int | None = None,
    *,
    hand_out: bool = True,
) -> tuple[StoredVote, bool, Assignment]:
    """Record a vote and hand out the next comparison in one round trip.

    Returns ``(vote, created, assignment)``; ``created`` is False for a repeated identical vote,
    whose assignment is then the voter's outstanding comparison (the one the lost reply carried).
    The input is validated already (:class:`collector.voting.serializers.VoteRequest`). Raises
    :class:`VoteRejected`: 400 a forbidden tie, 401 unknown voter, 403 another study's token,
    404 unknown comparison, 409 for the other refusals.
    """
    r = _call(voter, cid, choice, response_ms, now=timezone.now(), hand_out=hand_out)
    assert r.vote_id is not None and r.vote_created is not None
    created = r.outcome == "ok"
    # open_left comes with a stored vote only (not with an attention check's answer).
    if created and r.open_left is not None and r.open_left <= lifecycle.TAIL_LOCK_THRESHOLD:
        assert r.vote_ballot is not None
        # Outside a transaction the vote has committed with the function: whoever comes last sees
        # every answer; if this process dies here, the sweep closes the ballot.
        with transaction.atomic():
            lifecycle.note_vote_recorded(r.vote_ballot, open_left=r.open_left)
    assert r.voter is not None
    if r.excluded:  # excluded by this answer (failed attention checks): an earlier exclusion
        _after_exclusion(r.voter)  # is refused before any answer is stored (VoteRejected)
    # An attention check's answer has no ballot of its own when none was open (ballot_id 0).
    ballot_id = r.vote_ballot or 0
    vote = StoredVote(r.vote_id, cid, ballot_id, r.voter, choice, r.vote_ms, r.vote_created)
    return vote, created, _assignment(r)


def record_vote(voter: Voter, cid: int, choice: str, response_ms: int | None = None) -> Vote:
    """Store ``voter``'s answer to a comparison leased to them, and claim nothing (see
    :func:`vote_and_next`)."""
    vote, _created, _next = vote_and_next(voter, cid, choice, response_ms, hand_out=False)
    return vote.as_vote()


def next_comparison(voter: Voter) -> Comparison | None:
    """Like :func:`next_assignment`, the comparison alone (``None``: nothing for this voter)."""
    return next_assignment(voter).comparison


def address_key(address: str) -> str:
    """A keyed hash of a client address, as ``Voter.address`` stores it (never the address)."""
    if not address:
        return ""
    digest = hmac.new(settings.SECRET_KEY.encode(), address.encode(), hashlib.sha256)
    return digest.hexdigest()[:32]


EXCLUDED_BY_STAFF = "excluded by staff"


def exclusion_reason(text: object) -> str:
    """The reason as stored: text, without NUL characters, at most 200 characters; a default
    when none is given."""
    reason = str(text or "").replace("\x00", "").strip()[:200]
    return reason or EXCLUDED_BY_STAFF


def exclude_voter(voter_id: int, reason: str) -> int | None:
    """Exclude a voter (``collector_exclude_voter``, the one implementation): no more comparisons,
    their lease freed, their votes in the open ballot voided and those comparisons back in the
    pool; votes in closed ballots stay, marked by the voter's ``excluded_at``.

    Returns the number of votes voided, or None when the voter was excluded before (or does not
    exist): nothing changes then. ``reason`` is stored as :func:`exclusion_reason` makes it.
    """
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(
            "SELECT collector_exclude_voter(%s::bigint, %s::text, %s::timestamptz)",
            [voter_id, exclusion_reason(reason), timezone.now()],
        )
        (voided,) = cur.fetchone()
        if voided >= 0:
            _after_exclusion(voter_id)
    return None if voided < 0 else int(voided)


def _after_exclusion(voter_id: int) -> None:
    """What a voter's exclusion changes beyond their open ballot, by staff or by the attention
    checks alike: a finished study's stored pooled fit (or the one a closing last ballot is
    storing) counted their votes, so it is fitted again; their closed ballots' votes leave the
    counted votes, so the study's vote set changes (:func:`vote_sets.bump`)."""
    with transaction.atomic():
        ending = Voter.objects.filter(pk=voter_id).filter(
            Q(study__status="finished") | Q(study__ballots__status="closing")
        )
        if study_id := ending.values_list("study_id", flat=True).first():
            jobs.send_after_commit(jobs.REFIT_POOLED, study_id)
        counted = Vote.objects.filter(voter_id=voter_id, ballot__status=Ballot.Status.CLOSED)
        if n := counted.count():
            study_id = Voter.objects.filter(pk=voter_id).values_list("study_id", flat=True).get()
            vote_sets.bump(study_id, vote_sets.Kind.EXCLUDED, votes=n, voters=1)
