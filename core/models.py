from django.db import models


class Job(models.Model):
    """The status row of one background computation (a Celery task), polled by the admin."""

    class Status(models.TextChoices):
        CREATED = "created", "created"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    kind = models.CharField(max_length=64, db_index=True, help_text="What runs, e.g. corpus_import.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.CREATED, db_index=True)
    params = models.JSONField(default=dict, blank=True, help_text="The arguments the task was started with.")
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    message = models.CharField(max_length=300, blank=True, default="")
    error = models.TextField(blank=True, default="")
    result = models.JSONField(default=dict, blank=True)
    celery_task_id = models.CharField(max_length=64, blank=True, default="")
    attempts = models.PositiveIntegerField(default=0, help_text="Deliveries that started the work.")
    heartbeat_at = models.DateTimeField(null=True, blank=True,
                                        help_text="Last sign of life of the worker running it (while running).")
    task_name = models.CharField(max_length=200, blank=True, default="", help_text="The Celery task it runs.")
    task_args = models.JSONField(default=list, blank=True, help_text="The task's arguments after the job id.")
    queue = models.CharField(max_length=32, blank=True, default="")
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"

    @property
    def percent(self) -> float:
        if not self.progress_total:
            return 100.0 if self.status == self.Status.DONE else 0.0
        return round(100.0 * self.progress_done / self.progress_total, 1)
