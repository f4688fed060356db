"""The finishing close stores the final ranking and finishes the study; the pooled
Bradley-Terry fit of every vote follows in a task of its own (collector/studies/pooled_fit.py),
shown as pending until it is stored, and resent by the sweep when it is lost."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

import ranking
from collector import jobs, tasks
from collector.exports import study_files
from collector.models import Item, Study
from collector.studies import bulk_sql, lifecycle
from tests.collector.helpers import wait_closed, wait_for
from tests.factories import finish_in_process, make_study, simulate, staff_user
from tests.job_routes import on_send

pytestmark = pytest.mark.django_db(transaction=True)


def _stored_fit_matches_the_votes(study: Study) -> None:
    rows = bulk_sql.study_votes(study.pk).trusted()
    n = study.items.count()
    expected = ranking.bradley_terry(n, rows.pairs, rows.first_score)
    stored = np.array(
        Item.objects.filter(study=study).order_by("index").values_list("pooled_strength", flat=True)
    )
    np.testing.assert_allclose(stored, expected, rtol=0, atol=1e-9)


def test_the_study_is_finished_and_its_ranking_exported_before_the_pooled_fit(client, monkeypatch):
    owner = staff_user(client)
    study = make_study(n_tokens=10, n_ballots=2, auto_open=True, slug="early", created_by=owner)
    sent: list[int] = []
    finish_in_process(study, monkeypatch, fit=False)
    assert study.status == Study.Status.FINISHED and study.pooled_fit_at is None
    assert not Item.objects.filter(study=study, pooled_strength__isnull=False).exists()
    rows = list(study_files.ranking_rows(study))
    assert len(rows) == 45 and [r[0] for r in rows[:3]] == [1, 2, 3]
    assert client.get("/staff/early/ranking.csv").status_code == 200
    assert "pooled fit pending" in client.get("/staff/early/").content.decode()
    figures = client.get("/staff/early/figures/").content.decode()
    assert 'id="pooled-fit-pending"' in figures and 'id="top-ranking"' not in figures

    on_send(monkeypatch, jobs.STORE_POOLED_FIT, sent.append)
    assert "stored" in tasks.store_pooled_fit.apply(args=(study.pk,)).get()
    study.refresh_from_db()
    assert study.pooled_fit_at is not None and sent == []
    _stored_fit_matches_the_votes(study)
    assert "pooled fit pending" not in client.get("/staff/early/").content.decode()
    figures = client.get("/staff/early/figures/").content.decode()
    assert 'id="pooled-fit-pending"' not in figures and 'id="top-ranking"' in figures


def test_a_resent_pooled_fit_of_a_study_fitted_already_changes_nothing(monkeypatch):
    study = finish_in_process(make_study(n_tokens=10, n_ballots=2, auto_open=True), monkeypatch)
    study.refresh_from_db()
    stored_at = study.pooled_fit_at
    assert stored_at is not None
    Item.objects.filter(study=study).update(pooled_strength=7.0)  # not the fit's
    assert "already" in tasks.store_pooled_fit.apply(args=(study.pk,)).get()
    assert set(Item.objects.filter(study=study).values_list("pooled_strength", flat=True)) == {7.0}
    study.refresh_from_db()
    assert study.pooled_fit_at == stored_at


def test_the_pooled_fit_arrives_through_the_worker(celery_worker):
    study = make_study(n_tokens=10, n_ballots=2, auto_open=True, seed=3)
    for number in (1, 2):
        simulate(study)  # the last vote sends the close through the broker
        wait_closed(study.ballots.get(number=number))
    study.refresh_from_db()
    assert study.status == Study.Status.FINISHED
    wait_for(
        lambda: Study.objects.filter(pk=study.pk, pooled_fit_at__isnull=False).exists(),
        60,
        "the pooled fit",
    )
    _stored_fit_matches_the_votes(study)


def test_a_lost_pooled_fit_is_sent_again_by_the_sweep_once_per_timeout_and_not_while_fresh(
    celery_worker, monkeypatch, settings
):
    study = finish_in_process(
        make_study(n_tokens=10, n_ballots=2, auto_open=True, seed=5), monkeypatch, fit=False
    )
    assert study.pooled_fit_at is None  # the broker was "down" when the study finished
    assert study.pooled_fit_sent_at == study.finished_at  # the finishing close sent it
    monkeypatch.undo()
    assert lifecycle.sweep_ballots()["fits_resent"] == 0  # too recent to be lost
    lost = timezone.now() - timedelta(seconds=settings.STUCK_CLOSING_SECONDS + 1)
    Study.objects.filter(pk=study.pk).update(pooled_fit_sent_at=lost)
    assert lifecycle.sweep_ballots() == {"closed": 0, "requeued": 0, "fits_resent": 1}
    assert Study.objects.get(pk=study.pk).pooled_fit_sent_at > lost
    wait_for(
        lambda: Study.objects.filter(pk=study.pk, pooled_fit_at__isnull=False).exists(),
        60,
        "the resent pooled fit",
    )
    _stored_fit_matches_the_votes(study)
    assert lifecycle.sweep_ballots()["fits_resent"] == 0
    # Pending again (its job lost once more): not sent again until STUCK_CLOSING_SECONDS pass.
    Study.objects.filter(pk=study.pk).update(pooled_fit_at=None)
    assert lifecycle.sweep_ballots()["fits_resent"] == 0
    Study.objects.filter(pk=study.pk).update(pooled_fit_sent_at=lost)
    assert lifecycle.sweep_ballots()["fits_resent"] == 1
    wait_for(
        lambda: Study.objects.filter(pk=study.pk, pooled_fit_at__isnull=False).exists(),
        60,
        "the pooled fit sent a second time",
    )
