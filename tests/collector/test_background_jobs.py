"""Every kind of background job's row has one shape (collector.models.jobs.BackgroundJob): its
job marks it alive, done or failed the same way, and beat's sweep finds a silent one by it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import Q
from django.utils import timezone

from collector.models import Evaluation, ModelComparison, Release, StudyReliability
from collector.models.jobs import ERROR_LENGTH, BackgroundJob
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def one_of_each() -> list[BackgroundJob]:
    study = make_study(n_tokens=4)
    a, b = (Evaluation.objects.create(study=study, name=name, source="scores") for name in "ab")
    pair = ModelComparison.objects.create(study=study, a=a, b=b)
    release = Release.objects.create(
        study=study, slug=study.slug, version="1.0.0", licence="CC-BY-4.0", title="t"
    )
    return [a, pair, release]


def test_every_kind_of_job_row_is_a_background_job():
    kinds = (Evaluation, ModelComparison, Release, StudyReliability)
    assert all(issubclass(m, BackgroundJob) for m in kinds)


def test_a_failed_job_keeps_its_reason_to_the_limit_and_when_it_ended_and_a_done_one_clears_it():
    for row in one_of_each():
        kind = type(row)
        assert row.finished_at is None
        assert kind.failed(row.pk, "x" * (ERROR_LENGTH + 5)) == 1
        row.refresh_from_db()
        assert row.status == "failed" and row.error == "x" * ERROR_LENGTH, kind
        assert row.finished_at is not None
        assert kind.done(row.pk) == 1
        row.refresh_from_db()
        assert (row.status, row.error) == ("done", ""), kind


def test_a_condition_keeps_an_ended_build_from_being_failed_or_revived():
    release = one_of_each()[2]
    building = Q(status=Release.Status.BUILDING)
    assert Release.beat(release.pk, only=building, step="writing") == 1
    Release.done(release.pk)
    assert Release.failed(release.pk, "late", only=building) == 0
    assert Release.beat(release.pk, only=building, step="again") == 0
    release.refresh_from_db()
    assert (release.status, release.step, release.error) == ("done", "writing", "")


def test_a_row_is_silent_once_its_last_sign_of_life_is_older_than_the_timeout_or_never_came():
    evaluation = one_of_each()[0]
    now = timezone.now()
    silent = Evaluation.objects.filter(Evaluation.silent(now, timedelta(minutes=5)), name="a")
    assert list(silent) == [evaluation]  # never beat
    assert Evaluation.beat(evaluation.pk, progress=0.5) == 1
    assert not silent.all().exists() and Evaluation.objects.get(name="a").progress == 0.5
    later = Evaluation.objects.filter(
        Evaluation.silent(now + timedelta(minutes=6), timedelta(minutes=5)), name="a"
    )
    assert list(later) == [evaluation]


def test_a_reliability_report_ends_the_same_way_without_a_status_of_its_own(client):
    study = make_study(n_tokens=4)
    report = StudyReliability.objects.create(study=study, ballot=1, sent_at=timezone.now())
    assert StudyReliability.failed(report.pk, "no votes") == 1
    report.refresh_from_db()
    assert report.error == "no votes" and report.finished_at is not None
    assert StudyReliability.done(report.pk, result={"ballot": 1}) == 1
    report.refresh_from_db()
    assert (report.error, report.result) == ("", {"ballot": 1})
