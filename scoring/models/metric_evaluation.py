"""Meta-evaluations of automatic metrics against human Likert ratings (evaluate_metrics)."""
from __future__ import annotations

from django.db import models

from .records import ComputationRecord

__all__ = ["MetricEvaluation"]


class MetricEvaluation(ComputationRecord):
    """One run of `evaluate_metrics`: metrics scored on a Likert study's items and correlated with the mean
    human rating of one question. `results` holds the per-metric correlations (overall, per style, system
    level) and the per-item scores the plots are drawn from; it stays empty until the job has finished."""

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="metric_evaluations")
    question = models.CharField(max_length=64, help_text="Likert question whose mean rating is the human score.")
    metrics = models.JSONField(default=list, help_text='Metric names, e.g. ["bleu", "chrf", "logprob"].')
    by_style = models.BooleanField(default=False, help_text="Also correlate per target style.")
    params = models.JSONField(default=dict, blank=True, help_text="Per-metric options: model paths, layers, device.")
    results = models.JSONField(default=dict, blank=True)
    job = models.ForeignKey("core.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    def __str__(self) -> str:
        return f"metric evaluation #{self.pk} ({self.study.slug}, {self.question})"
