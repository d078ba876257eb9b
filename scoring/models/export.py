"""Benchmark exports: a written data file (STEL TSV, JSONL or Parquet) and its dataset card."""
from __future__ import annotations

from django.db import models

__all__ = ["BenchmarkExport"]


class BenchmarkExport(models.Model):
    """A written benchmark file (STEL TSV, JSONL or Parquet) and its dataset card."""

    class Format(models.TextChoices):
        STEL_TSV = "stel-tsv", "STEL TSV"
        JSONL = "jsonl", "JSON lines"
        PARQUET = "parquet", "Parquet"

    path = models.CharField(max_length=500, help_text="Absolute path of the written data file.")
    format = models.CharField(max_length=10, choices=Format.choices)
    card_path = models.CharField(max_length=500, blank=True, default="", help_text="Dataset card (JSON).")
    params = models.JSONField(default=dict, blank=True, help_text="corpus/component/setup/status/study filters.")
    counts = models.JSONField(default=dict, blank=True, help_text="Rows in total and per component.")
    n_rows = models.PositiveIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True, default="")
    study = models.ForeignKey(
        "annotation.Study", on_delete=models.SET_NULL, null=True, blank=True, related_name="benchmark_exports"
    )
    filter_run = models.ForeignKey("scoring.FilterRun", on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.format} export #{self.pk} ({self.n_rows} rows)"  # never the server path
