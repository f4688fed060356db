"""The audit trail: one row per staff action that changed a study or its data (see
docs/team.md). Rows are appended only (a trigger refuses UPDATE and DELETE), and they name the
study and the actor by plain values, so a deleted study or user keeps its trail."""

from __future__ import annotations

from django.db import models


class AuditEntry(models.Model):
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    # Who: the user's id and name as they were (no foreign key); "command line" for a command
    # run without --as.
    actor_id = models.BigIntegerField(null=True, blank=True)
    actor = models.CharField(max_length=150)
    address = models.GenericIPAddressField(null=True, blank=True)
    action = models.CharField(max_length=40)
    # Which study: its id and slug as plain values (no foreign key, nothing cascades).
    study_id = models.BigIntegerField(null=True, blank=True)
    study_slug = models.CharField(max_length=80, blank=True)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name_plural = "audit entries"
        ordering = ["-id"]
        indexes = [models.Index(fields=["study_id", "-id"], name="audit_by_study")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor}: {self.action} {self.study_slug}"
