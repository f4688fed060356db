"""A ballot close never waits behind a model evaluation: closes and evaluations have their own
queues, each with its own worker (tests/conftest.py starts them as docker-compose.yml does)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.core.files import File

from collector import jobs
from collector.evaluation import submitting
from collector.models import Ballot, Evaluation, Item
from tests.collector.helpers import finished_study, make_study, simulate, wait_closed, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_each_task_goes_to_its_own_queue() -> None:
    from config.celery import app

    router = app.amqp.router
    closes = {jobs.CLOSE_BALLOT, "collector.tasks.sweep_ballots"}
    for task in closes | {jobs.EVALUATE_MODEL, jobs.REFIT_POOLED}:
        queue = router.route({}, task)["queue"].name
        expected = settings.CELERY_QUEUE_CLOSES if task in closes else "evaluations"
        assert queue == expected, task


def long_vectors_file(path: Path, study_words: set[str], fillers: int) -> Path:
    """A GloVe file whose reading takes a while: the study's words, then ``fillers`` lines."""
    with open(path, "w", encoding="utf-8") as out:
        for k, word in enumerate(sorted(study_words)):
            out.write(f"{word} {k + 1} 1 0.5\n")
        line = " 0.25 0.5 0.75\n"
        out.writelines(f"filler{k}{line}" for k in range(fillers))
    return path


def test_a_ballot_closes_while_a_long_evaluation_is_running(
    evaluations_worker, monkeypatch, tmp_path
):
    gold = finished_study(monkeypatch, slug="gold")
    words = set()
    for a, b in Item.objects.filter(study=gold).values_list("token_a__text", "token_b__text"):
        words.update((a + " " + b).split())
    path = long_vectors_file(tmp_path / "long.txt", words, fillers=4_000_000)
    with open(path, "rb") as handle:
        evaluation = submitting.submit(
            gold, "long", File(handle, name="long.txt"), "vectors", vectors_format="glove"
        )

    def reading() -> bool:
        evaluation.refresh_from_db()
        return evaluation.status == Evaluation.Status.RUNNING and evaluation.progress > 0

    wait_for(reading, 60, "the evaluator to start reading the file")

    study = make_study(seed=3)
    ballot = study.ballots.get(number=1)
    simulate(study)  # the last vote enqueues the close
    wait_closed(ballot, timeout=60)
    evaluation.refresh_from_db()
    # The close was done by its own worker while the evaluation was still reading its file.
    assert evaluation.status == Evaluation.Status.RUNNING, evaluation.status
    assert evaluation.item_scores is None
    assert study.ballots.get(number=2).status == Ballot.Status.PENDING

    def ended() -> bool:
        evaluation.refresh_from_db()
        return evaluation.status not in (Evaluation.Status.QUEUED, Evaluation.Status.RUNNING)

    wait_for(ended, 240, "the long evaluation to end")
    assert evaluation.status == Evaluation.Status.DONE, evaluation.error
    assert evaluation.item_scores is not None and not evaluation.upload
