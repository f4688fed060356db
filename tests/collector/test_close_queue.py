"""A ballot close never waits behind a model evaluation: closes and evaluations have their own
queues, each with its own worker (tests/conftest.py starts them as docker-compose.yml does)."""

from __future__ import annotations

from pathlib import Path

import psycopg2
import pytest
from django.conf import settings
from django.core.files import File
from django.db import connection

from collector import jobs
from collector.evaluation import submitting
from collector.models import Ballot, Evaluation, Item
from tests.collector.helpers import wait_closed, wait_for
from tests.factories import finished_study, make_study, simulate

pytestmark = pytest.mark.django_db(transaction=True)


def test_each_task_goes_to_its_own_queue() -> None:
    from config.celery import app

    router = app.amqp.router
    closes = {jobs.FINISH_CLOSE_JOB, jobs.STORE_POOLED_FIT, "collector.tasks.sweep_jobs"}
    closes.add("collector.tasks.sweep_ballots")  # sweep_jobs' former name
    for task in closes | {jobs.EVALUATE_MODEL, jobs.REFIT_POOLED}:
        queue = router.route({}, task)["queue"].name
        expected = (
            settings.CELERY_QUEUE_CLOSES if task in closes else settings.CELERY_QUEUE_EVALUATIONS
        )
        assert queue == expected, task
    # This run's own queues, named after its test database: another run on the same broker
    # database (another TEST_DATABASE_NAME) never takes these tasks.
    run = settings.DATABASES["default"]["TEST"]["NAME"]
    assert f"{run}.closes" == settings.CELERY_QUEUE_CLOSES
    assert f"{run}.evaluations" == settings.CELERY_QUEUE_EVALUATIONS


def vectors_file(path: Path, study_words: set[str]) -> Path:
    """A GloVe file with a vector for every word of the study."""
    with open(path, "w", encoding="utf-8") as out:
        for k, word in enumerate(sorted(study_words)):
            out.write(f"{word} {k + 1} 1 0.5\n")
    return path


def blocked_by(held, timeout: float) -> None:
    """Wait until another session waits for a lock ``held`` (a psycopg2 connection) holds."""
    pid = held.get_backend_pid()

    def waiting() -> bool:
        with held.cursor() as cursor:
            # pg_stat_activity is read once per transaction (``held`` stays in one): read anew.
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
                [pid],
            )
            return cursor.fetchone()[0] > 0

    wait_for(waiting, timeout, "the evaluation job to wait for its row")


def test_a_ballot_closes_while_the_evaluation_worker_is_busy(
    evaluations_worker, monkeypatch, tmp_path
):
    gold = finished_study(monkeypatch, slug="gold")
    words = set()
    for a, b in Item.objects.filter(study=gold).values_list("token_a__text", "token_b__text"):
        words.update((a + " " + b).split())
    path = vectors_file(tmp_path / "vectors.txt", words)
    with open(path, "rb") as handle:
        evaluation = submitting.submit(
            gold, "held", File(handle, name="vectors.txt"), "vectors", vectors_format="glove",
            enqueue=False,
        )  # fmt: skip
    # Another session holds the evaluation's row: the job, once the evaluations worker has
    # taken it, waits inside it for as long as this test wants (no race with the file's size).
    held = psycopg2.connect(**connection.get_connection_params())
    try:
        with held.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM collector_evaluation WHERE id = %s FOR UPDATE", [evaluation.pk]
            )
        jobs.send_after_commit(
            jobs.EVALUATE_MODEL, evaluation.pk
        )  # sent at once: no transaction is open
        blocked_by(held, timeout=60)

        study = make_study(seed=3)
        ballot = study.ballots.get(number=1)
        simulate(study)  # the last vote enqueues the close
        wait_closed(ballot, timeout=60)  # by its own worker, the evaluations worker being busy
        assert study.ballots.get(number=2).status == Ballot.Status.PENDING
        evaluation.refresh_from_db()
        assert evaluation.status == Evaluation.Status.QUEUED and evaluation.item_scores is None
    finally:
        held.rollback()
        held.close()

    def ended() -> bool:
        evaluation.refresh_from_db()
        return evaluation.status not in submitting.PENDING

    wait_for(ended, 120, "the evaluation to end")
    assert evaluation.status == Evaluation.Status.DONE, evaluation.error
    assert evaluation.item_scores is not None and not evaluation.upload
