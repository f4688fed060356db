"""A release from the staff page is written by a background job, not in the request: writing the
bundle of a large study reads every vote and takes minutes.

The page stores the release as ``building`` (:func:`collector.releases.releasing.prepare`) and
sends the job ``collector.tasks.build_release`` (queue ``evaluations``, with the other long
jobs) once its transaction commits; :func:`build` writes the bundle and marks the release
``done``, or ``failed`` with the reason. The Releases page shows the step being written and
follows it in the background while a version is building.

A message delivered twice builds once: the job writes ``heartbeat_at`` at each step, and a
release whose heartbeat is younger than :data:`ALIVE_FOR` is left to its job. Beat's sweep
(``collector.tasks.sweep_jobs``) calls :func:`resend_lost`: a release still ``building``
with no sign of life for :data:`ALIVE_FOR` (its message lost, its worker killed) is sent again,
at most once per :data:`ALIVE_FOR`.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from collector import jobs
from collector.models import Release
from collector.releases.releasing import ReleaseRefused, write_bundle

__all__ = ["ALIVE_FOR", "build", "resend_lost", "send_after_commit"]

log = logging.getLogger(__name__)

# A building release whose job wrote no heartbeat for this long is taken for lost; one step (an
# export of millions of votes) stays well within it.
ALIVE_FOR = timedelta(minutes=10)
BUILDING = Q(status=Release.Status.BUILDING)  # a build not ended


def send_after_commit(release: Release) -> None:
    """Send the release's build once the current transaction commits."""
    Release.objects.filter(pk=release.pk).update(sent_at=timezone.now())
    jobs.send_after_commit(jobs.BUILD_RELEASE, release.pk)


def build(release_id: int) -> str:
    """Write a building release's bundle (the job's body); returns a summary line."""
    now = timezone.now()
    with transaction.atomic():
        release = Release.objects.select_for_update().filter(pk=release_id).first()
        if release is None:
            return f"release {release_id} is gone"
        if release.status != Release.Status.BUILDING:
            return f"release {release} is {release.status} already"
        beat = release.heartbeat_at
        if beat is not None and now - beat < ALIVE_FOR:  # a message redelivered
            return f"release {release} is being built by another job"
        release.heartbeat_at, release.step = now, "starting"
        release.save(update_fields=["heartbeat_at", "step"])

    def heartbeat(step: str) -> None:
        Release.beat(release_id, only=BUILDING, step=step[:100])

    try:
        write_bundle(release, heartbeat)
    except ReleaseRefused as exc:
        _fail(release_id, str(exc))
        return f"release {release} failed: {exc}"
    except Exception as exc:
        log.exception("the build of release %s failed", release)
        _fail(release_id, f"the bundle could not be written ({type(exc).__name__}): {exc}")
        return f"release {release} failed"
    return f"release {release} written"


def _fail(release_id: int, reason: str) -> None:
    Release.failed(release_id, reason, only=BUILDING, step="")


def resend_lost(now: datetime | None = None) -> dict[str, int]:
    """Send again the builds with no sign of life for :data:`ALIVE_FOR` (module docstring)."""
    now = now or timezone.now()
    silent = Release.objects.filter(Release.silent(now, ALIVE_FOR), BUILDING)
    sent = jobs.resend_stale(
        silent, jobs.BUILD_RELEASE, older_than=ALIVE_FOR, now=now, what="the build of release"
    )
    return {"releases_resent": sent}
