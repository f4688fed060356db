"""A study's reliability and settled top, computed after each closed ballot (in the background)
and read by its pages, its API, its dataset card and its release."""

from __future__ import annotations

from django.db import models

from collector.models.jobs import BackgroundJob
from collector.models.studies import Study


class StudyReliability(BackgroundJob):
    """The reliability figures of a study after ballot ``ballot`` (:mod:`collector.studies.
    reliability`): split-half reliability, Krippendorff's alpha and the settled top.

    The row is created when the ballot closes, with ``result`` empty until the background job
    has computed it ("computing…" on the page); as every job's row (:class:`BackgroundJob`),
    ``sent_at`` is when its job (or a typed top's) was last asked for, ``finished_at`` when it
    was computed or failed, ``error`` why; ``final`` marks the figures after the study's
    last ballot. ``custom`` holds the tops staff asked for by their ``k`` (``{"k": [entries]}``)
    and ``requested`` the ``k`` still being computed.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="reliability")
    ballot = models.PositiveSmallIntegerField(help_text="The figures hold after this ballot.")
    final = models.BooleanField(default=False)
    seed = models.BigIntegerField(default=0)
    splits = models.PositiveIntegerField(default=0)
    resamples = models.PositiveIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)
    custom = models.JSONField(default=dict, blank=True)
    requested = models.JSONField(default=list, blank=True)
    vote_set = models.PositiveIntegerField(
        default=0, help_text="The study's vote set the figures were computed from."
    )

    class Meta:
        ordering = ["study", "ballot"]
        constraints = [
            models.UniqueConstraint(fields=["study", "ballot"], name="reliability_unique_ballot"),
        ]

    def __str__(self) -> str:
        return f"reliability of {self.study} after ballot {self.ballot}"


class VoteSetChange(models.Model):
    """One change of a study's counted votes (:mod:`collector.studies.vote_sets`), kept so that a
    figure computed before it can say what changed since. Append-only."""

    class Kind(models.TextChoices):
        EXCLUDED = "excluded", "voter excluded"
        WITHDRAWN = "withdrawn", "votes withdrawn"
        RESCORED = "rescored", "ranking rescored"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="vote_set_changes")
    vote_set = models.PositiveIntegerField(help_text="The study's vote set after the change.")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    votes = models.PositiveIntegerField(default=0, help_text="Counted votes that left the set.")
    voters = models.PositiveIntegerField(default=0)
    at = models.DateTimeField()

    class Meta:
        ordering = ["study", "vote_set"]
        constraints = [
            models.UniqueConstraint(fields=["study", "vote_set"], name="vote_set_change_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.study} vote set {self.vote_set}: {self.kind}"
