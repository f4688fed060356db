"""manage.py simulate_votes says why comparisons are left: leased to other voters (wait), or
beyond its voters (more --voters), or a paused study (resume it)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError

from collector.models import CheckAnswer, Comparison, Voter
from collector.voting import store
from tests.factories import add_checks, make_study, simulate

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_close_job(closes_held):
    """No close is sent: a ballot answered to its end stays closing."""


def test_comparisons_leased_to_others_are_reported_as_a_wait_not_a_need_for_voters():
    study = make_study(n_tokens=5, lease_seconds=600)  # 10 items, 20 comparisons
    outsiders = [Voter.objects.create(study=study) for _ in range(2)]
    for voter in outsiders:
        assert store.next_comparison(voter) is not None
    with pytest.raises(CommandError) as refused:
        simulate(study)
    message = str(refused.value)
    assert "2 comparisons of ballot 1 are left unanswered: 2 are leased to other voters" in message
    assert "(600 s) expire: wait for them and run again, more --voters would not help" in message
    assert "use more --voters" not in message
    assert Comparison.objects.filter(ballot__study=study, status="open").count() == 2


def test_one_comparison_left_is_worded_in_the_singular():
    study = make_study(n_tokens=5, lease_seconds=600)  # 10 items, 20 comparisons
    assert store.next_comparison(Voter.objects.create(study=study)) is not None
    with pytest.raises(CommandError) as refused:
        simulate(study)
    message = str(refused.value)
    assert "1 comparison of ballot 1 is left unanswered: 1 is leased to another voter" in message
    assert "comes back to the pool as its lease (600 s) expires: wait for it" in message


def test_comparisons_beyond_the_voters_ask_for_more_voters_besides_the_leased_ones():
    # 56 comparisons, 8 voters answer 24 at most
    study = make_study(n_tokens=8, cap=3, lease_seconds=600)
    assert store.next_comparison(Voter.objects.create(study=study)) is not None
    with pytest.raises(CommandError) as refused:
        simulate(study)
    message = str(refused.value)
    assert "1 is leased to another voter until" in message and "would not help" not in message
    assert "as its lease (600 s) expires: wait for it and run again" in message
    assert "beyond the 8 simulated voters (per-voter cap 3" in message
    assert "use more --voters" in message


def test_a_paused_study_is_refused_before_any_vote():
    study = make_study(paused=True)
    with pytest.raises(CommandError, match="is paused"):
        simulate(study)
    assert not Voter.objects.filter(study=study).exists()


def test_a_study_with_attention_checks_is_answered_and_its_checks_passed():
    study = make_study(n_tokens=8, n_ballots=2, m=4)
    add_checks(study, 2, every=4)
    simulate(study, voters=8)
    answers = CheckAnswer.objects.filter(voter__study=study)
    assert answers.exists() and not answers.filter(choice="").exists()
    assert set(answers.values_list("passed", flat=True)) == {True}  # simulated voters are careful
    assert study.ballots.get(number=1).status != "open"
