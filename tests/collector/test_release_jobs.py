"""A release from the staff page is written by a background job: the page answers at once with
the version ``building`` and follows it; a failure is shown and the version may be released
again; a message delivered twice builds once; beat's sweep sends a lost build again; a viewer
releases nothing and an editor's release is in the audit trail."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from collector import jobs, tasks
from collector.models import AuditEntry, Release, StudyMember
from collector.releases import building, releasing
from tests.collector.helpers import wait_for
from tests.factories import finished_study, staff_user
from tests.job_routes import on_send

pytestmark = pytest.mark.usefixtures("releases_dir")

FORM = {"version": "1.0.0", "licence": "CC-BY-4.0", "authors": "Ada Lovelace", "public": "on",
        "synthetic": "on"}  # fmt: skip


@pytest.mark.django_db
def test_the_form_answers_at_once_with_the_version_building_and_the_page_follows_it(
    client, finished, django_capture_on_commit_callbacks, monkeypatch
):
    sent = []
    on_send(monkeypatch, jobs.BUILD_RELEASE, lambda pk: sent.append((jobs.BUILD_RELEASE, pk)))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/staff/{finished.slug}/releases/", FORM)
        assert sent == []  # sent once the release's row is committed
    assert response.status_code == 302
    release = Release.objects.get()
    assert release.status == Release.Status.BUILDING and release.sent_at is not None
    assert sent == [(jobs.BUILD_RELEASE, release.pk)]
    assert not releasing.place(finished.slug, "1.0.0").exists()  # nothing written yet
    page = client.get(f"/staff/{finished.slug}/releases/").content.decode()
    assert "Being written" in page and "staff/releases.js" in page  # it follows the build
    # Neither its files nor its public page exist before it is done.
    assert client.get(f"/staff/{finished.slug}/releases/1.0.0/zip").status_code == 404
    assert client.get(f"/d/{finished.slug}/1.0.0/").status_code == 404
    assert building.build(release.pk) == f"release {release} written"
    page = client.get(f"/staff/{finished.slug}/releases/").content.decode()
    assert "Being written" not in page and "staff/releases.js" not in page
    assert Release.objects.get().zip_sha256 in page
    assert client.get(f"/d/{finished.slug}/1.0.0/").status_code == 200


@pytest.mark.django_db
def test_a_failed_build_is_shown_with_its_reason_and_the_version_is_released_again(
    client, finished, monkeypatch
):
    def broken(*args, **kwargs):
        raise OSError("No space left on device")

    client.post(f"/staff/{finished.slug}/releases/", FORM)
    release = Release.objects.get()
    monkeypatch.setattr(releasing, "_figures", broken)
    assert building.build(release.pk).endswith("failed")
    release.refresh_from_db()
    assert release.status == Release.Status.FAILED and "No space left" in release.error
    assert not any(p.is_dir() for p in (releasing.releases_dir() / finished.slug).iterdir())
    page = client.get(f"/staff/{finished.slug}/releases/").content.decode()
    assert "Failed" in page and "No space left on device" in page and 'value="1.0.0"' in page
    assert client.get(f"/d/{finished.slug}/1.0.0/").status_code == 404
    monkeypatch.undo()
    assert client.post(f"/staff/{finished.slug}/releases/", FORM).status_code == 302
    again = Release.objects.get()  # the failed one replaced
    assert again.pk != release.pk and again.status == Release.Status.BUILDING


@pytest.mark.django_db
def test_a_build_message_delivered_twice_builds_once(client, finished):
    client.post(f"/staff/{finished.slug}/releases/", FORM)
    release = Release.objects.get()
    Release.objects.filter(pk=release.pk).update(heartbeat_at=timezone.now())  # a job runs it
    assert building.build(release.pk).endswith("is being built by another job")
    assert Release.objects.get().status == Release.Status.BUILDING
    dead = timezone.now() - building.ALIVE_FOR - timedelta(seconds=1)
    Release.objects.filter(pk=release.pk).update(heartbeat_at=dead)  # its job died
    assert building.build(release.pk).endswith("written")
    assert building.build(release.pk).endswith("is done already")


@pytest.mark.django_db
def test_the_sweep_sends_a_lost_build_again_once_per_alive_for(
    closes_held, client, finished, monkeypatch
):
    sent = []
    on_send(monkeypatch, jobs.BUILD_RELEASE, sent.append)
    client.post(f"/staff/{finished.slug}/releases/", FORM)
    release = Release.objects.get()
    assert tasks.sweep_jobs()["releases_resent"] == 0  # sent just now
    lost = timezone.now() - building.ALIVE_FOR - timedelta(seconds=1)
    Release.objects.filter(pk=release.pk).update(sent_at=lost)
    assert tasks.sweep_jobs()["releases_resent"] == 1 and sent == [release.pk]
    assert building.resend_lost() == {"releases_resent": 0}  # sent again just now
    Release.objects.filter(pk=release.pk).update(sent_at=lost, heartbeat_at=timezone.now())
    assert building.resend_lost() == {"releases_resent": 0}  # its job is alive


@pytest.mark.django_db
def test_a_viewer_sees_the_releases_but_releases_nothing_and_an_editors_release_is_recorded(
    client, finished
):
    viewer, editor = staff_user(username="viewer"), staff_user(username="editor")
    StudyMember.objects.create(study=finished, user=viewer, role="viewer")
    StudyMember.objects.create(study=finished, user=editor, role="editor")
    client.force_login(viewer)
    page = client.get(f"/staff/{finished.slug}/releases/")
    assert page.status_code == 200 and "<form" not in page.content.decode().split("<main")[-1]
    assert client.post(f"/staff/{finished.slug}/releases/", FORM).status_code == 403
    assert not Release.objects.exists()
    client.force_login(editor)
    assert client.post(f"/staff/{finished.slug}/releases/", FORM).status_code == 302
    entry = AuditEntry.objects.get(action="release.publish")
    assert (entry.actor, entry.study_slug) == ("editor", finished.slug)
    assert entry.detail == {"version": "1.0.0", "licence": "CC-BY-4.0", "public": True}


@pytest.mark.django_db(transaction=True)
def test_the_evaluations_worker_writes_a_release_sent_from_the_page(
    releases_dir, evaluations_worker, client, monkeypatch
):
    study = finished_study(monkeypatch, slug="worked", created_by=staff_user(client))
    assert client.post(f"/staff/{study.slug}/releases/", FORM).status_code == 302

    def done() -> bool:
        return Release.objects.get().status != Release.Status.BUILDING

    wait_for(done, 120, "the release to be written")
    release = Release.objects.get()
    assert release.status == Release.Status.DONE, release.error
    assert releasing.zip_path(release).is_file()
    assert client.get(f"/d/{study.slug}/1.0.0/").status_code == 200
