"""Deleting with rescore never deadlocks: the rescore and the deletion's refit of the pooled fit
take their locks in one order (the fit's advisory lock, then the study row), so running both at
once on real PostgreSQL ends with both done."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from collector import jobs
from collector.models import Study, Voter
from collector.participants import forgetting
from collector.studies import pooled_fit, rescoring
from tests.factories import finished_study
from tests.job_routes import hold, on_send

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def nothing_sent(monkeypatch):
    """The jobs run in the test's threads: nothing goes to the queue."""
    hold(monkeypatch, jobs.REFIT_POOLED, jobs.RECOMPUTE_STALE)
    on_send(monkeypatch, jobs.STUDY_RELIABILITY, lambda *args: None)


def _in_thread(target, results: dict, key: str) -> threading.Thread:
    def run() -> None:
        try:
            results[key] = target()
        except BaseException as exc:  # noqa: BLE001 (reported by the test)
            results[key] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run, name=key)
    thread.start()
    return thread


def test_a_rescore_and_the_deletions_refit_running_at_once_both_finish_without_a_deadlock(
    monkeypatch,
):
    study = finished_study(monkeypatch)
    voter = Voter.objects.filter(study=study, votes__isnull=False).order_by("id").first()
    assert forgetting.forget_voter(voter.pk).withdrawn > 0
    # The refit holds the fit's lock and, mid-fit, lets the rescore start before it goes on to
    # write the study row: the interleaving that deadlocked when the rescore took the study
    # row first and then waited for the fit's lock.
    real_fit = pooled_fit._fit
    fitting, rescoring_started = threading.Event(), threading.Event()

    def slow_fit(study_id: int) -> None:
        if threading.current_thread().name == "refit":
            fitting.set()
            assert rescoring_started.wait(30)
            time.sleep(1.5)  # the rescore is inside its transaction by now, waiting on a lock
        real_fit(study_id)

    monkeypatch.setattr(pooled_fit, "_fit", slow_fit)

    def rescore() -> int:
        rescoring_started.set()
        return rescoring.rescore_without_withdrawn(study.pk)

    results: dict = {}
    refit = _in_thread(lambda: pooled_fit.store_pooled_fit(study.pk), results, "refit")
    assert fitting.wait(30)
    rescorer = _in_thread(rescore, results, "rescore")
    for thread in (refit, rescorer):
        thread.join(60)
        assert not thread.is_alive()
    assert results == {"refit": f"study {study.pk}: pooled fit stored", "rescore": 2}
    study.refresh_from_db()
    assert study.withdrawn_votes == 0 and study.pooled_fit_vote_set == study.vote_set
    assert Study.objects.get(pk=study.pk).pooled_fit_at is not None
