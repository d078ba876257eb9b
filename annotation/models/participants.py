"""Who annotates and what they answered: participants (one per study and platform id) and their responses.

Scoring reads `Response` (study, study_item, participant, question, answer, value, is_valid, is_correct,
is_screening, answered_at); keep those fields' names and meaning stable.
"""
from __future__ import annotations

from django.db import models

from annotation.models.studies import Study, StudyItem
from tasks.models import ScreeningQuestion


class Participant(models.Model):
    class Platform(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Amazon Mechanical Turk"
        ANONYMOUS = "anonymous", "anonymous link"
        IMPORTED = "imported", "imported annotations"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    platform = models.CharField(max_length=10, choices=Platform.choices)
    external_id = models.CharField(max_length=128, help_text="PROLIFIC_PID, MTurk workerId, or generated.")
    screened_out = models.BooleanField(default=False, help_text="Failed eligibility: not allowed to annotate.")
    excluded = models.BooleanField(default=False, help_text="Failed a screening question: responses excluded.")
    exclusion_reason = models.CharField(max_length=200, blank=True, default="")
    excluded_at = models.DateTimeField(null=True, blank=True)
    persona = models.JSONField(default=dict, blank=True, help_text="Persona questionnaire answers (PASTEL).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["study", "platform", "external_id"], name="participant_unique"),
        ]
        # One person across studies (a reserver skips every family they saw in any study).
        indexes = [models.Index(fields=["platform", "external_id"], name="participant_person")]

    def __str__(self) -> str:
        return f"{self.platform}:{self.external_id}"


class TelemetryStatus(models.TextChoices):
    NONE = "none", "no telemetry"
    CONSISTENT = "consistent", "consistent"
    INCONSISTENT = "inconsistent", "inconsistent"


class Response(models.Model):
    """One answer of one participant to one item (and one question of it, for Likert items)."""

    # No index of its own: the (study, is_valid, study_item) index below serves every lookup by study.
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="responses", db_index=False)
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="responses")
    study_item = models.ForeignKey(StudyItem, on_delete=models.CASCADE, null=True, blank=True, related_name="responses")
    screening_question = models.ForeignKey(
        ScreeningQuestion, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    batch_number = models.PositiveSmallIntegerField(default=1)
    question = models.CharField(max_length=64, blank=True, default="", help_text="Likert question name.")
    answer = models.TextField(help_text="Canonical answer: S1-S2, S2, 4, a JSON ranking, a rewrite.")
    value = models.FloatField(null=True, blank=True, help_text="Numeric value of a rating.")
    is_screening = models.BooleanField(default=False)
    is_correct = models.BooleanField(null=True, blank=True, help_text="Empty when the item has no correct answer.")
    is_valid = models.BooleanField(default=True, help_text="False once the participant is excluded.")
    shown = models.JSONField(default=dict, blank=True, help_text="Exactly what was shown: texts, order, positions.")
    shown_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField()
    seconds = models.FloatField(
        null=True, blank=True, help_text="Client-reported seconds on the item (information only, 0…3600)."
    )
    server_seconds = models.FloatField(
        null=True, blank=True, help_text="Server-measured seconds from serving the item to its answer."
    )
    batch = models.ForeignKey("Batch", on_delete=models.SET_NULL, null=True, blank=True, related_name="responses")
    reservation = models.ForeignKey(
        "Reservation", on_delete=models.SET_NULL, null=True, blank=True, related_name="responses"
    )
    # Writing telemetry of a free-text answer (annotation/services/telemetry.py): counts and durations only, never
    # the keys typed. `db_default`: the hot path's INSERT does not name these columns (it never stores telemetry).
    telemetry = models.JSONField(
        null=True, blank=True,
        help_text="What the page measured while the answer was written (counts and durations), the server's times "
                  "and the consistency check's findings; empty: no telemetry was sent.")
    telemetry_status = models.CharField(
        max_length=12, choices=TelemetryStatus.choices, default=TelemetryStatus.NONE, db_default=TelemetryStatus.NONE,
        help_text="none: no telemetry sent; inconsistent: it contradicts the text or the server's clock.")

    class Meta:
        ordering = ["answered_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "study_item", "question"], name="response_one_per_item",
                condition=models.Q(study_item__isnull=False),
            ),
            models.UniqueConstraint(
                fields=["participant", "screening_question", "batch_number"], name="response_one_per_screening",
                condition=models.Q(screening_question__isnull=False),
            ),
            models.CheckConstraint(
                condition=models.Q(study_item__isnull=False) | models.Q(screening_question__isnull=False),
                name="response_has_target",
            ),
        ]
        indexes = [models.Index(fields=["study", "is_valid", "study_item"])]

    def __str__(self) -> str:
        return f"{self.participant_id} → {self.study_item_id or self.screening_question_id}: {self.answer}"
