"""The shape every background job's row shares (:class:`BackgroundJob`): a model evaluation, a
paired comparison of two models, a release build, a reliability report.

A job's row is created ``queued`` (a build: ``building``) and sent to the queue by name
(:func:`collector.jobs.send`); the job marks its signs of life, then ends ``done`` or ``failed``
with the reason. Beat's sweep (:func:`collector.tasks.sweep_jobs`) sends again a row whose message
was lost or whose job stopped beating (:func:`collector.jobs.resend_stale`, by ``sent_at``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, ClassVar

from django.db import models
from django.db.models import Q
from django.utils import timezone

ERROR_LENGTH = 2000  # the longest reason kept


class BackgroundJob(models.Model):
    """A row whose work a background job does. A subclass with a ``status`` field has ``Status``
    choices including ``DONE`` and ``FAILED``, which :meth:`done` and :meth:`failed` set (a
    reliability report has none: its result or its error says how it ended)."""

    Status: ClassVar[Any]

    sent_at = models.DateTimeField(
        null=True, blank=True, help_text="When its job's message was last sent to the queue."
    )
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of the job running it."
    )
    error = models.TextField(blank=True, help_text="Why the job failed.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @classmethod
    def beat(cls, pk: int, *, only: Q | None = None, **fields: Any) -> int:
        """A sign of life of row ``pk``'s job (with ``fields``, its progress); ``only``: a
        condition the row must still meet."""
        rows = cls._default_manager.filter(pk=pk).filter(only or Q())
        return rows.update(heartbeat_at=timezone.now(), **fields)

    @classmethod
    def done(cls, pk: int, **fields: Any) -> int:
        """Row ``pk``'s job has ended well; ``fields`` hold what it computed."""
        ended = {**cls._status("DONE"), "error": "", "finished_at": timezone.now()}
        return cls._default_manager.filter(pk=pk).update(**ended, **fields)

    @classmethod
    def failed(cls, pk: int, reason: object, *, only: Q | None = None, **fields: Any) -> int:
        """Row ``pk``'s job has failed for ``reason`` (kept to :data:`ERROR_LENGTH`
        characters); ``only``: a condition the row must still meet (a build still building)."""
        rows = cls._default_manager.filter(pk=pk).filter(only or Q())
        ended = {
            **cls._status("FAILED"),
            "error": str(reason)[:ERROR_LENGTH],
            "finished_at": timezone.now(),
        }
        return rows.update(**ended, **fields)

    @classmethod
    def _status(cls, name: str) -> dict[str, Any]:
        """``{"status": Status.<name>}``, or nothing for a row without a status."""
        has_status = any(f.name == "status" for f in cls._meta.get_fields())
        return {"status": getattr(cls.Status, name)} if has_status else {}

    @staticmethod
    def silent(now: datetime, alive_for: timedelta) -> Q:
        """Rows whose job has given no sign of life for ``alive_for`` (or none at all)."""
        return Q(heartbeat_at__lt=now - alive_for) | Q(heartbeat_at__isnull=True)
