"""Excluding a voter, attention checks and the address bound, against the voting function.

These tests commit (``transaction=True``) as the web server does.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from django.db.models import Sum

from collector.models import (
    Ballot,
    CheckAnswer,
    Comparison,
    ItemScore,
    Study,
    VoidedVote,
    Vote,
    Voter,
    VoteSetChange,
)
from collector.studies import bulk_sql, lifecycle
from collector.voting import store
from tests.factories import add_checks

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def close_in_process(closes_in_process):
    """A ballot's close runs here, not in a worker (none runs for these tests)."""


def answer_all(voter: Voter, choose=lambda a: "left") -> int:
    """Let ``voter`` answer everything handed to them; returns how many answers they gave."""
    n = 0
    a = store.next_assignment(voter)
    while a.pair is not None:
        _vote, _created, a = store.vote_and_next(voter, a.pair.id, choose(a))
        n += 1
    return n


def test_excluding_a_voter_voids_their_open_ballot_votes_and_returns_the_comparisons(make_study):
    study = make_study(n_items=12, m=4, cap=6, n_ballots=2)
    ballot = Ballot.objects.get(study=study, number=1)
    speeder = Voter.objects.create(study=study)
    assert answer_all(speeder) == 6
    holder = Voter.objects.create(study=study)
    held = store.next_assignment(holder)  # someone else's lease
    answered = set(Vote.objects.filter(voter=speeder).values_list("comparison_id", flat=True))

    assert store.exclude_voter(speeder.id, "speeder") == 6
    assert store.exclude_voter(speeder.id, "again") is None  # once only

    assert not Vote.objects.filter(voter=speeder).exists()
    voided = VoidedVote.objects.filter(voter=speeder).values_list("comparison_id", flat=True)
    assert set(voided) == answered
    reopened = Comparison.objects.filter(id__in=answered)
    assert set(reopened.values_list("status", flat=True)) == {"open"}
    assert Comparison.objects.get(id=held.pair.id).leased_to_id is not None  # others untouched
    speeder.refresh_from_db()
    assert speeder.excluded_at is not None and speeder.excluded_reason == "speeder"

    # Others answer the returned comparisons; the ballot closes with M answers per item.
    store.vote_and_next(holder, held.pair.id, "left", hand_out=False)
    while Ballot.objects.get(id=ballot.id).status == "open":
        assert answer_all(Voter.objects.create(study=study)) > 0
    lifecycle.finish_close(ballot.id)  # the worker's job (a no-op if it ran already)
    scores = ItemScore.objects.filter(ballot=ballot)
    assert set(scores.values_list("appearances", flat=True)) <= {4, 5}  # M (footnote 6: M + 1)
    assert scores.aggregate(n=Sum("appearances"))["n"] == 2 * ballot.n_comparisons


def test_an_excluded_voters_votes_in_closed_ballots_stay_and_are_marked(make_study):
    study = make_study(n_items=8, m=2, cap=100, n_ballots=2)
    early = Voter.objects.create(study=study)
    answer_all(early)
    ballot = Ballot.objects.get(study=study, number=1)
    lifecycle.finish_close(ballot.id)
    assert Ballot.objects.get(id=ballot.id).status == "closed"
    kept = Vote.objects.filter(voter=early).count()
    assert store.exclude_voter(early.id, "low agreement") == 0  # no open ballot: nothing voided
    assert Vote.objects.filter(voter=early).count() == kept > 0
    votes = bulk_sql.study_votes(study.pk)
    assert votes.voter.size == kept  # still read; readers leave them out by excluded_at


def test_a_check_comes_at_the_set_rate_never_first_and_is_stored_apart(make_study):
    study = make_study(n_items=60, m=4, cap=40, n_ballots=2)
    add_checks(study, 2, every=5)
    voter = Voter.objects.create(study=study)
    shown: list[bool] = []  # True: a check
    a = store.next_assignment(voter)
    while a.pair is not None:
        shown.append(a.pair.left.item_index == -1)  # a check's pairs belong to no item
        _vote, created, a = store.vote_and_next(voter, a.pair.id, "left")
        assert created
    assert not shown[0]
    blocks = [shown[k : k + 5] for k in range(0, len(shown), 5)]
    assert all(sum(b) == 1 for b in blocks[:-1])  # one check in every block of five
    assert Vote.objects.filter(voter=voter).count() == 40  # the quota counts comparisons only
    # Ten blocks of five; the last may end at the quota before its check.
    assert CheckAnswer.objects.filter(voter=voter).count() == sum(shown) in (9, 10)
    assert not Vote.objects.filter(comparison_id__in=CheckAnswer.objects.values("id")).exists()


def test_a_check_looks_like_a_comparison_and_its_answer_is_kept_once(make_study):
    study = make_study(n_items=20, m=4, n_ballots=2)
    check = add_checks(study, 1, every=2)[0]
    voter = Voter.objects.create(study=study)
    first = store.next_assignment(voter)
    _v, _c, a = store.vote_and_next(voter, first.pair.id, "left")
    answer = CheckAnswer.objects.get(voter=voter)
    assert a.pair.id == answer.id and not Comparison.objects.filter(id=answer.id).exists()
    comparison = a.as_dict()["comparison"]
    shown = {comparison["left"]["token_a"], comparison["right"]["token_a"]}
    assert shown == {check.related_a, check.unrelated_a}
    related = "left" if answer.related_left else "right"
    wrong = "right" if related == "left" else "left"
    store.vote_and_next(voter, answer.id, related)
    _v, created, _a = store.vote_and_next(voter, answer.id, related)  # a resent answer
    assert not created
    with pytest.raises(store.VoteRejected) as err:
        store.vote_and_next(voter, answer.id, wrong)
    assert err.value.reason == "answered_differently"
    voter.refresh_from_db()
    assert (voter.checks_passed, voter.checks_failed) == (1, 0)
    assert CheckAnswer.objects.get(id=answer.id).passed is True


def test_failing_the_set_number_of_checks_excludes_at_once_when_asked(make_study):
    study = make_study(n_items=40, m=4, cap=30, n_ballots=2)
    add_checks(study, 2, every=2, fail_limit=2, exclude=True)
    voter = Voter.objects.create(study=study)

    def wrong(a: store.Assignment) -> str:
        answer = CheckAnswer.objects.filter(id=a.pair.id).first()
        if answer is None:
            return "left"
        return "right" if answer.related_left else "left"

    answer_all(voter, wrong)
    voter.refresh_from_db()
    assert voter.checks_failed == 2 and voter.excluded_at is not None
    assert "2 attention checks" in voter.excluded_reason
    assert not Vote.objects.filter(voter=voter).exists()  # the open ballot's votes voided
    assert VoidedVote.objects.filter(voter=voter).exists()
    a = store.next_assignment(voter)
    assert a.excluded and a.completion_code == study.excluded_code


def test_attention_checks_catch_a_careless_crowd_and_not_a_careful_one(make_study):
    """Checks once in four, a flag at 4 failures: with 14-15 checks each, a voter answering at
    random (epsilon 0.5) is caught with probability 0.98 and a careful one (the paper's epsilon
    in [0.005, 0.05]) with at most 0.006. Seeded: 12 of each."""
    study = make_study(n_items=600, m=4, cap=45, n_ballots=2)
    add_checks(study, 3, every=4, fail_limit=4)
    rng = np.random.default_rng(7)
    eps = {"careless": [0.5] * 12, "careful": list(rng.uniform(0.005, 0.05, 12))}
    flagged: Counter[str] = Counter()
    for kind, rates in eps.items():
        for k, e in enumerate(rates):
            voter = Voter.objects.create(study=study, participant=f"{kind}-{k}", source="simulated")

            def choose(a: store.Assignment, e: float = e) -> str:
                answer = CheckAnswer.objects.filter(id=a.pair.id).first()
                right = "left" if answer is None or answer.related_left else "right"
                wrong = "right" if right == "left" else "left"
                return wrong if rng.random() < e else right

            answer_all(voter, choose)
            voter.refresh_from_db()
            # The last block of four may end at the quota before its check.
            assert voter.checks_passed + voter.checks_failed in (14, 15)
            flagged[kind] += voter.checks_failed >= study.check_fail_limit
    assert flagged["careless"] >= 10 and flagged["careful"] == 0
    # Checks never reach a score or the votes the estimators read.
    votes = bulk_sql.study_votes(study.pk)
    assert votes.voter.size == Vote.objects.count() == 24 * 45
    checks_items = set(study.checks.values_list("related_item_id", flat=True))
    assert not checks_items & set(ItemScore.objects.values_list("item_id", flat=True))


def test_one_address_holds_at_most_half_a_ballot_and_others_still_get_work(make_study, settings):
    settings.VOTING_ADDRESS_LEASES, settings.VOTING_ADDRESS_SHARE = 50, 0.5
    study = make_study(n_items=14, m=4, n_ballots=2)
    size = Ballot.objects.get(study=study, number=1).n_comparisons
    hoarders = [
        Voter.objects.create(study=study, address=store.address_key("203.0.113.9"))
        for _ in range(size)
    ]
    held = [store.next_assignment(v) for v in hoarders]
    assert sum(a.pair is not None for a in held) == size // 2
    assert held[-1].pair is None and held[-1].completion_code is None  # waits, not done
    neighbour = Voter.objects.create(study=study, address=store.address_key("198.51.100.7"))
    assert store.next_assignment(neighbour).pair is not None
    settings.VOTING_ADDRESS_LEASES = 0  # no bound
    assert store.next_assignment(hoarders[-1]).pair is not None


def test_the_api_stores_a_keyed_hash_of_the_registering_address(client, make_study):
    study = make_study()
    resp = client.post(f"/api/v1/studies/{study.slug}/voters", {}, content_type="application/json")
    voter = Voter.objects.get(token=resp.json()["token"])
    assert voter.address == store.address_key("127.0.0.1") and "127.0.0.1" not in voter.address
    assert Study.objects.get(pk=study.pk).voters.count() == 1


def test_failing_checks_after_a_closed_ballot_marks_the_studys_figures_stale(make_study):
    study = make_study(n_items=40, m=4, cap=1000, n_ballots=2, auto_open=True)
    careless = Voter.objects.create(study=study)
    answer_all(careless)
    lifecycle.finish_close(Ballot.objects.get(study=study, number=1).id)
    assert Ballot.objects.get(study=study, number=2).status == "open"
    kept = Vote.objects.filter(voter=careless).count()
    assert kept > 0 and Study.objects.get(pk=study.pk).vote_set == 0
    add_checks(study, 2, every=2, fail_limit=2, exclude=True)

    def wrong(a: store.Assignment) -> str:
        answer = CheckAnswer.objects.filter(id=a.pair.id).first()
        return "left" if answer is None else ("right" if answer.related_left else "left")

    answer_all(careless, wrong)
    careless.refresh_from_db()
    assert careless.excluded_at is not None and "attention checks" in careless.excluded_reason
    assert Study.objects.get(pk=study.pk).vote_set == 1
    change = VoteSetChange.objects.get(study=study)
    assert (change.kind, change.votes, change.voters) == ("excluded", kept, 1)
