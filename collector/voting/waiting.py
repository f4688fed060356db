"""A voter left with no pair: since when they wait, and when they are *stranded*.

A voter waits when the store has no pair for them and no code: the next ballot is not open yet,
every remaining pair is leased to others, or the study is paused. ``Voter.waiting_since`` is set
the first time the wait page (or its poll) finds them so, and set again when they have voted since
(they got pairs in between: a new wait). Once they have waited ``Study.stranded_minutes`` (0:
never) they are stranded: ``Voter.partial_at`` records when the partial code was first offered,
and from then on the wait page keeps offering it (with the way out of
:func:`collector.voting.exits.way_out`) while it goes on looking for pairs.

This runs on the wait page and its JSON poll only, never on the vote path.
"""

from __future__ import annotations

import datetime as dt

from collector.models import Study, Vote, Voter

__all__ = ["stranded"]


def stranded(study: Study, voter_id: int, now: dt.datetime) -> bool:
    """Note that the voter waits (as of ``now``); True when they are stranded."""
    row = Voter.objects.filter(pk=voter_id).values_list("waiting_since", "partial_at").first()
    if row is None:
        return False
    since, partial_at = row
    if since is None or Vote.objects.filter(voter_id=voter_id, created_at__gt=since).exists():
        Voter.objects.filter(pk=voter_id).update(waiting_since=now)
        since = now
    if not study.stranded_minutes:
        return False
    if partial_at is not None:
        return True
    if now - since < dt.timedelta(minutes=study.stranded_minutes):
        return False
    Voter.objects.filter(pk=voter_id, partial_at__isnull=True).update(partial_at=now)
    return True
