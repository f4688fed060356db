"""A citable release of a finished study: an immutable, versioned bundle on disk
(``RELEASES_DIR``) and what its pages show (:mod:`collector.releases`)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from collector.models.jobs import BackgroundJob
from collector.models.release_terms import validate_licence, validate_version
from collector.models.studies import Study


class Release(BackgroundJob):
    """One version of a study's dataset. Never changed once written: releasing again makes a
    new version. The slug is kept with it, so that its public page and citation outlive the
    study (a deleted study leaves ``study`` null; the bundle stays on disk).

    A release from the staff page is ``building`` until a background job
    (:mod:`collector.releases.building`) has written its bundle: then ``done``, or ``failed``
    with the reason (nothing written; the same version may be released again). Only a ``done``
    release has files, checksums and a public page.
    """

    class Status(models.TextChoices):
        BUILDING = "building", "building"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    study = models.ForeignKey(
        Study, null=True, blank=True, on_delete=models.SET_NULL, related_name="releases"
    )
    slug = models.SlugField(max_length=80, help_text="The study's slug when it was released.")
    version = models.CharField(max_length=40, validators=[validate_version])
    licence = models.CharField(max_length=32, validators=[validate_licence])
    title = models.CharField(max_length=300)
    authors = models.JSONField(default=list, help_text="Author names, in order.")
    public = models.BooleanField(default=False, help_text="Has a public page /d/<slug>/<version>/.")
    # The evaluations staff chose to publish, and their leaderboard rows as released.
    published_evaluations = models.JSONField(default=list, blank=True)
    leaderboard = models.JSONField(default=list, blank=True)
    # The dataset card's content (README.md is written from it; the public page shows it).
    card = models.JSONField(default=dict)
    bundle = models.CharField(
        max_length=300, blank=True, help_text="The bundle's folder under RELEASES_DIR."
    )
    zip_name = models.CharField(max_length=200, blank=True)
    zip_sha256 = models.CharField(max_length=64, blank=True)
    zip_bytes = models.BigIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.BUILDING)
    step = models.CharField(max_length=100, blank=True, help_text="What the build is writing.")

    class Meta:
        ordering = ["slug", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["slug", "version"], name="release_unique_version"),
        ]

    def __str__(self) -> str:
        return f"{self.slug} {self.version}"
