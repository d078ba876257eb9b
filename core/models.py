from django.conf import settings
from django.db import models


class Job(models.Model):
    """The status row of one background computation (a Celery task), polled by the admin."""

    class Status(models.TextChoices):
        CREATED = "created", "created"
        RUNNING = "running", "running"
        DONE = "done", "done"
        # Finished, but something it did has an outcome a person must check (a pay call whose answer was lost): the
        # result's "attention" says what and where it is resolved. As final as done: never run again.
        ATTENTION = "attention", "needs attention"
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
    unsent_since = models.DateTimeField(
        null=True, blank=True, help_text="Set while its message could not be queued (the broker unreachable): the "
                                         "job waits and the reaper sends it when the broker is back.")
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def percent(self) -> float:
        if not self.progress_total:
            return 100.0 if self.status in (self.Status.DONE, self.Status.ATTENTION) else 0.0
        return round(100.0 * self.progress_done / self.progress_total, 1)


# The states a job ends in: it never runs again (a redelivered message finds it finished, the reaper leaves it).
FINISHED = (Job.Status.DONE, Job.Status.ATTENTION, Job.Status.FAILED)


class PersonalDataAccess(models.Model):
    """One look at personal data by a person (raw platform ids, persona answers, telemetry detail): the admin page,
    API body, export or command that showed it, to whom, when, and about how many people. Admins read the log in the
    admin; nothing here holds the personal data itself."""

    class Door(models.TextChoices):
        ADMIN = "admin", "admin"
        API = "api", "API"
        CLI = "cli", "command line"
        EXPORT = "export", "export"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                             related_name="+")
    username = models.CharField(max_length=150, blank=True, default="", help_text="Kept when the account is deleted.")
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    door = models.CharField(max_length=10, choices=Door.choices)
    what = models.CharField(max_length=300, help_text="What was shown, e.g. 'participants of study demo (raw ids)'.")
    study_slug = models.CharField(max_length=80, blank=True, default="", db_index=True)
    people = models.PositiveIntegerField(default=0, help_text="How many people's personal data was shown.")

    class Meta:
        ordering = ["-at"]
        verbose_name = "personal-data access"
        verbose_name_plural = "personal-data access log"
        permissions = [("view_personal_data",
                        "Can see personal data (raw platform ids, persona answers, telemetry detail)")]

    def __str__(self) -> str:
        return f"{self.username or '-'} {self.door}: {self.what} ({self.people})"


class ErasureTombstone(models.Model):
    """What remains of a person whose data was erased on request: their keyed pseudonym (never the raw id), when,
    and how many rows went from which table. A later import, platform sync or webhook about the same person is
    recognised by the pseudonym: imports are refused, platform records store only the pseudonym. Runs and exports
    made before `erased_at` on a study in `study_ids` are shown as computed before the erasure."""

    person_key = models.CharField(max_length=64, db_index=True, help_text="The person's keyed pseudonym.")
    platform = models.CharField(max_length=16)
    erased_at = models.DateTimeField(db_index=True)
    requested_by = models.CharField(max_length=150, blank=True, default="")
    reason = models.CharField(max_length=300, blank=True, default="")
    counts = models.JSONField(default=dict, blank=True, help_text="Rows erased or pseudonymised, by table.")
    study_ids = models.JSONField(default=list, blank=True, help_text="The studies that held the person's data.")

    class Meta:
        ordering = ["-erased_at"]

    def __str__(self) -> str:
        return f"erasure {self.person_key} ({self.erased_at:%Y-%m-%d})"
