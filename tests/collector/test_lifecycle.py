"""Ballot transitions called directly (no worker): guards, idempotence, crash safety."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from django.db import connection

from collector import jobs
from collector.models import Ballot, Comparison, Item, ItemScore, Study, Vote, Voter
from collector.studies import lifecycle
from collector.voting import store
from tests.factories import finish_in_process, make_study, simulate
from tests.job_routes import on_send


def _answer_all(study: Study, monkeypatch) -> Ballot:
    """Answer ballot 1 fully without enqueueing the close; leaves it ``closing``."""
    on_send(monkeypatch, jobs.FINISH_CLOSE_JOB, lambda ballot_id: None)
    simulate(study)
    monkeypatch.undo()
    ballot = study.ballots.get(number=1)
    assert ballot.status == Ballot.Status.CLOSING
    return ballot


@pytest.mark.django_db
def test_it_creates_ballot_one_with_each_item_m_times():
    study = make_study(open_first=False)
    assert study.items.count() == 28
    assert list(study.items.order_by("index").values_list("index", flat=True)) == list(range(28))
    ballot = study.ballots.get()
    assert (ballot.number, ballot.status, ballot.n_items, ballot.m) == (1, "pending", 28, 4)
    assert ballot.comparisons.count() == 56
    assert ItemScore.objects.filter(ballot=ballot, x__isnull=True).count() == 28
    assert study.status == Study.Status.SETUP


@pytest.mark.django_db
def test_it_stores_the_comparisons_in_slot_order_and_refreshes_the_planners_statistics(
    django_capture_on_commit_callbacks,
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        study = make_study(open_first=False)
    assert callbacks  # the ANALYZE, run once the ballot is committed
    ballot = study.ballots.get()
    slots = list(ballot.comparisons.order_by("id").values_list("slot", flat=True))
    assert slots == list(range(56))
    with connection.cursor() as cur:
        cur.execute("SELECT reltuples FROM pg_class WHERE relname = 'collector_comparison'")
        (estimated,) = cur.fetchone()
    assert estimated == 56  # a small table is read whole: the count is exact


@pytest.mark.django_db
def test_it_opens_only_a_pending_ballot():
    study = make_study()
    ballot = study.ballots.get()
    study.refresh_from_db()
    assert ballot.status == Ballot.Status.OPEN and study.status == Study.Status.RUNNING
    with pytest.raises(lifecycle.LifecycleError, match="only a pending ballot"):
        lifecycle.open_ballot(ballot.pk)


@pytest.mark.django_db
def test_it_refuses_to_close_early_a_ballot_that_is_not_open():
    study = make_study(open_first=False)
    with pytest.raises(lifecycle.LifecycleError, match="only an open ballot"):
        lifecycle.close_early(study.ballots.get().pk)
    assert study.ballots.get().status == Ballot.Status.PENDING


@pytest.mark.django_db
def test_the_last_vote_moves_the_ballot_to_closing_and_enqueues_the_close(
    closes_held, monkeypatch, django_capture_on_commit_callbacks
):
    study = make_study()
    enqueued = closes_held
    ballot = study.ballots.get()
    with django_capture_on_commit_callbacks(execute=True):
        simulate(study, limit=55)
    assert enqueued == [] and Ballot.objects.get(id=ballot.pk).status == Ballot.Status.OPEN
    with django_capture_on_commit_callbacks(execute=True):
        simulate(study)
    assert enqueued == [ballot.pk]
    assert Ballot.objects.get(id=ballot.pk).status == Ballot.Status.CLOSING


@pytest.mark.django_db(transaction=True)
def test_finishing_a_close_twice_stores_one_set_of_scores_and_one_next_ballot(monkeypatch):
    study = make_study()
    ballot = _answer_all(study, monkeypatch)
    first = lifecycle.finish_close(ballot.pk)
    second = lifecycle.finish_close(ballot.pk)
    assert "ballot 2 is pending" in first
    assert "nothing to do" in second
    assert study.ballots.filter(number=2).count() == 1
    assert ItemScore.objects.filter(ballot=ballot, x__isnull=False).count() == 28
    assert ItemScore.objects.filter(ballot__number=2, ballot__study=study).count() == 14
    assert Comparison.objects.filter(ballot__number=2, ballot__study=study).count() == 28


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_closes_leave_exactly_one_next_ballot(monkeypatch):
    study = make_study()
    ballot = _answer_all(study, monkeypatch)
    results: list[str] = []
    errors: list[BaseException] = []

    def close():
        try:
            results.append(lifecycle.finish_close(ballot.pk))
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=close) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted("nothing to do" in r for r in results) == [False, True]
    assert study.ballots.filter(number=2).count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_close_that_crashes_mid_way_leaves_nothing_and_a_retry_completes(monkeypatch):
    study = make_study()
    ballot = _answer_all(study, monkeypatch)
    # Crash after the scores are written, while the next ballot is being stored.
    real_store = lifecycle.store_ballot

    def crash(*args, **kwargs):
        raise RuntimeError("worker killed")

    monkeypatch.setattr(lifecycle, "store_ballot", crash)
    with pytest.raises(RuntimeError, match="worker killed"):
        lifecycle.finish_close(ballot.pk)
    ballot.refresh_from_db()
    assert ballot.status == Ballot.Status.CLOSING
    assert not ItemScore.objects.filter(ballot=ballot, x__isnull=False).exists()
    assert not study.ballots.filter(number=2).exists()

    monkeypatch.setattr(lifecycle, "store_ballot", real_store)
    assert "ballot 2 is pending" in lifecycle.finish_close(ballot.pk)
    assert "nothing to do" in lifecycle.finish_close(ballot.pk)
    assert study.ballots.filter(number=2).count() == 1
    assert ItemScore.objects.filter(ballot=ballot, x__isnull=False).count() == 28


@pytest.mark.django_db(transaction=True)
def test_the_next_ballot_opens_at_once_when_the_study_says_so(monkeypatch):
    study = make_study(auto_open=True)
    ballot = _answer_all(study, monkeypatch)
    lifecycle.finish_close(ballot.pk)
    assert study.ballots.get(number=2).status == Ballot.Status.OPEN


@pytest.mark.django_db(transaction=True)
def test_the_last_close_finishes_the_study_with_final_ranks(monkeypatch):
    study = make_study(n_ballots=2, alpha=0.5, m=4, auto_open=True)
    finish_in_process(study, monkeypatch)
    assert study.status == Study.Status.FINISHED and study.finished_at is not None
    ranks = sorted(Item.objects.filter(study=study).values_list("final_rank", flat=True))
    assert ranks == list(range(1, 29))
    top = Item.objects.get(study=study, final_rank=1)
    assert top.final_score == max(
        Item.objects.filter(study=study).values_list("final_score", flat=True)
    )


@pytest.mark.django_db(transaction=True)
def test_bradley_terry_studies_score_with_the_pooled_strength(monkeypatch):
    study = make_study(n_ballots=2, estimator=Study.Estimator.BRADLEY_TERRY, auto_open=True)
    for number in (1, 2):
        on_send(monkeypatch, jobs.FINISH_CLOSE_JOB, lambda ballot_id: None)
        simulate(study)
        monkeypatch.undo()
        lifecycle.finish_close(study.ballots.get(number=number).pk)
    scores = ItemScore.objects.filter(ballot__study=study, ballot__number=2)
    assert all(s.strength is not None for s in scores)
    top = Item.objects.get(study=study, final_rank=1)
    assert top.final_score == pytest.approx(scores.get(item=top).strength)


@pytest.mark.django_db
def test_an_early_close_voids_comparisons_so_votes_on_them_are_refused():
    study = make_study()
    voter = Voter.objects.create(study=study, source=Voter.Source.SIMULATED, participant="x")
    comparison = store.next_comparison(voter)
    assert comparison is not None
    voided = lifecycle.close_early(study.ballots.get().pk)
    assert voided == 56
    with pytest.raises(store.VoteRejected):
        store.record_vote(voter, comparison.pk, "left")
    assert not Vote.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_last_votes_move_the_ballot_to_closing_exactly_once(closes_held, monkeypatch):
    study = make_study(per_voter_cap=100)
    ballot = study.ballots.get()
    enqueued = closes_held
    voters = [
        Voter.objects.create(study=study, source=Voter.Source.SIMULATED, participant=f"t{i}")
        for i in range(8)
    ]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(voters))

    def vote_until_done(voter: Voter) -> None:
        try:
            barrier.wait()
            while (comparison := store.next_comparison(voter)) is not None:
                store.record_vote(voter, comparison.pk, "left")
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=vote_until_done, args=(v,)) for v in voters]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert Vote.objects.filter(ballot=ballot).count() == 56
    assert Ballot.objects.get(id=ballot.pk).status == Ballot.Status.CLOSING
    assert enqueued == [ballot.pk]


@pytest.mark.django_db(transaction=True)
def test_an_early_close_between_a_votes_commit_and_its_last_vote_check_closes_once(
    closes_held, monkeypatch
):
    """The vote commits with the voting function; its last-vote check runs after, in its own
    transaction. An early close in between keeps the vote, voids the rest and sends one close."""
    study = make_study()
    ballot = study.ballots.get()
    enqueued = closes_held
    voter = Voter.objects.create(study=study, source=Voter.Source.SIMULATED, participant="v")
    comparison = store.next_comparison(voter)
    assert comparison is not None
    real_note = lifecycle.note_vote_recorded
    paused, resume = threading.Event(), threading.Event()

    def slow_note(ballot_id: int, open_left: int) -> None:
        paused.set()
        resume.wait(10)
        real_note(ballot_id, open_left=0)  # as if this vote had been the last one

    monkeypatch.setattr(lifecycle, "note_vote_recorded", slow_note)
    outcome: dict[str, object] = {}

    def vote() -> None:
        try:
            outcome["vote"] = store.vote_and_next(voter, comparison.pk, "left")[0]
        finally:
            connection.close()

    thread = threading.Thread(target=vote)
    thread.start()
    assert paused.wait(10)
    assert Vote.objects.filter(comparison_id=comparison.pk).exists()  # committed already
    assert lifecycle.close_early(ballot.pk) == 55
    resume.set()
    thread.join(15)
    assert outcome["vote"].comparison_id == comparison.pk
    assert enqueued == [ballot.pk]
    ballot.refresh_from_db()
    assert ballot.status == Ballot.Status.CLOSING
    assert ballot.comparisons.filter(status=Comparison.Status.ANSWERED).count() == 1
    assert ballot.comparisons.filter(status=Comparison.Status.VOID).count() == 55


def test_a_fresh_django_process_knows_every_background_task_by_name():
    # Without a broker (the demo, a management command) collector.jobs runs a task in-process,
    # looking it up by name: a process that never imported collector.tasks must know them too.
    code = (
        "import django; django.setup(); from celery import current_app; "
        "print(' '.join(sorted(t for t in current_app.tasks if t.startswith('collector.'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"},
    ).stdout.split()  # fmt: skip
    registered = {jobs.FINISH_CLOSE_JOB, jobs.EVALUATE_MODEL, "collector.tasks.sweep_jobs"}
    assert registered | {"collector.tasks.sweep_ballots"} <= set(out)
