"""What a voter has earned when the study has nothing for them: no unpaid work.

A voter with no pair and not yet done (:func:`collector.voting.store.next_assignment`) has
earned, in this order:

- the completion code when they answered their share of some ballot: as many comparisons as
  the quota of that ballot, ``min(per_voter_cap, comparisons in the ballot)`` (a voter who
  answered the current ballot's share is done before this is asked);
- the partial code when they answered something and the study can give them no more: it is
  finished, or archived (closed to voters), or they leave it (their data is deleted);
- nothing yet otherwise: the study may still give them pairs (the next ballot, or after a pause),
  and the wait page offers the partial code once they are stranded
  (:mod:`collector.voting.waiting`).

This runs only when the voting function handed out no pair and gave no code, never on the vote
path. Outcomes are :class:`collector.voting.exits.Outcome` values (plain strings here: the
exits module sits above the store). A platform participant who declined gets the no-consent
code (:func:`collector.voting.exits.declined_exit`).
"""

from __future__ import annotations

from django.db import connection

__all__ = ["COMPLETE", "PARTIAL", "idle_outcome"]

COMPLETE, PARTIAL = "complete", "partial"  # exits.Outcome.COMPLETE, exits.Outcome.PARTIAL

# The voter's study (finished, archived, its codes) and their answers per ballot against each
# ballot's quota, in one round trip.
_IDLE_SQL = """
SELECT s.status = 'finished' OR s.archived_at IS NOT NULL, s.completion_code, s.partial_code,
       COALESCE(bool_or(per.answered >= LEAST(s.per_voter_cap, per.size)), false),
       COALESCE(sum(per.answered), 0)
FROM collector_voter vr
JOIN collector_study s ON s.id = vr.study_id
LEFT JOIN (
    SELECT b.n_comparisons AS size, count(*) AS answered
    FROM collector_vote v JOIN collector_ballot b ON b.id = v.ballot_id
    WHERE v.voter_id = %s GROUP BY b.id, b.n_comparisons
) per ON true
WHERE vr.id = %s
GROUP BY s.id
"""


def idle_outcome(voter_id: int, *, leaving: bool = False) -> tuple[str, str] | None:
    """The outcome and code a voter with nothing to answer has earned (module docstring), or
    None while the study may still give them pairs (or they answered nothing).

    ``leaving``: the voter leaves the study for good (their data is deleted at their request):
    the study can give them no more, as if it were finished.
    """
    with connection.cursor() as cur:
        cur.execute(_IDLE_SQL, [voter_id, voter_id])
        row = cur.fetchone()
    if row is None:
        return None
    closed, completion_code, partial_code, share_done, answered = row
    if share_done:
        return COMPLETE, completion_code
    if (closed or leaving) and answered:
        return PARTIAL, partial_code
    return None
