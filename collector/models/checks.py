"""Attention checks: obvious pairs shown among a study's comparisons, and voters' answers."""

from __future__ import annotations

from django.db import models

from collector.models.studies import Study, Vote, Voter


class AttentionCheck(models.Model):
    """A comparison with a known answer: an obviously related pair against an obviously
    unrelated one. Shown among the ballots' comparisons, never scored.

    The two pairs get item ids from the items' sequence, so a check looks like any comparison
    to the voting API.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="checks")
    related_a = models.CharField(max_length=200)
    related_b = models.CharField(max_length=200)
    unrelated_a = models.CharField(max_length=200)
    unrelated_b = models.CharField(max_length=200)
    related_item_id = models.BigIntegerField()
    unrelated_item_id = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "id"]

    def __str__(self) -> str:
        return f"{self.related_a} – {self.related_b} over {self.unrelated_a} – {self.unrelated_b}"


class CheckAnswer(models.Model):
    """One attention check shown to a voter, and their answer once given.

    Its id comes from the comparisons' sequence: the voting API hands it out as a comparison id.
    """

    id = models.BigIntegerField(primary_key=True)
    voter = models.ForeignKey(Voter, on_delete=models.CASCADE, related_name="check_answers")
    attention_check = models.ForeignKey(
        AttentionCheck, on_delete=models.CASCADE, related_name="answers"
    )
    ballot_id = models.BigIntegerField(null=True, blank=True)
    related_left = models.BooleanField()
    choice = models.CharField(max_length=5, choices=Vote.Choice.choices, blank=True)
    passed = models.BooleanField(null=True, blank=True)
    response_ms = models.PositiveIntegerField(null=True, blank=True)
    shown_at = models.DateTimeField()
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["voter", "id"], name="checkanswer_voter")]

    def __str__(self) -> str:
        return f"check {self.attention_check_id} for {self.voter_id}: {self.choice or 'pending'}"
