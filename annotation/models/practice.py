"""Practice items: worked examples a participant answers before the first batch, with feedback (STEL's intro
questions; POTATO's training phase). Their answers live in their own table and are never counted as responses."""
from __future__ import annotations

from django.db import models


class PracticeItem(models.Model):
    """One practice item of a study (ordering kinds): the texts, the correct answer and why it is correct."""

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="practice_items")
    position = models.PositiveIntegerField(default=0)
    anchor_1 = models.TextField()
    anchor_2 = models.TextField(blank=True, default="", help_text="Shown only in the quadruple setup.")
    sentence_1 = models.TextField()
    sentence_2 = models.TextField()
    correct_answer = models.CharField(max_length=8, help_text="S1-S2 / S2-S1 (quadruple) or S1 / S2 (triple kinds).")
    explanation = models.TextField(blank=True, default="", help_text="Feedback shown after the participant answers.")

    class Meta:
        ordering = ["study", "position"]
        constraints = [models.UniqueConstraint(fields=["study", "position"], name="practice_item_unique_position")]

    def __str__(self) -> str:
        return f"{self.study_id}:practice-{self.position}"


class PracticeAnswer(models.Model):
    """A participant's answer to a practice item: one per participant and item, so each is shown once."""

    participant = models.ForeignKey("annotation.Participant", on_delete=models.CASCADE,
                                    related_name="practice_answers")
    item = models.ForeignKey(PracticeItem, on_delete=models.CASCADE, related_name="answers")
    answer = models.CharField(max_length=8)
    is_correct = models.BooleanField()
    answered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["participant", "item"], name="practice_answer_once")]
