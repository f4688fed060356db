"""Handing out comparisons and recording votes: the voting hot path (DESIGN.md section 5).

Rules:

- A voter holds at most one outstanding comparison (a lease). Asking again returns it, with the
  lease extended, so a refresh cannot be used to shop for easy pairs.
- A new comparison is claimed with ``SELECT ... FOR UPDATE SKIP LOCKED`` from the open ballot of
  the voter's study, skipping comparisons leased to others whose lease has not expired and any
  whose unordered item pair this voter already answered (in any ballot of the study).
- A voter answers at most ``Study.per_voter_cap`` comparisons per ballot. The *quota* reported
  to clients is ``min(per_voter_cap, comparisons in the ballot)`` for the current ballot (the open
  one, else the latest one that was opened); *answered* is this voter's votes in that ballot.
- A vote is accepted only for a comparison leased to this voter (even if the lease has expired,
  as long as nobody else has claimed it since), in an open ballot. A repeated identical vote
  returns the stored one. Everything else raises :class:`VoteRejected` and changes nothing.

Every step is a handful of plain SQL statements whatever the ballot size: the ORM and DRF
serializers cost about four times the CPU per vote (measured in a throwaway prototype). The SQL is
written to run on SQLite too (the local demo); the row locks exist only on PostgreSQL, where they
matter.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.db import connection, transaction
from django.utils import timezone

from collector import lifecycle
from collector.models import Comparison, Item, Token, Vote, Voter

__all__ = [
    "Assignment",
    "Pair",
    "Side",
    "VoteRejected",
    "next_assignment",
    "next_comparison",
    "record_vote",
    "vote_and_next",
]

CHOICES = frozenset(Vote.Choice.values)
MAX_RESPONSE_MS = 2_147_483_647  # PositiveIntegerField's upper bound
MAX_ID = 2**63  # bigint: larger ids cannot exist (and would make PostgreSQL raise)


class VoteRejected(Exception):
    """A vote that breaks a rule; nothing was stored. ``status_code`` is the HTTP status."""

    def __init__(self, status_code: int, detail: str) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.detail = detail


class Side(NamedTuple):
    """One item of a handed-out comparison, with its tokens' texts."""

    item_id: int
    item_index: int  # Item.index (not "index": that is tuple.index)
    token_a_id: int
    token_a: str
    token_b_id: int
    token_b: str

    def as_dict(self) -> dict[str, Any]:
        return {"item_id": self.item_id, "token_a": self.token_a, "token_b": self.token_b}

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


@dataclass(frozen=True)
class Assignment:
    """What a voter sees next: a comparison (or none), progress, and the code once done."""

    pair: Pair | None
    answered: int
    quota: int
    completion_code: str | None

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
            else {"id": p.id, "left": p.left.as_dict(), "right": p.right.as_dict()},
            "progress": {"answered": self.answered, "quota": self.quota},
            "completion_code": self.completion_code,
        }


@dataclass
class _Context:
    study_id: int
    cap: int
    lease_seconds: int
    allow_ties: bool
    study_finished: bool
    completion_code: str
    ballot_id: int | None
    ballot_open: bool
    ballot_size: int
    answered: int

    @property
    def quota(self) -> int:
        return min(self.cap, self.ballot_size) if self.ballot_id else self.cap


def _pg() -> bool:
    return connection.vendor == "postgresql"


# The current ballot is the open one if any, else the latest one that was opened: a voter who
# refreshes after the ballot closed still sees their progress (and their completion code).
_CONTEXT_SQL = """
SELECT s.id, s.per_voter_cap, s.lease_seconds, s.allow_ties, s.status, s.completion_code,
       b.id, b.status, b.n_items, b.m,
       (SELECT COUNT(*) FROM collector_vote v WHERE v.voter_id = vr.id AND v.ballot_id = b.id)
FROM collector_voter vr
JOIN collector_study s ON s.id = vr.study_id
LEFT JOIN collector_ballot b ON b.id = (
    SELECT b2.id FROM collector_ballot b2
    WHERE b2.study_id = s.id AND b2.status <> 'pending' ORDER BY b2.number DESC LIMIT 1)
WHERE vr.id = %s
"""


def _context(cur: Any, voter_id: int) -> _Context:
    # The voter row lock serialises one voter's concurrent requests (double clicks, two tabs),
    # which keeps "one lease per voter" and the cap exact. NO KEY: the FK checks of other rows
    # referencing the voter take KEY SHARE, which this does not block.
    cur.execute(_CONTEXT_SQL + (" FOR NO KEY UPDATE OF vr" if _pg() else ""), [voter_id])
    row = cur.fetchone()
    if row is None:
        raise VoteRejected(401, "Unknown voter.")
    (sid, cap, lease, ties, sstatus, code, bid, bstatus, n_items, m, answered) = row
    return _Context(
        study_id=sid,
        cap=cap,
        lease_seconds=lease,
        allow_ties=bool(ties),
        study_finished=sstatus == "finished",
        completion_code=code,
        ballot_id=bid,
        ballot_open=bstatus == "open",
        # Footnote 6: with M*N odd one item appears M+1 times.
        ballot_size=(m * n_items + 1) // 2 if bid else 0,
        answered=answered or 0,
    )


_EXTEND_SQL = """
UPDATE collector_comparison SET lease_expires_at = %s
WHERE leased_to_id = %s AND ballot_id = %s AND status = 'open'
RETURNING id, item_left_id, item_right_id
"""

# Walks the partial index comparison_claimable (ballot, id) WHERE status = 'open'. The outer WHERE
# repeats the claimability test: PostgreSQL re-evaluates it on the row version it finally locks.
_CLAIM_SQL = """
UPDATE collector_comparison SET leased_to_id = %(voter)s, lease_expires_at = %(expires)s
WHERE id = (
    SELECT c.id FROM collector_comparison c
    WHERE c.ballot_id = %(ballot)s AND c.status = 'open'
      AND (c.leased_to_id IS NULL OR c.lease_expires_at < %(now)s)
      AND NOT EXISTS (
        SELECT 1 FROM collector_vote v {seen_join}
        WHERE v.voter_id = %(voter)s
          AND {lo}(p.item_left_id, p.item_right_id) = {lo}(c.item_left_id, c.item_right_id)
          AND {hi}(p.item_left_id, p.item_right_id) = {hi}(c.item_left_id, c.item_right_id))
    ORDER BY c.id LIMIT 1 {lock})
  AND status = 'open' AND (leased_to_id IS NULL OR lease_expires_at < %(now)s)
RETURNING id, item_left_id, item_right_id
"""

_ITEMS_SQL = """
SELECT i.id, i."index", ta.id, ta.text, tb.id, tb.text
FROM collector_item i
JOIN collector_token ta ON ta.id = i.token_a_id
JOIN collector_token tb ON tb.id = i.token_b_id
WHERE i.id IN (%s, %s)
"""


# On PostgreSQL the LATERAL ... LIMIT 1 forces one primary-key probe per earlier vote; a plain
# join lets the planner pick a merge join that walks the ballot's comparisons up to the voter's
# latest one. SQLite always probes.
_PG_CLAIM_SQL = _CLAIM_SQL.format(
    lo="LEAST",
    hi="GREATEST",
    lock="FOR UPDATE SKIP LOCKED",
    seen_join="CROSS JOIN LATERAL (SELECT p.item_left_id, p.item_right_id"
    " FROM collector_comparison p WHERE p.id = v.comparison_id LIMIT 1) p",
)
_SQLITE_CLAIM_SQL = _CLAIM_SQL.format(
    lo="MIN", hi="MAX", lock="", seen_join="JOIN collector_comparison p ON p.id = v.comparison_id"
)


def _claim_sql() -> str:
    return _PG_CLAIM_SQL if _pg() else _SQLITE_CLAIM_SQL


def _pair(cur: Any, ballot_id: int, row: tuple[int, int, int]) -> Pair:
    cid, left_id, right_id = row
    cur.execute(_ITEMS_SQL, [left_id, right_id])
    sides = {r[0]: Side(*r) for r in cur.fetchall()}
    return Pair(cid, ballot_id, sides[left_id], sides[right_id])


def _assign(cur: Any, voter_id: int, ctx: _Context, *, has_lease: bool) -> Assignment:
    pair = None
    if ctx.ballot_id is not None and ctx.ballot_open:
        now = timezone.now()
        expires = now + dt.timedelta(seconds=ctx.lease_seconds)
        row = None
        if has_lease:
            cur.execute(_EXTEND_SQL, [expires, voter_id, ctx.ballot_id])
            rows = cur.fetchall()
            row = min(rows) if rows else None
        if row is None and ctx.answered < ctx.cap:
            cur.execute(
                _claim_sql(),
                {"voter": voter_id, "ballot": ctx.ballot_id, "now": now, "expires": expires},
            )
            row = cur.fetchone()
        if row is not None:
            pair = _pair(cur, ctx.ballot_id, row)
    done = ctx.study_finished or (ctx.ballot_id is not None and ctx.answered >= ctx.quota)
    return Assignment(
        pair=pair,
        answered=ctx.answered,
        quota=ctx.quota,
        completion_code=ctx.completion_code if pair is None and done else None,
    )


def next_assignment(voter: Voter) -> Assignment:
    """The voter's outstanding comparison (lease extended), else a newly claimed one."""
    with transaction.atomic(), connection.cursor() as cur:
        ctx = _context(cur, voter.pk)
        return _assign(cur, voter.pk, ctx, has_lease=True)


def next_comparison(voter: Voter) -> Comparison | None:
    """Like :func:`next_assignment`, the comparison alone (``None``: nothing for this voter)."""
    return next_assignment(voter).comparison


def _clean(comparison_id: Any, choice: Any, response_ms: Any) -> tuple[int, str, int | None]:
    """Validate the input before touching the database (400 on anything odd)."""
    if isinstance(comparison_id, bool | float):
        raise VoteRejected(400, "comparison_id must be an integer.")
    try:
        cid = int(comparison_id)
    except (TypeError, ValueError):
        raise VoteRejected(400, "comparison_id must be an integer.") from None
    if not 0 < cid < MAX_ID:
        raise VoteRejected(404, "No such comparison in this study.")
    if choice not in CHOICES:
        raise VoteRejected(400, "choice must be one of: left, right, tie.")
    if response_ms is not None:
        if isinstance(response_ms, bool) or not isinstance(response_ms, int | float):
            raise VoteRejected(400, "response_ms must be a number of milliseconds.")
        if not math.isfinite(response_ms) or response_ms < 0:
            raise VoteRejected(400, "response_ms must be a non-negative number.")
        response_ms = min(int(response_ms), MAX_RESPONSE_MS)
    return cid, choice, response_ms


_COMPARISON_SQL = """
SELECT c.ballot_id, c.status, c.leased_to_id, b.study_id, b.status,
       v.id, v.voter_id, v.choice, v.response_ms, v.created_at
FROM collector_comparison c
JOIN collector_ballot b ON b.id = c.ballot_id
LEFT JOIN collector_vote v ON v.comparison_id = c.id
WHERE c.id = %s
"""


def _record(
    cur: Any, voter_id: int, ctx: _Context, cid: int, choice: str, response_ms: int | None
) -> tuple[Vote, bool]:
    """Store the vote (or find the identical one already stored); returns (vote, created)."""
    cur.execute(_COMPARISON_SQL + (" FOR NO KEY UPDATE OF c" if _pg() else ""), [cid])
    row = cur.fetchone()
    if row is None or row[3] != ctx.study_id:
        raise VoteRejected(404, "No such comparison in this study.")
    ballot_id, cstatus, leased_to, _study, bstatus, vid, vvoter, vchoice, vms, vcreated = row
    if vid is not None:
        if vvoter == voter_id and vchoice == choice:
            existing = Vote(
                id=vid,
                comparison_id=cid,
                ballot_id=ballot_id,
                voter_id=voter_id,
                choice=vchoice,
                response_ms=vms,
                created_at=vcreated,
            )
            return existing, False
        if vvoter == voter_id:
            raise VoteRejected(409, "You already answered this comparison differently.")
        raise VoteRejected(409, "This comparison was answered by another voter.")
    if choice == Vote.Choice.TIE and not ctx.allow_ties:
        raise VoteRejected(400, "This study does not allow 'can't decide' answers.")
    if bstatus != "open" or cstatus != Comparison.Status.OPEN:
        raise VoteRejected(409, "This ballot is closed; the comparison can no longer be answered.")
    if leased_to != voter_id:
        raise VoteRejected(
            409, "This comparison is not assigned to you (never was, or your lease expired)."
        )
    now = timezone.now()
    cur.execute(
        "INSERT INTO collector_vote"
        " (comparison_id, ballot_id, voter_id, choice, response_ms, created_at)"
        " VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
        [cid, ballot_id, voter_id, choice, response_ms, now],
    )
    (vote_id,) = cur.fetchone()
    cur.execute("UPDATE collector_comparison SET status = 'answered' WHERE id = %s", [cid])
    # The engine moves the ballot to closing (and enqueues the close on commit) after its last vote.
    lifecycle.note_vote_recorded(ballot_id)
    vote = Vote(
        id=vote_id,
        comparison_id=cid,
        ballot_id=ballot_id,
        voter_id=voter_id,
        choice=choice,
        response_ms=response_ms,
        created_at=now,
    )
    return vote, True


def record_vote(voter: Voter, comparison_id: Any, choice: Any, response_ms: Any = None) -> Vote:
    """Store ``voter``'s answer to a comparison leased to them.

    Raises :class:`VoteRejected` (400 bad input or forbidden tie, 404 unknown comparison, 409
    another voter's / reclaimed comparison, closed ballot, or a different earlier answer). A
    repeated identical vote returns the stored vote.
    """
    cid, choice, response_ms = _clean(comparison_id, choice, response_ms)
    with transaction.atomic(), connection.cursor() as cur:
        ctx = _context(cur, voter.pk)
        vote, _created = _record(cur, voter.pk, ctx, cid, choice, response_ms)
        return vote


def vote_and_next(
    voter: Voter, comparison_id: Any, choice: Any, response_ms: Any = None
) -> tuple[Vote, bool, Assignment]:
    """Record a vote and hand out the next comparison in one transaction (one round trip).

    Returns ``(vote, created, assignment)``; ``created`` is False for a repeated identical vote,
    whose assignment is then the voter's outstanding comparison (the one the lost reply carried).
    """
    cid, choice, response_ms = _clean(comparison_id, choice, response_ms)
    with transaction.atomic(), connection.cursor() as cur:
        ctx = _context(cur, voter.pk)
        vote, created = _record(cur, voter.pk, ctx, cid, choice, response_ms)
        if created:
            ctx.answered += 1
        # A fresh vote consumed the voter's only lease: skip the lease-extension statement.
        return vote, created, _assign(cur, voter.pk, ctx, has_lease=not created)
