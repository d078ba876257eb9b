"""Background jobs in the admin: each job's page written for people, and the helpers other apps' admins use to link
to a job, show one waiting, and register what a job's page shows and links (core imports no app)."""
from pathlib import PurePath
from typing import Any

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from core.job_links import (
    JOB_LINKS,
    JOB_NEXT_STEPS,
    JOB_PANELS,
    MADE,
    job_attention,
    job_link_register,
    job_made,
    job_next_step,
    job_next_step_register,
    job_panel_register,
    link_for,
)
from core.job_waiting import job_waiting
from core.models import Job

__all__ = ["JOB_LINKS", "JOB_NEXT_STEPS", "JOB_PANELS", "JobAdmin", "job_kind_label", "job_link_register",
           "job_message", "job_next_step_register", "job_panel_register", "job_values_html", "job_waiting_html"]


def job_waiting_html(job: Job | None) -> str:
    """The notice of a job no worker has taken yet (core/job_waiting.py); an empty, hidden one otherwise, which
    core/static/core/job_poll.js fills in when the poll says the job waits."""
    waiting = job_waiting(job) if job is not None else None
    if waiting is None:
        return format_html('<p class="job-waiting errornote" hidden></p>')
    return format_html('<p class="job-waiting errornote">{}</p>', waiting["text"])


def job_message(prefix: str, job: Job) -> str:
    """A message that links to the job's page (progress, result, and what it made)."""
    return format_html('{} <a href="{}">job #{}</a>.', prefix, reverse("admin:core_job_change", args=[job.pk]),
                       job.pk)


# What each kind of job does, in words (a kind not listed: its name with spaces).
JOB_KIND_LABELS = {
    "corpus_import": "Corpus import", "instances_generate": "Task instance generation",
    "agreement_compute": "Agreement computation", "filter_instances": "Filter (validated / rejected instances)",
    "crowd_aggregation": "Dawid–Skene and MACE aggregation", "benchmark_export": "Benchmark export",
    "score_stel": "Score run (style-similarity methods)", "metric_evaluation": "Metric evaluation",
    "model_annotation": "Model annotation", "writing_signals": "Writing signals of rewrites",
}
# Parameters that only the worker needs (server folders, saved uploads, the queue shown beside the progress).
HIDDEN_PARAMS = frozenset({"paths", "upload_dir", "queue", "files", "benchmark_paths", "full_paths"})
PARAM_LABELS = {"original_names": "files", "min_correct": "m (at least m of k correct)", "ids_only": "ids only",
                "min_edit_distance": "minimum edit distance"}


def job_kind_label(kind: str) -> str:
    return JOB_KIND_LABELS.get(kind) or kind.replace("_", " ").capitalize()


def _is_server_path(value: Any) -> bool:
    return isinstance(value, str) and (value.startswith("/") or value[1:3] == ":\\") and len(value) > 1


def _value_html(key: str, value: Any) -> str:
    """One parameter or result value for people: a link where an app registered one, a file's name instead of its
    server path, yes/no, lists joined, nested tables summarized."""
    target = link_for(key, value)
    if target is not None:
        return format_html('<a href="{}">{}</a>', *target)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or value == "" or value == [] or value == {}:
        return "–"
    if _is_server_path(value):
        return format_html("<code>{}</code>", PurePath(value).name)
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return format_html_join(", ", "{}", ((PurePath(v).name if _is_server_path(v) else v,) for v in value))
    if isinstance(value, dict) and all(not isinstance(v, (dict, list)) for v in value.values()) and len(value) <= 12:
        return format_html_join(", ", "{}: {}", ((k, "yes" if v is True else "no" if v is False else v)
                                                for k, v in value.items()))
    if isinstance(value, (dict, list)):
        return f"{len(value)} entries (on the record the job made)"
    return format_html("{}", value)


def job_values_html(values: dict[str, Any], *, hidden: frozenset[str] = frozenset()) -> str:
    """A job's parameters or result as a table of names and values (see `_value_html`)."""
    rows = [(PARAM_LABELS.get(key, key.replace("_", " ")), _value_html(key, value))
            for key, value in (values or {}).items() if key not in hidden]
    if not rows:
        return "–"
    return format_html('<table class="job-values">{}</table>',
                       format_html_join("", "<tr><th scope=\"row\">{}</th><td>{}</td></tr>", rows))


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    """A job's page, written for people: what it does, for what, its progress (and why it waits, if no worker has
    taken it), what it made, its one-line error; never its Celery id, task arguments or the server's folders."""

    list_display = ["id", "what", "status_shown", "progress_bar", "created_by", "created_at", "finished_at"]
    list_display_links = ["id", "what"]
    list_filter = ["kind", "status"]
    fields = ["what", "status_shown", "attention", "progress", "made", "next_step", "error", "message", "inputs",
              "outcome", "runs_on",
              "created_by", "created_at", "started_at", "finished_at", "attempts"]
    readonly_fields = fields
    change_form_template = "admin/job_polling_change_form.html"

    @admin.display(description="job", ordering="kind")
    def what(self, obj: Job) -> str:
        return job_kind_label(obj.kind)

    @admin.display(description="status", ordering="status")
    def status_shown(self, obj: Job) -> str:
        """The status; "needs attention" in amber, so that a pay call whose outcome is unknown is not read as done."""
        if obj.status == Job.Status.ATTENTION:
            return format_html('<strong class="job-attention">{}</strong>', obj.get_status_display())
        return obj.get_status_display()

    @admin.display(description="needs a person")
    def attention(self, obj: Job) -> str:
        """What to check and where it is resolved (the app's registered link), for a job that ended "attention"."""
        attention = job_attention(obj)
        if attention is None:
            return "–"
        if not attention["url"]:
            return format_html('<p class="job-attention">{}</p>', attention["reason"])
        return format_html('<p class="job-attention">{} <a class="button" href="{}">{}</a></p>', attention["reason"],
                           attention["url"], attention["label"])

    @admin.display(description="next step")
    def next_step(self, obj: Job) -> str:
        step = job_next_step(obj)
        return "–" if step is None else format_html('<a class="button job-next-step" href="{}">{}</a>', step["url"],
                                                    step["label"])

    @admin.display(description="progress")
    def progress_bar(self, obj: Job) -> str:
        return format_html(
            '<progress class="job-progress" data-job="{}" max="100" value="{}"></progress> '
            '<span class="job-percent" data-job="{}">{}%</span>', obj.pk, obj.percent, obj.pk, obj.percent)

    @admin.display(description="progress")
    def progress(self, obj: Job) -> str:
        """The bar the page polls (core/static/core/job_poll.js), and the notice of a job no worker has taken."""
        return format_html(
            '<progress class="job-progress" data-job="{}" max="100" value="{}"></progress> '
            '<span class="job-percent" data-job="{}" data-job-poll="{}" data-job-status="{}">{}% {}</span>{}',
            obj.pk, obj.percent, obj.pk, reverse("job-detail", args=[obj.pk]), obj.status, obj.percent, obj.status,
            job_waiting_html(obj),
        )

    @admin.display(description="for")
    def inputs(self, obj: Job) -> str:
        return job_values_html(obj.params, hidden=HIDDEN_PARAMS)

    @admin.display(description="result")
    def outcome(self, obj: Job) -> str:
        return job_values_html(obj.result, hidden=frozenset(MADE) | {"id", "attention"})

    @admin.display(description="runs on")
    def runs_on(self, obj: Job) -> str:
        queue = obj.queue or (obj.params or {}).get("queue") or "default"
        return f"the {queue} queue" + (" (a worker with the model's hardware)" if queue == "gpu" else "")

    @admin.display(description="made")
    def made(self, obj: Job) -> str:
        """What the job made, by name, linked (the apps' registered links: core imports no app)."""
        made = job_made(obj)
        if not made:
            return "–"
        return format_html_join(" · ", '{} <a href="{}">{}</a>', ((m["what"], m["url"], m["name"]) for m in made))

    def change_view(self, request, object_id, form_url="", extra_context=None):  # noqa: ANN001, ANN201
        job = Job.objects.filter(pk=object_id).first() if str(object_id).isdigit() else None
        panel = JOB_PANELS.get(job.kind) if job is not None and job.status in (
            Job.Status.DONE, Job.Status.ATTENTION) else None
        extra_context = {**(extra_context or {}),
                         "job_panel": panel(job=job, user=request.user) if panel else None}
        if job is not None:
            extra_context["title"] = f"{job_kind_label(job.kind)} · job #{job.pk}"
            extra_context["subtitle"] = job.get_status_display()
        return super().change_view(request, object_id, form_url, extra_context)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # a status row: shown, never edited (the page is "View job", without Save)
