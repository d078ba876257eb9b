"""Model scoring runs on STEL benchmarks (score_stel): which files, which methods, and what came out."""
from __future__ import annotations

from django.db import models

from .records import ComputationRecord

__all__ = ["ScoreRun"]


class ScoreRun(ComputationRecord):
    """One scoring of style-similarity methods on a benchmark (STEL §5), run by a Celery task on the `gpu` queue.

    `results` holds exactly what `manage.py score_stel --json` prints (accuracy per set, method and component,
    share undecided, McNemar comparisons, seconds per method); the per-instance predictions are a TSV file at
    `predictions_path`, because they are one row per instance and method.
    """

    class Device(models.TextChoices):
        AUTO = "auto", "auto (CUDA when the worker has it)"
        CPU = "cpu", "cpu"
        CUDA = "cuda", "cuda"

    export = models.ForeignKey(
        "scoring.BenchmarkExport", on_delete=models.SET_NULL, null=True, blank=True, related_name="score_runs",
        help_text="The exported benchmark scored (its file is the validated set), if it came from an export.",
    )
    benchmark_paths = models.JSONField(default=list, help_text="Server-side STEL TSVs: the (validated) set.")
    full_paths = models.JSONField(default=list, blank=True, help_text="Server-side STEL TSVs: the unfiltered set.")
    methods = models.JSONField(default=list, help_text="Method specs, e.g. char3gram, st:minilm, hf:/models/bert.")
    compare = models.JSONField(default=list, blank=True, help_text="Methods compared with McNemar's test.")
    seed = models.PositiveIntegerField(default=0, help_text="Seed of the random predictions for ties.")
    device = models.CharField(max_length=8, choices=Device.choices, default=Device.AUTO)
    predictions_path = models.CharField(max_length=500, blank=True, default="")
    results = models.JSONField(default=dict, blank=True)
    job = models.OneToOneField(
        "core.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text="The background job computing it (one run per job, so a redelivered task does not repeat it).",
    )

    class Meta(ComputationRecord.Meta):
        constraints = [
            models.CheckConstraint(condition=models.Q(device__in=["auto", "cpu", "cuda"]), name="scorerun_device"),
        ]

    def __str__(self) -> str:
        return f"score run #{self.pk} ({', '.join(self.methods)})"
