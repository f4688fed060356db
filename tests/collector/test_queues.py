"""Nothing waits forever in a queue: a worker started without ``-Q`` consumes both queues; beat's
sweep sends a lost evaluation, model comparison or reliability message again; a stuck evaluation
stops counting against ``EVALUATION_MAX_QUEUED``; ``/healthz?deep=1`` names a queue nobody
consumes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files import File
from django.utils import timezone

from collector import jobs, tasks
from collector.evaluation import paired, queueing, running, submitting
from collector.models import Ballot, Evaluation, Item, ModelComparison, Study, StudyReliability
from collector.studies import reliability
from tests.collector.helpers import wait_closed, wait_for
from tests.factories import finished_study, make_study, simulate


def _purge(queue: str) -> None:
    from config.celery import app

    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge(queue)


def _vectors(study: Study, path: Path) -> Path:
    """A GloVe file with a vector for every word of the study."""
    words = set()
    for a, b in Item.objects.filter(study=study).values_list("token_a__text", "token_b__text"):
        words.update((a + " " + b).split())
    with open(path, "w", encoding="utf-8") as out:
        for k, word in enumerate(sorted(words)):
            out.write(f"{word} {k + 1} 1 0.5\n")
    return path


def _submit(study: Study, name: str, path: Path, **options) -> Evaluation:
    with open(path, "rb") as handle:
        return submitting.submit(
            study, name, File(handle, name="v.txt"), "vectors", vectors_format="glove", **options
        )


@pytest.mark.django_db(transaction=True)
def test_a_plain_worker_consumes_both_queues_closes_ballots_and_runs_evaluations(
    plain_worker, monkeypatch, tmp_path, client
):
    assert client.get("/healthz?deep=1").status_code == 200  # both queues consumed
    study = make_study(seed=3)
    ballot = study.ballots.get(number=1)
    simulate(study)  # the last vote sends the close to the closes queue
    wait_closed(ballot, timeout=60)
    assert study.ballots.get(number=2).status == Ballot.Status.PENDING
    gold = finished_study(monkeypatch, slug="gold")
    evaluation = _submit(gold, "plain", _vectors(gold, tmp_path / "v.txt"))

    def ended() -> bool:
        evaluation.refresh_from_db()
        return evaluation.status not in submitting.PENDING

    wait_for(ended, 120, "the evaluation to end")
    assert evaluation.status == Evaluation.Status.DONE, evaluation.error


@pytest.mark.django_db
def test_a_lost_evaluation_message_is_sent_again_by_the_sweep(
    monkeypatch, tmp_path, django_capture_on_commit_callbacks
):
    queue = settings.CELERY_QUEUE_EVALUATIONS
    _purge(queue)  # no worker consumes the evaluations queue in this test
    gold = finished_study(monkeypatch, slug="gold")
    with django_capture_on_commit_callbacks(execute=True):
        evaluation = _submit(gold, "lost", _vectors(gold, tmp_path / "v.txt"))
    try:
        assert evaluation.pk in queueing.held_by_broker()
        sent = timezone.now() - queueing.GRACE - timedelta(seconds=1)
        Evaluation.objects.filter(pk=evaluation.pk).update(sent_at=sent)
        assert queueing.resend_lost() == {"evaluations_resent": 0}  # its message is waiting
        _purge(queue)  # the message is lost (Redis restarted without it)
        assert evaluation.pk not in queueing.held_by_broker()
        result = tasks.sweep_jobs()  # what beat runs every SWEEP_SECONDS
        assert result["evaluations_resent"] == 1
        assert evaluation.pk in queueing.held_by_broker()
        evaluation.refresh_from_db()
        assert evaluation.sent_at > sent and evaluation.status == Evaluation.Status.QUEUED
        assert queueing.resend_lost() == {"evaluations_resent": 0}  # sent just now
        # A running evaluation whose job died (no heartbeat for ALIVE_FOR) is sent again too.
        dead = timezone.now() - queueing.ALIVE_FOR - timedelta(seconds=1)
        Evaluation.objects.filter(pk=evaluation.pk).update(
            status=Evaluation.Status.RUNNING, heartbeat_at=dead, sent_at=dead
        )
        assert queueing.resend_lost() == {"evaluations_resent": 1}
    finally:
        _purge(queue)


@pytest.mark.django_db
def test_a_lost_comparison_message_is_sent_again_by_the_sweep_and_a_fresh_or_finished_one_is_not(
    settings, monkeypatch, tmp_path, django_capture_on_commit_callbacks
):
    settings.EVALUATION_RESAMPLES = 20
    queue = settings.CELERY_QUEUE_EVALUATIONS
    _purge(queue)  # no worker consumes the evaluations queue in this test
    gold = finished_study(monkeypatch, slug="gold")
    path = _vectors(gold, tmp_path / "v.txt")
    a, b = (_submit(gold, name, path, enqueue=False) for name in ("a", "b"))
    for evaluation in (a, b):
        running.run_evaluation(evaluation.pk)  # in this process
    with django_capture_on_commit_callbacks(execute=True):
        pair, sent = paired.request(gold, a.pk, b.pk)
    try:
        assert sent and pair.sent_at is not None
        assert pair.pk in queueing.held_by_broker(jobs.COMPARE_MODELS)
        old = timezone.now() - queueing.GRACE - timedelta(seconds=1)
        ModelComparison.objects.filter(pk=pair.pk).update(sent_at=old)
        assert paired.resend_lost() == {"comparisons_resent": 0}  # its message is waiting
        _purge(queue)  # the message is lost (Redis restarted without it)
        result = tasks.sweep_jobs()  # what beat runs every SWEEP_SECONDS
        assert result["comparisons_resent"] == 1 and result["evaluations_resent"] == 0
        assert pair.pk in queueing.held_by_broker(jobs.COMPARE_MODELS)
        pair.refresh_from_db()
        assert pair.sent_at > old and pair.status == ModelComparison.Status.QUEUED
        _purge(queue)
        assert paired.resend_lost() == {"comparisons_resent": 0}  # sent just now
        # A broker that cannot be read: sent again by age, after EVALUATION_RESEND_SECONDS.
        settings.CELERY_BROKER_URL = "amqp://unreadable"
        assert queueing.held_by_broker(jobs.COMPARE_MODELS) is None
        ModelComparison.objects.filter(pk=pair.pk).update(sent_at=old)
        assert paired.resend_lost() == {"comparisons_resent": 0}
        late = timezone.now() - timedelta(seconds=settings.EVALUATION_RESEND_SECONDS + 1)
        ModelComparison.objects.filter(pk=pair.pk).update(sent_at=late)
        assert paired.resend_lost() == {"comparisons_resent": 1}
        # A finished comparison is never sent again.
        ModelComparison.objects.filter(pk=pair.pk).update(
            status=ModelComparison.Status.DONE, sent_at=late
        )
        assert paired.resend_lost() == {"comparisons_resent": 0}
    finally:
        _purge(queue)


@pytest.mark.django_db
def test_a_lost_reliability_job_is_sent_again_by_the_sweep_once_per_timeout_and_not_while_fresh(
    settings, django_capture_on_commit_callbacks
):
    settings.RELIABILITY_STUCK_SECONDS = 600
    queue = settings.CELERY_QUEUE_EVALUATIONS
    _purge(queue)  # no worker consumes the evaluations queue in this test
    study = make_study(seed=4)
    with django_capture_on_commit_callbacks(execute=True):
        reliability.request(study.pk, 1)  # as a ballot's close asks for it
    try:
        assert study.pk in queueing.held_by_broker(jobs.STUDY_RELIABILITY)
        _purge(queue)  # the message is lost (Redis restarted without it)
        assert tasks.sweep_jobs()["reliability_resent"] == 0  # asked for just now
        old = timezone.now() - timedelta(seconds=settings.RELIABILITY_STUCK_SECONDS + 1)
        StudyReliability.objects.filter(study=study).update(sent_at=old)
        result = tasks.sweep_jobs()  # what beat runs every SWEEP_SECONDS
        assert result["reliability_resent"] == 1 and result["evaluations_resent"] == 0
        assert study.pk in queueing.held_by_broker(jobs.STUDY_RELIABILITY)
        assert StudyReliability.objects.get(study=study).sent_at > old
        _purge(queue)  # lost again
        assert reliability.resend_stuck() == {"reliability_resent": 0}  # sent again just now
        # A report whose computation failed keeps its error and is never sent again.
        StudyReliability.objects.filter(study=study).update(sent_at=old, error="no votes")
        assert reliability.resend_stuck() == {"reliability_resent": 0}
    finally:
        _purge(queue)


@pytest.mark.django_db
def test_a_stuck_evaluation_stops_counting_against_the_bound(settings, monkeypatch, tmp_path):
    settings.EVALUATION_MAX_QUEUED = 1
    gold = finished_study(monkeypatch, slug="gold")
    path = _vectors(gold, tmp_path / "v.txt")
    first = _submit(gold, "first", path, enqueue=False)
    with pytest.raises(submitting.TooManyEvaluations):
        _submit(gold, "second", path, enqueue=False)
    # Queued for EVALUATION_STUCK_SECONDS with nobody taking it: it no longer holds the place.
    old = timezone.now() - timedelta(seconds=settings.EVALUATION_STUCK_SECONDS + 1)
    Evaluation.objects.filter(pk=first.pk).update(created_at=old)
    second = _submit(gold, "second", path, enqueue=False)
    assert second.status == Evaluation.Status.QUEUED
    # A running one whose job died stops counting too.
    dead = timezone.now() - queueing.ALIVE_FOR - timedelta(seconds=1)
    Evaluation.objects.filter(pk=second.pk).update(status="running", heartbeat_at=dead)
    assert _submit(gold, "third", path, enqueue=False).status == Evaluation.Status.QUEUED


@pytest.mark.django_db(transaction=True)
def test_the_deep_health_check_names_a_queue_nobody_consumes(celery_worker, client):
    r = client.get("/healthz?deep=1")  # the session's worker consumes the closes queue only
    assert r.status_code == 503
    assert (
        r.content.decode() == f"queue {settings.CELERY_QUEUE_EVALUATIONS}: no worker consumes it\n"
    )
    assert client.get("/healthz").content == b"ok\n"  # the load balancer's check is unchanged


def test_a_run_starts_with_its_own_queues_empty_whatever_an_earlier_run_left_in_them():
    from config.celery import app
    from tests import conftest

    # A queue of this run's that no worker of this session consumes stands in for the workers'
    # queues (a worker started by an earlier test would take the message before the purge).
    queues = (f"{conftest.QUEUE_PREFIX}left-behind",)
    with app.connection_for_write() as connection:
        redis = connection.default_channel.client
        redis.lpush(queues[0], b'{"left": "behind"}')
        assert redis.llen(queues[0]) == 1
        conftest._purge_own_queues(queues)  # what every run does as it starts, to its queues
        assert redis.llen(queues[0]) == 0
    assert all(q.startswith(conftest.QUEUE_PREFIX) for q in conftest.WORKER_QUEUES)
    assert list(conftest.WORKER_QUEUES) == conftest.PURGED_AT_START  # done as this run started


@pytest.mark.django_db
def test_an_evaluation_whose_message_was_never_sent_is_sent_by_the_sweep(
    monkeypatch, tmp_path, django_capture_on_commit_callbacks
):
    queue = settings.CELERY_QUEUE_EVALUATIONS
    _purge(queue)
    gold = finished_study(monkeypatch, slug="gold")
    with django_capture_on_commit_callbacks(execute=True):
        evaluation = _submit(gold, "unsent", _vectors(gold, tmp_path / "v.txt"))
    try:
        _purge(queue)  # the process died between its commit and its send
        created = timezone.now() - queueing.GRACE - timedelta(seconds=1)
        Evaluation.objects.filter(pk=evaluation.pk).update(sent_at=None, created_at=created)
        assert tasks.sweep_jobs()["evaluations_resent"] == 1
        assert evaluation.pk in queueing.held_by_broker()
        evaluation.refresh_from_db()
        assert evaluation.sent_at is not None
    finally:
        _purge(queue)


@pytest.mark.django_db
def test_the_sweep_runs_every_kind_of_job_of_its_table_and_its_former_name_is_the_same_task():
    kinds = [kind for kind, _resend in tasks.SWEEPS]
    assert len(kinds) == len(set(kinds)) == 7
    found = tasks.sweep_jobs()
    assert {"closed", "evaluations_resent", "prolific_resent"} <= set(found)
    assert tasks.sweep_ballots() == found  # nothing was lost in between: the same counts
