"""Handing out comparisons and leases, straight through collector.voting.store (the refusals are
in test_rules.py)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from collector.models import Ballot, Comparison, Vote, Voter
from collector.voting import store
from collector.voting.store import VoteRejected

pytestmark = pytest.mark.django_db


def pair(c: Comparison) -> frozenset[int]:
    return frozenset((c.item_left_id, c.item_right_id))


def test_it_hands_out_a_comparison_with_a_lease(voter):
    c = store.next_comparison(voter)
    assert c is not None
    row = Comparison.objects.get(id=c.id)
    assert row.leased_to_id == voter.id
    assert row.lease_expires_at > timezone.now() + dt.timedelta(seconds=290)
    assert c.item_left.token_a.text and c.item_right.token_b.text


def test_it_gives_the_outstanding_comparison_back_and_extends_its_lease(voter):
    first = store.next_comparison(voter)
    Comparison.objects.filter(id=first.id).update(lease_expires_at=timezone.now())
    again = store.next_comparison(voter)
    assert again.id == first.id
    assert Comparison.objects.get(id=first.id).lease_expires_at > timezone.now()
    assert Comparison.objects.filter(leased_to=voter).count() == 1


def test_it_never_hands_out_a_comparison_leased_to_someone_else(voter, other_voter):
    mine = store.next_comparison(voter)
    theirs = store.next_comparison(other_voter)
    assert theirs.id != mine.id


def test_an_expired_lease_goes_back_to_the_pool(study, voter, other_voter):
    Comparison.objects.exclude(id=Comparison.objects.order_by("id")[0].id).update(status="void")
    mine = store.next_comparison(voter)
    assert store.next_comparison(other_voter) is None
    Comparison.objects.filter(id=mine.id).update(lease_expires_at=timezone.now())
    theirs = store.next_comparison(other_voter)
    assert theirs.id == mine.id
    with pytest.raises(VoteRejected) as err:
        store.record_vote(voter, mine.id, "left")
    assert err.value.status_code == 409
    assert not Vote.objects.exists()


def test_it_accepts_a_late_answer_when_nobody_reclaimed_the_lease(voter):
    c = store.next_comparison(voter)
    Comparison.objects.filter(id=c.id).update(lease_expires_at=timezone.now())
    vote = store.record_vote(voter, c.id, "right", 1200)
    assert Vote.objects.get(id=vote.id).choice == "right"


def test_it_records_a_vote_and_marks_the_comparison_answered(voter):
    c = store.next_comparison(voter)
    vote = store.record_vote(voter, c.id, "left", 850)
    stored = Vote.objects.get(id=vote.id)
    assert (stored.comparison_id, stored.voter_id, stored.choice, stored.response_ms) == (
        c.id,
        voter.id,
        "left",
        850,
    )
    assert stored.ballot_id == c.ballot_id
    assert Comparison.objects.get(id=c.id).status == "answered"


def test_it_stops_at_the_per_voter_cap(study, voter):
    answered = 0
    while (c := store.next_comparison(voter)) is not None:
        store.record_vote(voter, c.id, "left")
        answered += 1
    assert answered == study.per_voter_cap == 5
    a = store.next_assignment(voter)
    assert (a.answered, a.quota, a.completion_code) == (5, 5, study.completion_code)


def test_it_never_gives_a_voter_an_item_pair_they_already_answered(make_study):
    # 3 items, M = 4: 6 comparisons over only 3 distinct pairs.
    study = make_study(slug="tiny", n_items=3, m=4)
    v = Voter.objects.create(study=study)
    seen = []
    while (c := store.next_comparison(v)) is not None:
        store.record_vote(v, c.id, "left")
        seen.append(pair(c))
    assert len(seen) == len(set(seen)) == 3
    others = Voter.objects.create(study=study)
    while (c := store.next_comparison(others)) is not None:
        store.record_vote(others, c.id, "right")
    assert Comparison.objects.filter(status="open").count() == 0


def test_it_returns_nothing_without_an_open_ballot(make_study):
    study = make_study(slug="pending", ballot_status="pending")
    v = Voter.objects.create(study=study)
    a = store.next_assignment(v)
    assert a.comparison is None and a.completion_code is None


def test_a_finished_study_hands_a_new_voter_neither_a_pair_nor_the_code(make_study):
    # The code goes to voters who answered (tests/voting/test_rules.py).
    study = make_study(slug="done", ballot_status="closed", status="finished")
    a = store.next_assignment(Voter.objects.create(study=study))
    assert a.comparison is None and a.completion_code is None


def test_the_last_vote_moves_the_ballot_to_closing_and_enqueues_the_close(
    make_study, django_capture_on_commit_callbacks
):
    study = make_study(slug="last", n_items=2, m=1, n_ballots=1)
    v = Voter.objects.create(study=study)
    c = store.next_comparison(v)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        vote, created, nxt = store.vote_and_next(v, c.id, "tie")
    assert created and nxt.comparison is None
    assert Ballot.objects.get().status == "closing"
    assert len(callbacks) == 1


def test_vote_and_next_hands_out_the_next_comparison(voter):
    c = store.next_comparison(voter)
    vote, created, nxt = store.vote_and_next(voter, c.id, "left", 700)
    assert created and nxt.comparison is not None and nxt.comparison.id != c.id
    assert (nxt.answered, nxt.quota) == (1, 5)
    assert Comparison.objects.get(id=nxt.comparison.id).leased_to_id == voter.id
    again_vote, again_created, again = store.vote_and_next(voter, c.id, "left", 700)
    assert not again_created and again_vote.id == vote.id
    assert again.comparison.id == nxt.comparison.id
    assert Vote.objects.count() == 1
