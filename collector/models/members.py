"""Who works on a study, and as what: a study's team (see docs/team.md)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class StudyMember(models.Model):
    """One user's role in one study. An owner does everything, including deleting the study and
    managing its team; an editor everything else; a viewer sees every page, figure and export
    and changes nothing."""

    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        EDITOR = "editor", "Editor"
        VIEWER = "viewer", "Viewer"

    study = models.ForeignKey("collector.Study", on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="study_roles"
    )
    role = models.CharField(max_length=8, choices=Role.choices)
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "user"], name="one_role_per_study_and_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) in {self.study_id}"
