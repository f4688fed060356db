"""A study's Prolific study (:mod:`collector.prolific`): its id and the staff's terms, the wave
Prolific should be in and the last transition's outcome, and one stored record per approval or
bonus, checked before anything is sent (nothing is approved or paid twice).

No participant id is stored: a submission is matched to its voter by the keyed hash of its
participant id (:func:`collector.voting.participant_ids.participant_key`), and only Prolific's
submission id is kept, on the payment it pays.
"""

from __future__ import annotations

from django.db import models

from .studies import Study, Voter


class ProlificLink(models.Model):
    class Action(models.TextChoices):
        APPROVE = "AUTOMATICALLY_APPROVE", "approve automatically"
        REVIEW = "MANUALLY_REVIEW", "review by hand"
        RETURN = "REQUEST_RETURN", "ask for a return"

    class Wave(models.TextChoices):
        NONE = "", "nothing yet"
        ACTIVE = "active", "recruiting"
        PAUSED = "paused", "paused"
        STOPPED = "stopped", "stopped"

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="prolific")
    prolific_id = models.CharField(max_length=64, help_text="The Prolific study's id.")
    created_here = models.BooleanField(default=False)
    # The staff's terms (amounts in the Prolific account's currency, in cents or pence).
    hourly_rate = models.PositiveIntegerField(default=900, help_text="Reward per hour, in cents.")
    margin_percent = models.PositiveIntegerField(default=10)
    partial_amount = models.PositiveIntegerField(default=0, help_text="Promised for a partial.")
    partial_action = models.CharField(
        max_length=24, choices=Action.choices, default="REQUEST_RETURN"
    )
    excluded_action = models.CharField(
        max_length=24, choices=Action.choices, default="MANUALLY_REVIEW"
    )
    planned_seconds = models.PositiveIntegerField(default=8, help_text="Planned time per answer.")
    # The wave the job last brought the Prolific study to; when the lifecycle (or the sweep) last
    # asked for the job, when it was last sent, and when a job last finished without a refusal.
    wanted = models.CharField(max_length=8, choices=Wave.choices, blank=True, default="")
    wanted_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)
    # The ballot whose places were bought, and the total places it asked for (computed once per
    # ballot: a retried job sets the same total, never adds places twice).
    wave_ballot = models.PositiveSmallIntegerField(default=0)
    wave_places = models.PositiveIntegerField(default=0)
    prolific_status = models.CharField(max_length=24, blank=True)
    places = models.PositiveIntegerField(default=0)
    places_taken = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    # The reconciliation: when last run, and what does not match (see collector.prolific.paying).
    synced_at = models.DateTimeField(null=True, blank=True)
    mismatches = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return f"Prolific study {self.prolific_id} of {self.study}"


class ProlificPayment(models.Model):
    """One approval or bonus of one submission, stored before it is sent."""

    class Kind(models.TextChoices):
        APPROVAL = "approval", "approval"
        BONUS = "bonus", "bonus"

    class State(models.TextChoices):
        PENDING = "pending", "to send"
        SET_UP = "set_up", "bonus set up, not paid"
        SENT = "sent", "sent, no answer (check on Prolific)"
        DONE = "done", "done"

    link = models.ForeignKey(ProlificLink, on_delete=models.CASCADE, related_name="payments")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    submission_id = models.CharField(max_length=64)
    voter = models.ForeignKey(Voter, null=True, blank=True, on_delete=models.SET_NULL)
    amount = models.PositiveIntegerField(default=0, help_text="A bonus, in cents.")
    state = models.CharField(max_length=8, choices=State.choices, default=State.PENDING)
    bulk_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["link", "kind", "submission_id"], name="prolific_payment_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} of submission {self.submission_id}: {self.state}"
