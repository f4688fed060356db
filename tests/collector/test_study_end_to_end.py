"""Whole studies through the real Celery worker: votes in, closes in the worker, exports out."""

from __future__ import annotations

import io
from collections import Counter

import numpy as np
import pytest

import ranking
from collector.models import Ballot, Comparison, ItemScore, Study
from collector.studies import lifecycle
from ranking.protocol import select_top
from tests.collector.helpers import export, read_csv, wait_closed
from tests.factories import make_study, simulate

pytestmark = pytest.mark.django_db(transaction=True)

CHOICE_SCORE = {"left": 1.0, "right": 0.0, "tie": 0.5}


def _members(ballot: Ballot) -> list[int]:
    return sorted(ItemScore.objects.filter(ballot=ballot).values_list("item__index", flat=True))


def _appearances(ballot: Ballot) -> Counter:
    counts: Counter = Counter()
    for left, right in Comparison.objects.filter(ballot=ballot).values_list(
        "item_left__index", "item_right__index"
    ):
        counts[left] += 1
        counts[right] += 1
    return counts


def _check_ballot_design(ballot: Ballot, n_items: int, m: int) -> None:
    members = _members(ballot)
    assert len(members) == n_items == ballot.n_items
    counts = _appearances(ballot)
    assert set(counts) == set(members)
    # Each item M times; footnote 6: one item M+1 times when M*N is odd.
    extra = sorted(c - m for c in counts.values())
    assert extra == [0] * (n_items - (n_items * m) % 2) + [1] * ((n_items * m) % 2)


def test_it_runs_an_adaptive_study_of_three_ballots_end_to_end(celery_worker, tmp_path):
    study = make_study(n_ballots=3, alpha=0.5, m=4, seed=11)
    sizes = ranking.ballot_sizes(28, 0.5, 3)
    assert sizes == [28, 14, 7]
    for k, size in enumerate(sizes, start=1):
        ballot = study.ballots.get(number=k)
        _check_ballot_design(ballot, size, 4)
        if k > 1:
            lifecycle.open_ballot(ballot.pk)
        simulate(study)
        wait_closed(ballot)  # closed by the worker, enqueued on the last vote's commit
        assert not ballot.comparisons.filter(status=Comparison.Status.OPEN).exists()
    study.refresh_from_db()
    assert study.status == Study.Status.FINISHED
    assert study.ballots.count() == 3
    # Each next ballot holds the previous ballot's best items by ybar.
    for k in (1, 2):
        prev = study.ballots.get(number=k)
        scores = dict(ItemScore.objects.filter(ballot=prev).values_list("item__index", "ybar"))
        kept = _members(study.ballots.get(number=k + 1))
        worst_kept = min(scores[i] for i in kept)
        assert all(scores[i] <= worst_kept for i in scores if i not in kept)

    header, votes = read_csv(export("export_votes", study, tmp_path))
    assert header == [
        "ballot", "comparison_id", "item_left", "item_right", "choice", "voter", "created_at",
        "response_ms", "left_token_a", "left_token_b", "right_token_a", "right_token_b",
        "voter_excluded",
    ]  # fmt: skip
    assert len(votes) == 56 + 28 + 14
    header, rows = read_csv(export("export_ranking", study, tmp_path))
    assert header[:10] == [
        "rank", "item_id", "area", "token_a", "token_b", "score", "last_ballot", "appearances",
        "wins", "ties",
    ]  # fmt: skip
    assert header[10:] == ["x_1", "x_2", "x_3"]
    assert [int(r["rank"]) for r in rows] == list(range(1, 29))

    # Recompute x, ybar and the ranks from the exported votes with ranking's own functions.
    by_item = {int(r["item_id"]): r for r in rows}
    state = ranking.StudyState.new(28)
    for k, size in enumerate(sizes, start=1):
        mine = [v for v in votes if int(v["ballot"]) == k]
        pairs = np.array([[int(v["item_left"]), int(v["item_right"])] for v in mine])
        first = np.array([CHOICE_SCORE[v["choice"]] for v in mine])
        items = np.array(sorted(i for i, r in by_item.items() if r[f"x_{k}"] != ""))
        assert items.size == size
        n_next = sizes[k] if k < len(sizes) else 0
        state, out = ranking.score_ballot(state, items, pairs, first)
        for i in items:
            assert float(by_item[i][f"x_{k}"]) == pytest.approx(out.x[i], abs=1e-12)
        if n_next:
            chosen = select_top(items, out.score, [n_next], np.random.default_rng([11, k, 3]))
            assert sorted(chosen.tolist()) == _members(study.ballots.get(number=k + 1))
    for i, r in by_item.items():
        assert float(r["score"]) == pytest.approx(state.ybar[i], abs=1e-12)
        assert int(r["appearances"]) == sum(
            1 for v in votes if int(v["item_left"]) == i or int(v["item_right"]) == i
        )
    expected = ranking.protocol.ranks_from_scores(state.ybar, np.random.default_rng([11, 4, 4]))
    assert [int(by_item[i]["rank"]) for i in range(28)] == expected.tolist()
    assert all(float(a["score"]) >= float(b["score"]) for a, b in zip(rows, rows[1:], strict=False))


def test_it_runs_a_uniform_study_with_the_same_budget(celery_worker, tmp_path):
    study = make_study(design="uniform", n_ballots=3, alpha=0.5, m=4, seed=2)
    plan = ranking.plan_study(28, 3, 0.5, 4)
    ballot = study.ballots.get(number=1)
    assert ballot.m == plan.uniform_m == 7
    _check_ballot_design(ballot, 28, 7)
    simulate(study)
    wait_closed(ballot)
    study.refresh_from_db()
    assert study.status == Study.Status.FINISHED
    assert study.ballots.count() == 1
    header, rows = read_csv(export("export_ranking", study, tmp_path))
    assert header[-1] == "x_1" and "x_2" not in header
    assert len(rows) == 28 and all(r["x_1"] for r in rows)


def test_it_closes_early_voiding_unanswered_comparisons(celery_worker, tmp_path):
    study = make_study(seed=3)
    ballot = study.ballots.get(number=1)
    simulate(study, limit=20)
    from django.core.management import call_command

    without = lifecycle.items_without_answer(ballot.pk)
    err = io.StringIO()
    call_command("close_ballot", study.slug, "--timeout", "60", stderr=err)
    assert (
        f"warning: {without} of ballot 1's 28 items have no answered comparison" in err.getvalue()
    )
    ballot.refresh_from_db()
    assert ballot.status == Ballot.Status.CLOSED
    assert ballot.comparisons.filter(status=Comparison.Status.ANSWERED).count() == 20
    assert ballot.comparisons.filter(status=Comparison.Status.VOID).count() == 56 - 20
    assert ballot.votes.count() == 20
    assert study.ballots.filter(number=2, status=Ballot.Status.PENDING).count() == 1
    unanswered = ItemScore.objects.filter(ballot=ballot, appearances=0)
    assert all(s.x is None for s in unanswered) and unanswered.count() == without > 0
    _, votes = read_csv(export("export_votes", study, tmp_path))
    assert len(votes) == 20


def test_a_close_enqueued_twice_leaves_one_next_ballot(celery_worker):
    from collector import tasks

    study = make_study(seed=4)
    ballot = study.ballots.get(number=1)
    simulate(study, limit=10)
    Ballot.objects.filter(id=ballot.pk).update(status=Ballot.Status.CLOSING)
    tasks.finish_close_job.delay(ballot.pk)
    tasks.finish_close_job.delay(ballot.pk)
    wait_closed(ballot)
    tasks.finish_close_job.delay(ballot.pk).get(timeout=30)  # a late duplicate, after the close
    assert study.ballots.filter(number=2).count() == 1
    assert ItemScore.objects.filter(ballot__study=study, ballot__number=2).count() == 14


def test_the_sweep_closes_a_ballot_whose_close_was_missed(celery_worker, monkeypatch):
    study = make_study(seed=6)
    ballot = study.ballots.get(number=1)
    monkeypatch.setattr(lifecycle, "note_vote_recorded", lambda ballot_id, open_left: None)
    simulate(study, limit=56)
    ballot.refresh_from_db()
    assert ballot.status == Ballot.Status.OPEN  # the broker was "down" for the last vote
    monkeypatch.undo()
    assert lifecycle.sweep_ballots() == {"closed": 1, "requeued": 0, "fits_resent": 0}
    wait_closed(ballot)
    assert study.ballots.filter(number=2).count() == 1


def test_the_sweep_requeues_a_ballot_stuck_in_closing(celery_worker):
    from datetime import timedelta

    from django.utils import timezone

    study = make_study(seed=8)
    ballot = study.ballots.get(number=1)
    simulate(study, limit=5)
    long_ago = timezone.now() - timedelta(hours=1)
    Ballot.objects.filter(id=ballot.pk).update(status=Ballot.Status.CLOSING, closing_at=long_ago)
    assert lifecycle.sweep_ballots() == {"closed": 0, "requeued": 1, "fits_resent": 0}
    wait_closed(ballot)
    assert study.ballots.filter(number=2).count() == 1
