"""Model annotators: a language model answering a study's items beside the crowd.

Its answers live in their own table (`ModelAnswer`), never in `annotation.Response`, and the model is never a
`Participant`: everything that counts people (k, slots, screening, the human majority, agreement, the filter,
exports, participant decisions and payments) reads only those, so a model answer cannot be counted there even by
a query that forgets a filter. The model is compared with the crowd by `scoring.model_annotators.comparison`.
"""
from __future__ import annotations

from django.db import models

from core.model_backends import ReplyStatus

from .records import ComputationRecord

__all__ = ["ModelAnswer", "ModelReplyCache", "ModelRun"]


class ModelRun(ComputationRecord):
    """One model annotating one study: which back-end and model, how, and what it cost."""

    class Backend(models.TextChoices):
        OPENAI = "openai", "OpenAI-compatible chat endpoint"
        LOCAL = "local", "local causal language model (log-likelihood of each choice)"

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="+")
    label = models.CharField(max_length=120, help_text="The annotator's name on the dashboard and in the card.")
    backend = models.CharField(max_length=16, choices=Backend.choices)
    model = models.CharField(max_length=500, help_text="The endpoint's model name, or the local model directory.")
    base_url = models.CharField(max_length=500, blank=True, default="", help_text="OpenAI-compatible base URL.")
    options = models.JSONField(default=dict, blank=True, help_text="Time-out, retries, back-off, concurrency, "
                                                                   "structured output, device, prices.")
    stop_requested = models.BooleanField(default=False, help_text="Set by the stop button: no new question is "
                                                                  "sent; answers already in are kept.")
    stopped = models.BooleanField(default=False, help_text="The run ended because it was stopped.")
    n_items = models.PositiveIntegerField(default=0)
    n_asks = models.PositiveIntegerField(default=0, help_text="Questions to ask: items × questions × orders.")
    n_answered = models.PositiveIntegerField(default=0)
    n_no_answer = models.PositiveIntegerField(default=0)
    requests = models.PositiveIntegerField(default=0, help_text="HTTP requests sent (retries included).")
    cache_hits = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0, help_text="Tokens sent (cache hits cost none).")
    completion_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0,
                               help_text="Estimated from the prices given with the run (per 1,000 tokens).")
    summary = models.JSONField(default=dict, blank=True, help_text="Accuracy, order sensitivity, counts by status.")
    job = models.OneToOneField("core.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta(ComputationRecord.Meta):
        constraints = [
            models.CheckConstraint(condition=models.Q(backend__in=["openai", "local"]), name="modelrun_backend"),
        ]

    def __str__(self) -> str:
        return f"model run #{self.pk} ({self.label} on {self.study_id})"


class ModelAnswer(models.Model):
    """One model's answer to one item (one Likert question of it) in one order of display."""

    run = models.ForeignKey(ModelRun, on_delete=models.CASCADE, related_name="answers")
    # related_name="+": an item's `responses` are people's only; nothing reaches model answers from an item.
    study_item = models.ForeignKey("annotation.StudyItem", on_delete=models.CASCADE, related_name="+")
    question = models.CharField(max_length=64, blank=True, default="", help_text="Likert question name.")
    order = models.CharField(max_length=32, help_text="Which display order was asked, e.g. s21-a12.")
    shown = models.JSONField(default=dict, blank=True, help_text="The item as displayed to the model.")
    displayed_answer = models.CharField(max_length=500, blank=True, default="")
    option_index = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Where the chosen answer was listed (0 = first): position bias.")
    answer = models.TextField(blank=True, default="", help_text="Canonical answer (as a Response stores it); "
                                                                 "empty when the model gave none.")
    value = models.FloatField(null=True, blank=True, help_text="Numeric value of a rating.")
    status = models.CharField(max_length=20, choices=[(s, s) for s in ReplyStatus.ALL])
    is_correct = models.BooleanField(null=True, blank=True)
    from_cache = models.BooleanField(default=False)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    requests = models.PositiveSmallIntegerField(default=0)
    scores = models.JSONField(default=dict, blank=True, help_text="Log-likelihood per choice (local models).")
    raw = models.TextField(blank=True, default="")
    error = models.CharField(max_length=500, blank=True, default="")
    cache_key = models.CharField(max_length=64)
    answered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "study_item", "question", "order"]
        constraints = [
            models.UniqueConstraint(fields=["run", "study_item", "question", "order"], name="modelanswer_once"),
            models.CheckConstraint(
                condition=models.Q(answer="") | models.Q(status__in=["answered", "answered_on_retry"]),
                name="modelanswer_answer_needs_status"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} item {self.study_item_id} {self.order}: {self.answer or self.status}"


class ModelReplyCache(models.Model):
    """A reply kept by (back-end, model, prompt): asking the same question of the same model again costs nothing."""

    key = models.CharField(max_length=64, unique=True)
    backend = models.CharField(max_length=16)
    model = models.CharField(max_length=500)
    reply = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.backend}:{self.model[-40:]} {self.key[:12]}"
