"""Models evaluated against a finished study's ranking, and their uploaded files."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.signals import post_delete
from django.dispatch import receiver

from collector.models import evaluation_uploads
from collector.models.jobs import BackgroundJob
from collector.models.studies import Study


class Evaluation(BackgroundJob):
    """A semantic model scored against a finished study's gold ranking (one per study and name).

    The upload is stored (``upload``) and the request answers at once; the background job reads
    and checks the file, keeps the model's score per item in ``item_scores`` (``Item.index``
    order, None where the model has no score; the column is null until the file is read) and
    removes the file; then it computes the metrics, the chance baseline and the voter
    bootstrap, reporting ``progress``. A file that cannot be read is ``refused`` with the
    reason (and the line) in ``error``, and nothing is scored.
    """

    class Source(models.TextChoices):
        SCORES = "scores", "Scores per item (CSV/TSV)"
        VECTORS = "vectors", "Word vectors"

    class Missing(models.TextChoices):
        SKIP = "skip", "Skip unscored items"
        LAST = "last", "Rank unscored items last"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        REFUSED = "refused", "Refused"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="evaluations")
    name = models.CharField(max_length=100)
    source = models.CharField(max_length=8, choices=Source.choices)
    source_detail = models.CharField(
        max_length=300, blank=True, help_text="File name, vectors format and reading rules."
    )
    item_scores = models.JSONField(
        null=True, blank=True, help_text="The model's score per item, in Item.index order."
    )
    upload = models.FileField(
        storage=evaluation_uploads,
        blank=True,
        max_length=200,
        help_text="The uploaded file until its job has read it.",
    )
    file_name = models.CharField(max_length=255, blank=True, help_text="The upload's own name.")
    vectors_format = models.CharField(max_length=16, blank=True, help_text="Empty: detected.")
    missing = models.CharField(
        max_length=4,
        choices=Missing.choices,
        default=Missing.SKIP,
        help_text="What the metrics do with items the model has no score for.",
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    result = models.JSONField(null=True, blank=True)
    vote_set = models.PositiveIntegerField(
        default=0, help_text="The study's vote set the result was computed from."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="evaluation_unique_name"),
        ]

    def __str__(self) -> str:
        return f"{self.name} on {self.study}"


@receiver(post_delete, sender=Evaluation)
def _remove_evaluation_upload(sender: type, instance: Evaluation, **_kwargs: object) -> None:
    """An evaluation removed before its file was read (or a study deleted) leaves no file."""
    if instance.upload:
        instance.upload.delete(save=False)


class ModelComparison(BackgroundJob):
    """Two evaluated models of a study compared on the same voter resamples: model A minus
    model B on rho_w, tau_w, rho, tau (a target study's macro means and A&G score too), each
    with its percentile interval and the share of resamples in which A scores higher
    (:func:`ranking.evaluation.paired_comparison` through :func:`ranking.evaluation.evaluate`,
    as ``python -m ranking.evaluate`` with both models). Computed in the background; beat's sweep
    sends again a queued one whose message was lost (``sent_at``: its last send)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="model_comparisons")
    a = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="+")
    b = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    result = models.JSONField(null=True, blank=True)
    vote_set = models.PositiveIntegerField(
        default=0, help_text="The study's vote set the result was computed from."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["a", "b"], name="model_comparison_unique_pair"),
        ]

    def __str__(self) -> str:
        return f"{self.a.name} - {self.b.name} on {self.study}"
