"""Writing signals of rewrites: per rewrite and signal, the measured score, the threshold it was compared with,
whether it flags the rewrite and the evidence in plain words. Computed by `annotation/services/writing_signals/`;
the thresholds and the researcher's auto-reject rule live on `RewriteSettings`."""
from __future__ import annotations

from django.db import models


class Signal(models.TextChoices):
    """The signals, labelled in the neutral words reviewers, decisions and dataset cards use."""

    TELEMETRY_INCONSISTENT = "telemetry_inconsistent", "telemetry inconsistent with the text or the server's clock"
    MOSTLY_PASTED = "mostly_pasted", "most of the text pasted from outside the page"
    TYPING_SPEED = "typing_speed", "typed faster than people sustain"
    FOCUS_LOSS_INSERT = "focus_loss_insert", "a long time away from the page, then a large insertion"
    NEAR_DUPLICATE = "near_duplicate", "nearly the same as another writer's rewrite of this source"
    LLM_LIKENESS = "llm_likeness", "text a language model finds unusually predictable"
    MODEL_SIMILARITY = "model_similarity", "nearly the same as a model's own rewrite of this source"


class WritingSignal(models.Model):
    """One signal measured on one rewrite. Recomputing a study replaces its rows (thresholds may have changed)."""

    response = models.ForeignKey("annotation.Response", on_delete=models.CASCADE, related_name="writing_signals")
    signal = models.CharField(max_length=32, choices=Signal.choices)
    score = models.FloatField(
        null=True, blank=True,
        help_text="The measured value, in the signal's unit (see the evidence); empty where the signal could not be "
                  "measured on this rewrite (the evidence says why, e.g. the model gave no rewrite of its source).")
    threshold = models.FloatField(help_text="The threshold the score was compared with when computed.")
    flagged = models.BooleanField(default=False)
    evidence = models.CharField(max_length=500, help_text="The measurement in plain words.")
    details = models.JSONField(default=dict, blank=True, help_text="The numbers behind the evidence.")
    computed_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["response", "signal"], name="writing_signal_once")]
        indexes = [models.Index(fields=["signal", "flagged"])]

    def __str__(self) -> str:
        score = "not measured" if self.score is None else f"{self.score:g}"
        return f"{self.response_id}: {self.signal} {score}{' (flagged)' if self.flagged else ''}"
