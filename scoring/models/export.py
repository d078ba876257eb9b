"""Benchmark exports (a data file or a Hugging Face folder, its dataset card and Croissant metadata, a version) and
their publications to a dataset hub."""
from __future__ import annotations

from django.db import models

__all__ = ["BenchmarkExport", "BenchmarkPublication"]


class BenchmarkExport(models.Model):
    """A written benchmark (STEL TSV, JSONL, Parquet, or a Hugging Face folder), its card and its version."""

    class Format(models.TextChoices):
        # The database's copy of the names of scoring.export.formats.EXPORT_FORMATS (the registry, where a format is
        # added); tests/scoring/test_export.py fails when the two differ.
        STEL_TSV = "stel-tsv", "STEL TSV"
        JSONL = "jsonl", "JSON lines"
        PARQUET = "parquet", "Parquet"
        HUB = "hub", "Hugging Face folder"

    path = models.CharField(max_length=500, help_text="Absolute path of the written data file (hub: the folder).")
    format = models.CharField(max_length=10, choices=Format.choices)
    card_path = models.CharField(max_length=500, blank=True, default="", help_text="Dataset card (JSON).")
    name = models.CharField(max_length=150, blank=True, default="", db_index=True,
                            help_text="The benchmark's name: versions are counted per name.")
    version = models.CharField(max_length=32, blank=True, default="", help_text="MAJOR.MINOR.PATCH.")
    changelog = models.JSONField(default=dict, blank=True,
                                 help_text="Against the previous version: instances added, dropped, relabelled.")
    manifest = models.JSONField(default=dict, blank=True,
                                help_text="Per row key (corpus/id): [correct alternative, votes]; what versions "
                                          "compare.")
    ids_only = models.BooleanField(default=False, help_text="Instance ids without the texts (licences forbid them).")
    licences = models.JSONField(default=list, blank=True, help_text="The source corpora's licence identifiers.")
    files = models.JSONField(default=list, blank=True,
                             help_text="Every data file: path (relative), sha256, bytes, rows, config, split.")
    params = models.JSONField(default=dict, blank=True, help_text="corpus/component/setup/status/study filters.")
    counts = models.JSONField(default=dict, blank=True, help_text="Rows in total and per component.")
    n_rows = models.PositiveIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True, default="",
                              help_text="Of the data file; of a folder, of its files' sha256sum listing.")
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
        label = f"{self.name} {self.version}".strip()
        return f"{self.format} export #{self.pk}" + (f" {label}" if label else "") + f" ({self.n_rows} rows)"


class BenchmarkPublication(models.Model):
    """One upload of a hub export to a dataset hub: the row is stored before the upload, its outcome after."""

    class State(models.TextChoices):
        SENDING = "sending", "sending"
        DONE = "done", "published"
        FAILED = "failed", "failed (nothing published)"
        UNKNOWN = "unknown", "outcome unknown (check the repository)"

    export = models.ForeignKey(BenchmarkExport, on_delete=models.PROTECT, related_name="publications")
    hub = models.CharField(max_length=20, default="huggingface")
    repo = models.CharField(max_length=200, help_text="ORG/NAME of the dataset repository.")
    endpoint = models.CharField(max_length=300, help_text="The hub's address the upload went to.")
    private = models.BooleanField(default=False)
    state = models.CharField(max_length=10, choices=State.choices, default=State.SENDING)
    commit_url = models.CharField(max_length=500, blank=True, default="")
    commit_oid = models.CharField(max_length=64, blank=True, default="")
    error = models.TextField(blank=True, default="")
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.repo} ← export #{self.export_id} ({self.state})"
