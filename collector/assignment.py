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
import re
import weakref
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.db import connection, transaction
from django.db.backends.postgresql.psycopg_any import is_psycopg3
from django.utils import timezone

import ranking
from collector import lifecycle
from collector.models import Comparison, Item, Token, Vote, Voter

__all__ = [
    "Assignment",
    "Pair",
    "Side",
    "StoredVote",
    "VoteRejected",
    "VoterToken",
    "WrongStudy",
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
    voter_id: int
    study_slug: str
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


# --- Prepared statements (PostgreSQL) ------------------------------------------------------------
# Planning the hot path's statements costs more server CPU than running them (the claim with its
# items: ~0.9 ms to plan, ~0.06 ms to run). Each connection prepares them once, all in one round
# trip, and then sends only EXECUTE. Parameters stay client-side literals (psycopg2), exactly as in
# a plain statement. Prepared statements live as long as the session (a rollback keeps them); a
# new connection (reconnect, CONN_MAX_AGE) is a new key of the registry and prepares again.

_PREFIX = "collector_hot_"
_PARAM = re.compile(r"%\((\w+)\)s|%s")
_prepared: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


class _Prepared(NamedTuple):
    name: str
    source: str  # with %s / %(name)s
    sql: str  # with $1..$n
    params: tuple[str | int, ...]  # $k's value: a name (mapping params) or an index (sequence)


def _to_dollars(name: str, sql: str) -> _Prepared:
    order: list[str | int] = []

    def number(m: re.Match[str]) -> str:
        key: str | int = m.group(1) if m.group(1) else len(order)
        if key not in order or isinstance(key, int):
            order.append(key)
        return f"${order.index(key) + 1}"

    return _Prepared(_PREFIX + name, sql, _PARAM.sub(number, sql), tuple(order))


def _execute(cur: Any, name: str, params: Any) -> None:
    """EXECUTE the hot-path statement ``name`` (PostgreSQL), preparing them all first if this
    connection has not yet."""
    statements = _STATEMENTS  # built at the end of the module
    if is_psycopg3:  # its own prepared-statement cache must not meet DEALLOCATE ALL: plain SQL
        cur.execute(statements[name].source, params)
        return
    raw = connection.connection
    if raw not in _prepared:
        # DEALLOCATE ALL first: whatever an earlier failed attempt left, this starts clean (nothing
        # else on these connections uses named prepared statements).
        cur.execute(
            "DEALLOCATE ALL;\n"
            + ";\n".join(f"PREPARE {p.name} AS {p.sql}" for p in statements.values())
        )
        _prepared[raw] = True
    p = statements[name]
    values = [params[k] for k in p.params]  # a mapping's keys, or a sequence's indexes
    cur.execute(f"EXECUTE {p.name}({', '.join(['%s'] * len(values))})", values)


# The current ballot is the open one if any, else the latest one that was opened: a voter who
# refreshes after the ballot closed still sees their progress (and their completion code).
_CONTEXT_SQL = """
SELECT s.id, s.per_voter_cap, s.lease_seconds, s.allow_ties, s.status, s.completion_code,
       b.id, b.status, b.n_items, b.m,
       (SELECT COUNT(*) FROM collector_vote v WHERE v.voter_id = vr.id AND v.ballot_id = b.id),
       vr.id, s.slug
FROM collector_voter vr
JOIN collector_study s ON s.id = vr.study_id
LEFT JOIN collector_ballot b ON b.id = (
    SELECT b2.id FROM collector_ballot b2
    WHERE b2.study_id = s.id AND b2.status <> 'pending' ORDER BY b2.number DESC LIMIT 1)
WHERE {key} = %s
"""
_CONTEXT_BY_ID_SQL = _CONTEXT_SQL.format(key="vr.id")
# The voting API authenticates with this statement: the token lookup costs no extra round trip.
_CONTEXT_BY_TOKEN_SQL = _CONTEXT_SQL.format(key="vr.token")
# The voter row lock serialises one voter's concurrent requests (double clicks, two tabs), which
# keeps "one lease per voter" and the cap exact. NO KEY: the FK checks of other rows referencing
# the voter take KEY SHARE, which this does not block.
_PG_CONTEXT_LOCK = " FOR NO KEY UPDATE OF vr"


class WrongStudy(VoteRejected):
    """The voter token is valid but belongs to another study than the URL's."""

    def __init__(self) -> None:
        super().__init__(403, "This voter token belongs to another study.")


def _context(cur: Any, voter_id: int | None = None, *, token: str | None = None) -> _Context:
    """The voter's study and current ballot, with the voter row locked; by id or by API token.

    Raises :class:`VoteRejected` (401) for an unknown voter or token.
    """
    if _pg():
        if token is None:
            _execute(cur, "context_by_id", [voter_id])
        else:
            _execute(cur, "context_by_token", [token])
    elif token is None:
        cur.execute(_CONTEXT_BY_ID_SQL, [voter_id])
    else:
        cur.execute(_CONTEXT_BY_TOKEN_SQL, [token])
    row = cur.fetchone()
    if row is None:
        raise VoteRejected(401, "Unknown voter." if token is None else "Unknown voter token.")
    return _context_from(row)


def _context_from(row: tuple[Any, ...]) -> _Context:
    """A row of the context statement (columns in its order) as a :class:`_Context`."""
    (sid, cap, lease, ties, sstatus, code, bid, bstatus, n_items, m, answered, vid, slug) = row
    return _Context(
        voter_id=vid,
        study_slug=slug,
        study_id=sid,
        cap=cap,
        lease_seconds=lease,
        allow_ties=bool(ties),
        study_finished=sstatus == "finished",
        completion_code=code,
        ballot_id=bid,
        ballot_open=bstatus == "open",
        ballot_size=ranking.ballot_comparisons(n_items, m) if bid else 0,
        answered=answered or 0,
    )


def _token_context(cur: Any, token: str, slug: str) -> _Context:
    ctx = _context(cur, token=token)
    if ctx.study_slug != slug:
        raise WrongStudy()
    return ctx


_EXTEND_SQL = """
UPDATE collector_comparison SET lease_expires_at = %s
WHERE leased_to_id = %s AND ballot_id = %s AND status = 'open'
RETURNING id, item_left_id, item_right_id
"""

# Walks the partial index comparison_claimable (ballot, slot) WHERE status = 'open' from the slot
# %(start)s, then wraps around to the front (COALESCE evaluates the second walk only if the first
# found nothing). Concurrent voters start at different slots: all walking from the front, each
# claim stepped past every comparison leased to the others, and they all queued on the same index
# and heap pages. The outer WHERE repeats the claimability test: PostgreSQL re-evaluates it on the
# row version it finally locks.
_CANDIDATE_SQL = """(
    SELECT c.id FROM collector_comparison c
    WHERE c.ballot_id = %(ballot)s AND c.status = 'open' AND c.slot {cmp} %(start)s
      AND (c.leased_to_id IS NULL OR c.lease_expires_at < %(now)s)
      AND NOT EXISTS (
        SELECT 1 FROM collector_vote v
        WHERE v.voter_id = %(voter)s
          AND v.pair_low = {lo}(c.item_left_id, c.item_right_id)
          AND v.pair_high = {hi}(c.item_left_id, c.item_right_id))
    ORDER BY c.slot LIMIT 1 {lock})"""
_CLAIM_SQL = """
UPDATE collector_comparison SET leased_to_id = %(voter)s, lease_expires_at = %(expires)s
WHERE id = COALESCE({from_start}, {wrapped})
  AND status = 'open' AND (leased_to_id IS NULL OR lease_expires_at < %(now)s)
RETURNING id, item_left_id, item_right_id
"""


def _claim_start(voter_id: int, answered: int, ballot_size: int) -> int:
    """Where a claim starts walking the ballot's slots: spread over the ballot, different for each
    voter and for each of a voter's claims (a fixed hash, not a random draw)."""
    return (voter_id * 2654435761 + answered * 2246822519) % max(1, ballot_size)


_ITEMS_SQL = """
SELECT i.id, i."index", ta.id, ta.text, tb.id, tb.text
FROM collector_item i
JOIN collector_token ta ON ta.id = i.token_a_id
JOIN collector_token tb ON tb.id = i.token_b_id
WHERE i.id IN (%s, %s)
"""


def _claim_sql(**dialect: str) -> str:
    return _CLAIM_SQL.format(
        from_start=_CANDIDATE_SQL.format(cmp=">=", **dialect),
        wrapped=_CANDIDATE_SQL.format(cmp="<", **dialect),
    )


_PG_CLAIM_SQL = _claim_sql(lo="LEAST", hi="GREATEST", lock="FOR UPDATE SKIP LOCKED")
_SQLITE_CLAIM_SQL = _claim_sql(lo="MIN", hi="MAX", lock="")


# On PostgreSQL the statement that extends or claims a lease also returns the pair's items and
# tokens (the data-modifying statement in a CTE): one round trip instead of two. SQLite has no
# data-modifying CTEs: there the items are read by a second statement.
_WITH_ITEMS_SQL = """
WITH c AS ({leased})
SELECT c.id, il.id, il."index", tla.id, tla.text, tlb.id, tlb.text,
       ir.id, ir."index", tra.id, tra.text, trb.id, trb.text
FROM c
JOIN collector_item il ON il.id = c.item_left_id
JOIN collector_token tla ON tla.id = il.token_a_id
JOIN collector_token tlb ON tlb.id = il.token_b_id
JOIN collector_item ir ON ir.id = c.item_right_id
JOIN collector_token tra ON tra.id = ir.token_a_id
JOIN collector_token trb ON trb.id = ir.token_b_id
ORDER BY c.id LIMIT 1
"""
_PG_EXTEND_ITEMS_SQL = _WITH_ITEMS_SQL.format(leased=_EXTEND_SQL.strip())
_PG_CLAIM_ITEMS_SQL = _WITH_ITEMS_SQL.format(leased=_PG_CLAIM_SQL.strip())


def _pair(cur: Any, ballot_id: int, row: tuple[int, int, int]) -> Pair:
    cid, left_id, right_id = row
    cur.execute(_ITEMS_SQL, [left_id, right_id])
    sides = {r[0]: Side(*r) for r in cur.fetchall()}
    return Pair(cid, ballot_id, sides[left_id], sides[right_id])


def _pg_pair(ballot_id: int, row: tuple[Any, ...] | None) -> Pair | None:
    if row is None:
        return None
    return Pair(row[0], ballot_id, Side(*row[1:7]), Side(*row[7:13]))


def _assign(cur: Any, voter_id: int, ctx: _Context, *, has_lease: bool) -> Assignment:
    pair = None
    if ctx.ballot_id is not None and ctx.ballot_open:
        now = timezone.now()
        expires = now + dt.timedelta(seconds=ctx.lease_seconds)
        claim = {
            "voter": voter_id,
            "ballot": ctx.ballot_id,
            "now": now,
            "expires": expires,
            "start": _claim_start(voter_id, ctx.answered, ctx.ballot_size),
        }
        if _pg():
            if has_lease:
                _execute(cur, "extend", [expires, voter_id, ctx.ballot_id])
                pair = _pg_pair(ctx.ballot_id, cur.fetchone())
            if pair is None and ctx.answered < ctx.cap:
                _execute(cur, "claim", claim)
                pair = _pg_pair(ctx.ballot_id, cur.fetchone())
        else:
            row = None
            if has_lease:
                cur.execute(_EXTEND_SQL, [expires, voter_id, ctx.ballot_id])
                rows = cur.fetchall()
                row = min(rows) if rows else None
            if row is None and ctx.answered < ctx.cap:
                cur.execute(_SQLITE_CLAIM_SQL, claim)
                row = cur.fetchone()
            if row is not None:
                pair = _pair(cur, ctx.ballot_id, row)
    return _assignment(ctx, pair)


def _assignment(ctx: _Context, pair: Pair | None) -> Assignment:
    done = ctx.study_finished or (ctx.ballot_id is not None and ctx.answered >= ctx.quota)
    return Assignment(
        pair=pair,
        answered=ctx.answered,
        quota=ctx.quota,
        completion_code=ctx.completion_code if pair is None and done else None,
    )


class VoterToken(NamedTuple):
    """The voting API's voter: looked up by token in the statement that reads their context (no
    round trip of its own), and checked against the URL's study."""

    token: str
    slug: str


def _voter_context(cur: Any, voter: Voter | VoterToken) -> _Context:
    """Raises :class:`VoteRejected` (401) for an unknown voter or token, :class:`WrongStudy` for
    a token of another study than the URL's."""
    if isinstance(voter, VoterToken):
        return _token_context(cur, voter.token, voter.slug)
    return _context(cur, voter.pk)


def next_assignment(voter: Voter | VoterToken) -> Assignment:
    """The voter's outstanding comparison (lease extended), else a newly claimed one."""
    with transaction.atomic(), connection.cursor() as cur:
        ctx = _voter_context(cur, voter)
        return _assign(cur, ctx.voter_id, ctx, has_lease=True)


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
       v.id, v.voter_id, v.choice, v.response_ms, v.created_at, c.item_left_id, c.item_right_id
FROM collector_comparison c
JOIN collector_ballot b ON b.id = c.ballot_id
LEFT JOIN collector_vote v ON v.comparison_id = c.id
WHERE c.id = %s
"""


_INSERT_VOTE_SQL = """
INSERT INTO collector_vote
    (comparison_id, ballot_id, voter_id, choice, response_ms, created_at, pair_low, pair_high)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id
"""
_ANSWERED_SQL = "UPDATE collector_comparison SET status = 'answered' WHERE id = %s"
# The probe counts exactly up to the engine's tail-lock threshold plus one, as its own does.
_OPEN_LEFT_LIMIT = lifecycle._TAIL_LOCK_THRESHOLD + 2
# PostgreSQL: one statement locks the comparison, stores the vote if every rule of _check holds
# (the same conditions, in SQL), marks the comparison answered and probes the open comparisons
# left for the engine. It returns the comparison row as _COMPARISON_SQL does, so a vote that was
# not stored is explained by _check exactly as on SQLite. The casts fix the parameters' types
# for PREPARE.
_PG_VOTE_SQL = f"""
WITH c AS (
    SELECT c.id, c.ballot_id, c.status, c.leased_to_id, b.study_id, b.status AS ballot_status,
           v.id AS vote_id, v.voter_id, v.choice, v.response_ms, v.created_at,
           c.item_left_id, c.item_right_id
    FROM collector_comparison c
    JOIN collector_ballot b ON b.id = c.ballot_id
    LEFT JOIN collector_vote v ON v.comparison_id = c.id
    WHERE c.id = %(cid)s
    FOR NO KEY UPDATE OF c
), ins AS (
    INSERT INTO collector_vote
        (comparison_id, ballot_id, voter_id, choice, response_ms, created_at, pair_low, pair_high)
    SELECT c.id, c.ballot_id, %(voter)s::bigint, %(choice)s::varchar, %(ms)s::integer,
           %(now)s::timestamptz, LEAST(c.item_left_id, c.item_right_id),
           GREATEST(c.item_left_id, c.item_right_id)
    FROM c
    WHERE c.study_id = %(study)s::bigint AND c.vote_id IS NULL
      AND (%(choice)s::varchar <> 'tie' OR %(ties)s::boolean)
      AND c.ballot_status = 'open' AND c.status = 'open' AND c.leased_to_id = %(voter)s::bigint
    RETURNING id, comparison_id
), upd AS (
    UPDATE collector_comparison SET status = 'answered'
    WHERE id IN (SELECT comparison_id FROM ins)
)
SELECT c.ballot_id, c.status, c.leased_to_id, c.study_id, c.ballot_status,
       c.vote_id, c.voter_id, c.choice, c.response_ms, c.created_at,
       (SELECT id FROM ins),
       (SELECT COUNT(*) FROM (SELECT 1 FROM collector_comparison o
        WHERE o.ballot_id = c.ballot_id AND o.status = 'open'
        ORDER BY o.slot LIMIT {_OPEN_LEFT_LIMIT}) AS t)
FROM c
"""


def _check(
    row: tuple[Any, ...] | None, voter_id: int, ctx: _Context, cid: int, choice: str
) -> StoredVote | None:
    """The rules, on the locked comparison row: the identical vote already stored, None if a new
    vote may be stored, else :class:`VoteRejected`."""
    if row is None or row[3] != ctx.study_id:
        raise VoteRejected(404, "No such comparison in this study.")
    ballot_id, cstatus, leased_to, _study, bstatus, vid, vvoter, vchoice, vms, vcreated = row
    if vid is not None:
        if vvoter == voter_id and vchoice == choice:
            return StoredVote(vid, cid, ballot_id, voter_id, vchoice, vms, vcreated)
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
    return None


def _record(
    cur: Any,
    voter_id: int,
    ctx: _Context,
    cid: int,
    choice: str,
    response_ms: int | None,
    *,
    count_open: bool = False,
) -> tuple[StoredVote, bool]:
    """Store the vote (or find the identical one already stored); returns (vote, created).

    ``count_open``: hand the engine the open-comparison count probed by the vote's statement
    (PostgreSQL); without it :func:`lifecycle.note_vote_recorded` probes by itself (its patched
    variants in the engine's tests take the ballot id alone).
    """
    now = timezone.now()
    if _pg():
        args = {"cid": cid, "voter": voter_id, "choice": choice, "ms": response_ms, "now": now}
        _execute(cur, "vote", {**args, "study": ctx.study_id, "ties": ctx.allow_ties})
        row = cur.fetchone()
        vote_id = row[10] if row is not None else None
        if vote_id is None:
            existing = _check(row and row[:10], voter_id, ctx, cid, choice)
            if existing is None:  # the SQL and _check disagree: a bug, never a silent loss
                raise RuntimeError(f"vote on comparison {cid} passed the rules but was not stored")
            return existing, False
        ballot_id = row[0]
        open_seen = row[11]
    else:
        cur.execute(_COMPARISON_SQL, [cid])
        row = cur.fetchone()
        existing = _check(row and row[:10], voter_id, ctx, cid, choice)
        if existing is not None:
            return existing, False
        ballot_id, pair = row[0], sorted(row[10:12])
        cur.execute(_INSERT_VOTE_SQL, [cid, ballot_id, voter_id, choice, response_ms, now, *pair])
        (vote_id,) = cur.fetchone()
        cur.execute(_ANSWERED_SQL, [cid])
        count_open = False
    # The engine moves the ballot to closing (and enqueues the close on commit) after its last vote.
    if count_open:
        # The statement's UPDATE is invisible to its own snapshot: the count includes this
        # comparison (locked as open, in this ballot). Capped one higher to stay exact.
        lifecycle.note_vote_recorded(ballot_id, open_left=open_seen - 1)
    else:
        lifecycle.note_vote_recorded(ballot_id)
    return StoredVote(vote_id, cid, ballot_id, voter_id, choice, response_ms, now), True


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
        return vote.as_vote()


def vote_and_next(
    voter: Voter | VoterToken, comparison_id: Any, choice: Any, response_ms: Any = None
) -> tuple[StoredVote, bool, Assignment]:
    """Record a vote and hand out the next comparison in one transaction (one round trip).

    Returns ``(vote, created, assignment)``; ``created`` is False for a repeated identical vote,
    whose assignment is then the voter's outstanding comparison (the one the lost reply carried).
    A :class:`VoterToken` is checked before the input (401 and 403 come before 400, as when the
    API authenticated separately); a :class:`Voter` (the pages' session voter) after it.
    """
    fast = fast_vote_and_next(voter, comparison_id, choice, response_ms)
    if fast is not None:
        return fast
    if isinstance(voter, VoterToken):
        with transaction.atomic(), connection.cursor() as cur:
            ctx = _token_context(cur, voter.token, voter.slug)
            cid, choice, response_ms = _clean(comparison_id, choice, response_ms)
            return _vote_and_next(cur, ctx, cid, choice, response_ms)
    cid, choice, response_ms = _clean(comparison_id, choice, response_ms)
    with transaction.atomic(), connection.cursor() as cur:
        ctx = _context(cur, voter.pk)
        return _vote_and_next(cur, ctx, cid, choice, response_ms)


def _vote_and_next(
    cur: Any, ctx: _Context, cid: int, choice: str, response_ms: int | None
) -> tuple[StoredVote, bool, Assignment]:
    vote, created = _record(cur, ctx.voter_id, ctx, cid, choice, response_ms, count_open=True)
    if created:
        ctx.answered += 1
    # A fresh vote consumed the voter's only lease: skip the lease-extension statement.
    return vote, created, _assign(cur, ctx.voter_id, ctx, has_lease=not created)


# --- The common vote in one statement (PostgreSQL) ----------------------------------------------
# A vote that is stored, and the next claim, as one call of a PL/pgSQL function running the same
# statements as above: one round trip, committed on its own, instead of five (BEGIN, context,
# vote, claim, COMMIT); each round trip cost ~45 us of server CPU and more of the web process's.
# Everything else (bad input, a vote to reject or a repeated one, no open ballot) makes the function
# return nothing and change nothing, and the caller takes the general path, which rereads all. The
# function is a temporary one (pg_temp), created on each connection by its first call: no
# migration, and it always runs this module's SQL. It commits by itself, so it runs only in
# autocommit (inside a transaction the general path costs no more round trips than it would).

# OUT: the context row (as the context statement returns it), the stored vote's id with its ballot
# and open-left probe, and the claimed pair with its tokens (as _pg_pair reads them).
_CONTEXT_OUT = ("c_sid bigint", "c_cap integer", "c_lease integer", "c_ties boolean",
                 "c_sstatus varchar", "c_code varchar", "c_bid bigint", "c_bstatus varchar",
                 "c_n integer", "c_m integer", "c_answered bigint", "c_vid bigint",
                 "c_slug varchar")  # fmt: skip
_VOTE_VARS = ("x_ballot bigint", "x_cstatus varchar", "x_leased bigint", "x_study bigint",
              "x_bstatus varchar", "x_vote bigint", "x_voter bigint", "x_choice varchar",
              "x_ms integer", "x_created timestamptz", "x_stored bigint",
              "x_open bigint")  # fmt: skip
_PAIR_OUT = ("o_cid bigint", "o_l bigint", "o_l_index integer", "o_la bigint", "o_la_text text",
             "o_lb bigint", "o_lb_text text", "o_r bigint", "o_r_index integer", "o_ra bigint",
             "o_ra_text text", "o_rb bigint", "o_rb_text text")  # fmt: skip
_FAST_OUT = (*_CONTEXT_OUT, "o_vote bigint", "o_ballot bigint", "o_open bigint", *_PAIR_OUT)
# _claim_start(voter, answered, ranking.ballot_comparisons(n, m)) in SQL (a test holds them equal).
_CLAIM_START_SQL = (
    "((%(voter)s::numeric * 2654435761 + %(answered)s::numeric * 2246822519)"
    " %% greatest(1, (%(m)s::bigint * %(n)s + 1) / 2))::bigint"
)


def _plpgsql(sql: str, key: str = "") -> str:
    """A statement of this module inside the function: %(name)s becomes v_name, %s ``key``."""
    sql = re.sub(r"%\((\w+)\)s", r"v_\1", sql)
    return sql.replace("%%", "%").replace("%s", key)


def _into(names: tuple[str, ...]) -> str:
    return " INTO " + ", ".join(n.split()[0] for n in names)


_FAST_VOTE_FUNCTION = f"""
CREATE OR REPLACE FUNCTION pg_temp.collector_vote_and_next(
    v_token text, v_voter_id bigint, v_slug text, v_cid bigint, v_choice varchar,
    v_ms integer, v_now timestamptz, {", ".join("OUT " + o for o in _FAST_OUT)}
) LANGUAGE plpgsql AS $fn$
DECLARE
    {"; ".join(_VOTE_VARS)};
    v_voter bigint; v_study bigint; v_ties boolean; v_ballot bigint;
    v_expires timestamptz; v_start bigint; v_answered bigint; v_n integer; v_m integer;
BEGIN
    IF v_token IS NULL THEN
        {_plpgsql(_CONTEXT_BY_ID_SQL + _PG_CONTEXT_LOCK, "v_voter_id") + _into(_CONTEXT_OUT)};
    ELSE
        {_plpgsql(_CONTEXT_BY_TOKEN_SQL + _PG_CONTEXT_LOCK, "v_token") + _into(_CONTEXT_OUT)};
    END IF;
    IF NOT FOUND OR c_slug <> coalesce(v_slug, c_slug) OR c_bstatus IS DISTINCT FROM 'open' THEN
        RETURN;
    END IF;
    v_voter := c_vid; v_study := c_sid; v_ties := c_ties;
    {_plpgsql(_PG_VOTE_SQL) + _into(_VOTE_VARS)};
    IF x_stored IS NULL THEN
        RETURN;
    END IF;
    o_vote := x_stored; o_ballot := x_ballot; o_open := x_open;
    v_answered := coalesce(c_answered, 0) + 1;
    IF v_answered < c_cap THEN
        v_ballot := c_bid; v_n := c_n; v_m := c_m;
        v_expires := v_now + make_interval(secs => c_lease);
        v_start := {_plpgsql(_CLAIM_START_SQL)};
        {_plpgsql(_PG_CLAIM_ITEMS_SQL) + _into(_PAIR_OUT)};
    END IF;
END
$fn$
"""
_FAST_VOTE_SQL = "SELECT * FROM pg_temp.collector_vote_and_next(%s, %s, %s, %s, %s, %s, %s)"
_functions: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def fast_vote_and_next(
    voter: Voter | VoterToken, comparison_id: Any, choice: Any, response_ms: Any
) -> tuple[StoredVote, bool, Assignment] | None:
    """The common vote in one statement (PostgreSQL); None where the general path must run."""
    if not _pg() or connection.in_atomic_block:  # it commits by itself: only in autocommit
        return None
    try:
        cid, choice, response_ms = _clean(comparison_id, choice, response_ms)
    except VoteRejected:
        return None  # the general path checks the token first (401 and 403 before 400)
    if isinstance(voter, VoterToken):
        key: tuple[str | None, int | None, str | None] = (voter.token, None, voter.slug)
    else:
        key = (None, voter.pk, None)
    now = timezone.now()
    with connection.cursor() as cur:
        raw = connection.connection
        if raw not in _functions:
            cur.execute(_FAST_VOTE_FUNCTION)  # committed at once (autocommit)
            _functions[raw] = True
        cur.execute(_FAST_VOTE_SQL, [*key, cid, choice, response_ms, now])
        row = cur.fetchone()
    n = len(_CONTEXT_OUT)
    vote_id, ballot_id, open_seen = row[n : n + 3]
    if vote_id is None:
        return None
    ctx = _context_from(row[:n])
    ctx.answered += 1
    # As in _record: the probe's snapshot still counts this comparison as open.
    if open_seen - 1 <= lifecycle._TAIL_LOCK_THRESHOLD:
        # Out of autocommit, the vote's statement has committed: whoever comes last sees every
        # answer, and the sweep closes a ballot left with none open if this process dies here.
        with transaction.atomic():
            lifecycle.note_vote_recorded(ballot_id, open_left=open_seen - 1)
    pair = _pg_pair(ballot_id, row[n + 3 :] if row[n + 3] is not None else None)
    vote = StoredVote(vote_id, cid, ballot_id, ctx.voter_id, choice, response_ms, now)
    return vote, True, _assignment(ctx, pair)


# Built at import (never lazily: the web server's threads would race to fill it).
_STATEMENTS: dict[str, _Prepared] = {
    name: _to_dollars(name, sql)
    for name, sql in {
        "context_by_id": _CONTEXT_BY_ID_SQL + _PG_CONTEXT_LOCK,
        "context_by_token": _CONTEXT_BY_TOKEN_SQL + _PG_CONTEXT_LOCK,
        "extend": _PG_EXTEND_ITEMS_SQL,
        "claim": _PG_CLAIM_ITEMS_SQL,
        "vote": _PG_VOTE_SQL,
    }.items()
}
