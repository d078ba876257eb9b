"""What every computation record shares (agreement runs, metric evaluations, score runs): who asked, when,
and when a worker finished it. The admin side is `scoring.admin.records.ComputationRecordAdmin`."""
from __future__ import annotations

from django.db import models

__all__: list[str] = []


class ComputationRecord(models.Model):
    """Abstract: a record a background job fills in; `computed_at` stays empty until it has."""

    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    computed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at"]

    @property
    def is_computed(self) -> bool:
        return self.computed_at is not None
