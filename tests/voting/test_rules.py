"""Every voting rule, once, against the one implementation: the SQL function collector_vote_v5.

These tests commit (``transaction=True``), as the web server does: each call of the function is
its own transaction, so what it stores or refuses is seen as another request would see it.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from collector.management.commands._common import wait_until_closed
from collector.models import Ballot, CheckAnswer, Comparison, Vote, Voter
from collector.studies import lifecycle
from collector.voting import store
from collector.voting.store import VoteRejected, VoterToken
from tests.factories import add_checks

pytestmark = pytest.mark.django_db(transaction=True)


def refused(voter: Voter | VoterToken, cid: int, choice: str = "left") -> VoteRejected:
    """The refusal of a vote, after checking that nothing was stored."""
    votes, leases = Vote.objects.count(), list(Comparison.objects.values_list("leased_to_id"))
    with pytest.raises(VoteRejected) as err:
        store.vote_and_next(voter, cid, choice)
    assert Vote.objects.count() == votes
    assert list(Comparison.objects.values_list("leased_to_id")) == leases
    return err.value


def test_a_vote_and_the_next_claim_are_one_statement(make_study):
    study = make_study(slug="one", n_items=40, m=4, cap=5)
    voter = Voter.objects.create(study=study)
    c = store.next_comparison(voter)
    with CaptureQueriesContext(connection) as ctx:
        stored, created, nxt = store.vote_and_next(VoterToken(voter.token, "one"), c.id, "left")
    assert len(ctx.captured_queries) == 1 and "collector_vote_v5" in ctx.captured_queries[0]["sql"]
    assert created and Vote.objects.get(id=stored.id).comparison_id == c.id
    assert Comparison.objects.get(id=c.id).status == "answered"
    assert nxt.pair is not None and Comparison.objects.get(id=nxt.pair.id).leased_to_id == voter.id


def spread(voter: Voter) -> int:
    """The voter's own number the function spreads them by: the first 12 hex digits of the md5 of
    their participant id, or of their pseudonym when they have none (never their database id)."""
    return int(hashlib.md5((voter.participant or voter.pseudonym).encode()).hexdigest()[:12], 16)


def claim_start(voter: Voter, answered: int, size: int) -> int:
    """The slot from which the function starts a voter's claim: a fixed hash, not a random draw."""
    return (spread(voter) * 2654435761 + answered * 2246822519) % size


@pytest.mark.parametrize("participant", ["", "p-7"], ids=["anonymous", "participant"])
def test_a_claim_starts_at_the_voters_hashed_slot(make_study, participant):
    study = make_study(slug="spread", n_items=40, m=4)
    size = Ballot.objects.get(study=study).n_comparisons
    voter = Voter.objects.create(study=study, participant=participant)
    c = store.next_comparison(voter)
    assert Comparison.objects.get(id=c.id).slot == claim_start(voter, 0, size)
    _stored, _created, nxt = store.vote_and_next(voter, c.id, "left")
    assert Comparison.objects.get(id=nxt.pair.id).slot == claim_start(voter, 1, size)


def test_a_voters_checks_fall_and_face_as_their_spread_says(make_study):
    """Block b of R shown items holds its check at position 1 + hash(spread, b) mod (R - 1); a
    voter's n-th check (from 0) has its related pair on the left when spread + n is even."""
    study = make_study(slug="checks", n_items=60, m=4, cap=40)
    add_checks(study, 2, every=5)
    voter = Voter.objects.create(study=study, participant="p-checks")
    shown: list[bool] = []  # True: a check
    a = store.next_assignment(voter)
    while a.pair is not None:
        shown.append(a.pair.left.item_index == -1)
        _vote, _created, a = store.vote_and_next(voter, a.pair.id, "left")
    s = spread(voter)
    checks = [k for k, is_check in enumerate(shown) if is_check]
    assert len(checks) >= 9
    assert checks == [5 * b + 1 + (s * 2246822519 + b * 3266489917) % 4 for b in range(len(checks))]
    sides = CheckAnswer.objects.filter(voter=voter).order_by("id").values_list("related_left")
    assert [left for (left,) in sides] == [(s + n) % 2 == 0 for n in range(len(checks))]


def test_a_claim_wraps_around_to_the_lowest_open_slot(study):
    ballot = Ballot.objects.get(study=study)
    size = ballot.n_comparisons
    voters = (Voter.objects.create(study=study) for _ in range(50))
    voter = next(v for v in voters if claim_start(v, 0, size) >= 2)
    start = claim_start(voter, 0, size)
    assert Comparison.objects.get(id=store.next_comparison(voter).id).slot == start
    # Nothing claimable from that slot on: the claim wraps around to the lowest open slot.
    Comparison.objects.filter(ballot=ballot, slot__gte=start).update(status="void")
    Comparison.objects.filter(ballot=ballot, slot=0).update(status="void")
    claimed = store.next_assignment(voter)  # its lease was voided: a new claim
    assert Comparison.objects.get(id=claimed.pair.id).slot == 1


def test_an_unknown_token_is_refused_with_401(study, voter):
    c = store.next_comparison(voter)
    assert refused(VoterToken("no-such-token", study.slug), c.id).status_code == 401


def test_a_token_of_another_study_is_refused_with_403(make_study, voter):
    make_study(slug="elsewhere")
    c = store.next_comparison(voter)
    err = refused(VoterToken(voter.token, "elsewhere"), c.id)
    assert (err.status_code, err.reason) == (403, "wrong_study")


def test_a_comparison_of_another_study_is_refused_with_404(make_study, voter):
    other = make_study(slug="elsewhere")
    theirs = store.next_comparison(Voter.objects.create(study=other))
    store.next_comparison(voter)
    assert refused(voter, theirs.id).status_code == 404
    assert refused(voter, 987654321).status_code == 404


def test_a_comparison_leased_to_someone_else_or_never_handed_out_is_refused(voter, other_voter):
    mine = store.next_comparison(voter)
    theirs = store.next_comparison(other_voter)
    err = refused(voter, theirs.id)
    assert (err.status_code, err.reason) == (409, "not_leased")
    never = Comparison.objects.exclude(id__in=[mine.id, theirs.id]).filter(leased_to=None)[0]
    assert refused(voter, never.id).reason == "not_leased"


def test_a_tie_is_refused_where_the_study_forbids_ties(make_study):
    study = make_study(slug="noties", allow_ties=False)
    voter = Voter.objects.create(study=study)
    c = store.next_comparison(voter)
    err = refused(voter, c.id, "tie")
    assert (err.status_code, err.reason) == (400, "tie_not_allowed")


def test_a_comparison_answered_differently_before_is_refused(voter):
    c = store.next_comparison(voter)
    store.record_vote(voter, c.id, "left")
    err = refused(voter, c.id, "right")
    assert (err.status_code, err.reason) == (409, "answered_differently")


def test_a_comparison_another_voter_answered_is_refused(voter, other_voter):
    c = store.next_comparison(other_voter)
    store.record_vote(other_voter, c.id, "left")
    err = refused(voter, c.id)
    assert (err.status_code, err.reason) == (409, "answered_by_other")


def test_a_repeated_identical_vote_returns_the_stored_one_and_the_outstanding_comparison(voter):
    c = store.next_comparison(voter)
    first, created, nxt = store.vote_and_next(voter, c.id, "left", 700)
    again, again_created, again_next = store.vote_and_next(voter, c.id, "left", 700)
    assert created and not again_created and again.id == first.id
    assert again_next.pair == nxt.pair and Vote.objects.count() == 1


def test_a_comparison_voided_by_an_early_close_is_refused(closes_held, voter, monkeypatch):
    c = store.next_comparison(voter)
    lifecycle.close_early(c.ballot_id)
    err = refused(voter, c.id)
    assert (err.status_code, err.reason) == (409, "voided")


def test_a_comparison_of_a_closed_ballot_is_refused(study, voter):
    c = store.next_comparison(voter)
    Ballot.objects.filter(study=study).update(status="closing")
    err = refused(voter, c.id)
    assert (err.status_code, err.reason) == (409, "ballot_closed")


def test_a_vote_past_the_quota_is_refused(study, voter):
    c = store.next_comparison(voter)
    study.__class__.objects.filter(id=study.id).update(per_voter_cap=0)
    err = refused(voter, c.id)
    assert (err.status_code, err.reason) == (409, "quota_reached")


def test_the_voter_at_the_cap_gets_no_claim_and_the_completion_code(make_study):
    study = make_study(slug="cap", n_items=40, m=4, cap=2)
    voter = Voter.objects.create(study=study)
    c = store.next_comparison(voter)
    _s, _c, nxt = store.vote_and_next(voter, c.id, "left")
    _s, _c, done = store.vote_and_next(voter, nxt.pair.id, "right")
    assert done.pair is None and (done.answered, done.quota) == (2, 2)
    assert done.completion_code == study.completion_code


def test_the_last_vote_closes_the_ballot_through_the_worker(make_study, celery_worker):
    study = make_study(slug="tail", n_items=4, m=2)
    voters = [Voter.objects.create(study=study) for _ in range(4)]
    pending = {v.id: c for v in voters if (c := store.next_comparison(v)) is not None}
    while pending:
        for v in voters:
            if v.id not in pending:
                continue
            _s, created, nxt = store.vote_and_next(v, pending[v.id].id, "left")
            assert created
            if nxt.pair is None:
                del pending[v.id]
            else:
                pending[v.id] = nxt.pair
    ballot = Ballot.objects.get(study=study, number=1)
    assert not ballot.comparisons.filter(status="open").exists()
    wait_until_closed(ballot.id, timeout=60)  # by the worker; raises if it never happens
    assert Ballot.objects.filter(study=study, number=2).exists()


@pytest.mark.parametrize(
    "open_after", [lifecycle.TAIL_LOCK_THRESHOLD, lifecycle.TAIL_LOCK_THRESHOLD + 1]
)
def test_the_engine_hears_of_a_vote_exactly_when_the_tail_threshold_is_reached(
    make_study, monkeypatch, open_after
):
    # The function's open-comparison probe stops at a constant: it must be the engine's
    # threshold plus one, or a ballot's tail would go unnoticed (or cost a lock too early).
    heard: list[int] = []
    monkeypatch.setattr(
        lifecycle, "note_vote_recorded", lambda b, open_left: heard.append(open_left)
    )
    study = make_study(slug="probe", n_items=40, m=8, cap=5)
    voter = Voter.objects.create(study=study)
    c = store.next_comparison(voter)
    others = Comparison.objects.filter(ballot_id=c.ballot_id, status="open").exclude(id=c.id)
    assert others.count() > open_after
    keep = list(others.order_by("slot").values_list("id", flat=True)[:open_after])
    others.exclude(id__in=keep).update(status="void")
    store.vote_and_next(voter, c.id, "left", hand_out=False)
    assert heard == ([open_after] if open_after <= lifecycle.TAIL_LOCK_THRESHOLD else [])


def test_a_finished_studys_codes_go_to_voters_who_answered_not_to_newcomers(
    make_study, monkeypatch
):
    study = make_study(slug="over", n_items=6, m=2, n_ballots=1, cap=2)
    veteran, some = Voter.objects.create(study=study), Voter.objects.create(study=study)
    for voter, n in ((veteran, 2), (some, 1)):
        for _ in range(n):
            store.record_vote(voter, store.next_comparison(voter).id, "left")
    Ballot.objects.filter(study=study).update(status="closed")
    study.__class__.objects.filter(pk=study.pk).update(status="finished")
    newcomer = Voter.objects.create(study=study)
    assert store.next_assignment(newcomer).completion_code is None
    assert store.next_assignment(veteran).completion_code == study.completion_code
    # One answer of a share of two, and the study can give no more: the partial code.
    assert store.next_assignment(some).completion_code == study.partial_code


def test_an_excluded_voter_is_refused_and_gets_the_excluded_code(study, voter):
    c = store.next_comparison(voter)
    assert store.exclude_voter(voter.id, "speeder") == 0
    assert refused(voter, c.id).reason == "excluded"
    a = store.next_assignment(voter)
    assert a.pair is None and a.excluded and a.completion_code == study.excluded_code
    assert Comparison.objects.get(id=c.id).leased_to_id is None  # back in the pool


def test_a_paused_study_hands_out_nothing_new_but_takes_the_answer_in_hand(study, voter):
    c = store.next_comparison(voter)
    study.__class__.objects.filter(pk=study.pk).update(paused_at=timezone.now())
    assert store.next_comparison(voter).id == c.id  # the comparison already in hand
    _vote, created, nxt = store.vote_and_next(voter, c.id, "left")
    assert created and nxt.pair is None and nxt.paused and nxt.completion_code is None
    study.__class__.objects.filter(pk=study.pk).update(paused_at=None)
    assert store.next_assignment(voter).pair is not None


def test_a_refresh_keeps_the_lease_until_it_expires_and_renews_it_only_then(study, voter):
    c = store.next_comparison(voter)
    first = Comparison.objects.get(id=c.id).lease_expires_at
    assert store.next_comparison(voter).id == c.id
    assert Comparison.objects.get(id=c.id).lease_expires_at == first  # not renewed at will
    Comparison.objects.filter(id=c.id).update(lease_expires_at=timezone.now() - timedelta(1))
    assert store.next_comparison(voter).id == c.id  # nobody took it: still the voter's
    assert Comparison.objects.get(id=c.id).lease_expires_at > timezone.now()
