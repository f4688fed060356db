"""A seeded simulated study gets the same votes whatever ran before it: which comparison a voter
claims next, where their attention checks fall and which side holds a check's related pair come
from the voter's hashed participant id (or pseudonym), never from their database id, which
depends on every row created before (sequences are not reset between tests)."""

from __future__ import annotations

import pytest

from collector.models import AttentionCheck, Ballot, CheckAnswer, Study, Vote, Voter
from tests.factories import add_checks, finish_in_process, make_study

pytestmark = pytest.mark.django_db


def move_the_voter_ids(n: int) -> None:
    """Create and delete ``n`` throwaway voters (in a throwaway study): the next voter's id moves
    by ``n``."""
    throwaway = make_study(n_tokens=3, n_ballots=1, open_first=False)
    Voter.objects.bulk_create(Voter(study=throwaway) for _ in range(n))
    throwaway.delete()


def history(study: Study) -> list[tuple]:
    """Each simulated voter's votes and attention checks, in the order they were shown:
    (participant, "vote", ballot number, left item's index, right item's index, choice) or
    (participant, "check", ballot number, the check's rank in the study, related pair on the
    left, choice)."""
    number = dict(Ballot.objects.filter(study=study).values_list("id", "number"))
    rank = {
        pk: i
        for i, pk in enumerate(
            AttentionCheck.objects.filter(study=study).order_by("id").values_list("id", flat=True)
        )
    }
    events = [
        (v.voter.participant, v.created_at, "vote", number[v.ballot_id],
         v.comparison.item_left.index, v.comparison.item_right.index, v.choice)
        for v in Vote.objects.filter(ballot__study=study).select_related(
            "voter", "comparison__item_left", "comparison__item_right"
        )
    ]  # fmt: skip
    events += [
        (k.voter.participant, k.shown_at, "check", number[k.ballot_id],
         rank[k.attention_check_id], k.related_left, k.choice)
        for k in CheckAnswer.objects.filter(voter__study=study).select_related("voter")
    ]  # fmt: skip
    events.sort(key=lambda e: (e[0], e[1]))
    return [(who, *rest) for who, _, *rest in events]


def simulated_study(monkeypatch, slug: str, checks: bool) -> tuple[Study, list[tuple]]:
    study = make_study(slug=slug, n_tokens=10, n_ballots=2, auto_open=True, seed=3)
    if checks:
        add_checks(study, 2, every=4)
    finish_in_process(study, monkeypatch, fit=False)
    assert study.status == Study.Status.FINISHED
    return study, history(study)


def voter_ids(study: Study) -> list[int]:
    return list(study.voters.order_by("participant").values_list("id", flat=True))


@pytest.mark.parametrize("checks", [False, True], ids=["votes", "votes_and_checks"])
def test_the_same_seeded_simulation_gets_the_same_votes_with_other_voter_ids(monkeypatch, checks):
    first, first_history = simulated_study(monkeypatch, "first", checks)
    move_the_voter_ids(13)  # odd: every voter id's parity changes too
    second, second_history = simulated_study(monkeypatch, "second", checks)
    pairs = list(zip(voter_ids(first), voter_ids(second), strict=True))
    assert all((b - a) % 2 == 1 for a, b in pairs), pairs  # other ids, of the other parity
    assert first_history and second_history == first_history
    kinds = {event[1] for event in first_history}
    assert kinds == ({"vote", "check"} if checks else {"vote"})
