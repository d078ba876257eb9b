"""Agreement runs and filter runs."""
from __future__ import annotations

from django.db import models

from .records import ComputationRecord

__all__ = ["AgreementRun", "FilterRun"]


class AgreementRun(ComputationRecord):
    """One computation of every agreement statistic of a study; filled in by a Celery task.

    `result` holds the summary (overall, per component, per setup, per participant, triple vs quadruple,
    irregular data); the per-instance table (votes, majority, borderline) is written to `items_path` as
    Parquet, because 200,000 rows do not belong in a JSON column.
    """

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="agreement_runs")
    question = models.CharField(max_length=64, blank=True, default="", help_text="Likert question; empty = all.")
    level = models.CharField(max_length=10, blank=True, default="", help_text="nominal/ordinal/interval/ratio.")
    component = models.CharField(max_length=64, blank=True, default="", help_text="Restrict to one component.")
    params = models.JSONField(default=dict, blank=True, help_text="k, m, seed, bootstrap resamples.")
    job = models.ForeignKey("core.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    result = models.JSONField(default=dict, blank=True)
    items_path = models.CharField(max_length=500, blank=True, default="")

    def __str__(self) -> str:
        return f"agreement #{self.pk} {self.study}"


class FilterRun(models.Model):
    """An immutable record of one filter decision over a study: parameters, counts, statistics, seed, date."""

    study = models.ForeignKey("annotation.Study", on_delete=models.PROTECT, related_name="filter_runs")
    min_correct = models.PositiveSmallIntegerField()
    annotators_per_item = models.PositiveSmallIntegerField()
    balance = models.BooleanField(default=False)
    seed = models.BigIntegerField(null=True, blank=True)
    method = models.CharField(max_length=20, default="majority", help_text="majority, dawid-skene or mace.")
    counts_before = models.JSONField(default=dict, help_text="Per component: complete, incomplete, candidates.")
    counts_after = models.JSONField(default=dict, help_text="Per component: validated, rejected, balanced away.")
    statistics = models.JSONField(default=dict, help_text="Fleiss' kappa, Krippendorff's alpha, accuracy.")
    n_validated = models.PositiveIntegerField(default=0)
    n_rejected = models.PositiveIntegerField(default=0)
    n_incomplete = models.PositiveIntegerField(default=0)
    n_balanced_away = models.PositiveIntegerField(default=0)
    job = models.OneToOneField(
        "core.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text="The background job that made it (one run per job, so a redelivered task does not repeat it).",
    )
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"filter #{self.pk} {self.study} ({self.n_validated} validated)"

    def save(self, *args: object, **kwargs: object) -> None:
        # A filter run is evidence of what was decided: never rewritten once stored.
        if self.pk is not None and FilterRun.objects.filter(pk=self.pk).exists():
            raise ValueError("a FilterRun is immutable once stored")
        super().save(*args, **kwargs)
