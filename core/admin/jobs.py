"""Background jobs in the admin: each job's page written for people, and the helpers other apps' admins use to link
to a job, show one waiting, and register what a job's page shows and links (core imports no app)."""
from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from django.contrib import admin
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html, format_html_join

from core.job_waiting import job_waiting
from core.models import Job


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


# result key → (admin URL name, label) of the record a job made
MADE = {
    "corpus_id": ("admin:tasks_corpus_change", "corpus"),
    "generation_run_id": ("admin:tasks_generationrun_change", "generation run"),
    "agreement_run": ("admin:scoring_agreement_dashboard", "agreement dashboard"),
    "filter_run": ("admin:scoring_filterrun_change", "filter run"),
    "export": ("admin:scoring_benchmarkexport_change", "export"),
    "score_run": ("admin:scoring_scorerun_change", "score run"),
    "evaluation": ("admin:scoring_metricevaluation_change", "metric evaluation"),
    "study_id": ("admin:annotation_study_overview", "study"),
}


# job kind → what its page shows under the fields once it is done (e.g. an export's card and downloads). Apps register
# here (core imports no app); the function gets the job and the user, and returns HTML or None.
JOB_PANELS: dict[str, Callable[..., Any]] = {}


def job_panel_register(kind: str, panel: Callable[..., Any]) -> None:
    JOB_PANELS[kind] = panel


# parameter or result key → a function of its value returning (admin URL, label) or None: how a job page links what
# it names (a study slug to the study, a corpus name to the corpus). Apps register here, as for JOB_PANELS.
JOB_LINKS: dict[str, Callable[[Any], tuple[str, str] | None]] = {}


def job_link_register(key: str, link: Callable[[Any], tuple[str, str] | None]) -> None:
    JOB_LINKS[key] = link


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
    link = JOB_LINKS.get(key)
    if link is not None and value not in (None, "", [], {}):
        try:
            target = link(value)
        except (NoReverseMatch, ValueError, TypeError):
            target = None
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

    list_display = ["id", "what", "status", "progress_bar", "created_by", "created_at", "finished_at"]
    list_display_links = ["id", "what"]
    list_filter = ["kind", "status"]
    fields = ["what", "status", "progress", "made", "error", "message", "inputs", "outcome", "runs_on",
              "created_by", "created_at", "started_at", "finished_at", "attempts"]
    readonly_fields = fields
    change_form_template = "admin/job_polling_change_form.html"

    @admin.display(description="job", ordering="kind")
    def what(self, obj: Job) -> str:
        return job_kind_label(obj.kind)

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
        return job_values_html(obj.result, hidden=frozenset(MADE) | {"id"})

    @admin.display(description="runs on")
    def runs_on(self, obj: Job) -> str:
        queue = obj.queue or (obj.params or {}).get("queue") or "default"
        return f"the {queue} queue" + (" (a worker with the model's hardware)" if queue == "gpu" else "")

    @admin.display(description="made")
    def made(self, obj: Job) -> str:
        """Links to what the job made, by the keys its result names (URL names only: core imports no app)."""
        links = []
        made = {**MADE, "id": ("admin:scoring_scorerun_change", "score run")} if obj.kind == "score_stel" else MADE
        for key, (url_name, label) in made.items():
            value = (obj.result or {}).get(key)
            if isinstance(value, int):
                try:
                    links.append((reverse(url_name, args=[value]), f"{label} #{value}"))
                except NoReverseMatch:
                    continue
        if not links:
            return "–"
        return format_html_join(" · ", '<a href="{}">{}</a>', links)

    def change_view(self, request, object_id, form_url="", extra_context=None):  # noqa: ANN001, ANN201
        job = Job.objects.filter(pk=object_id).first() if str(object_id).isdigit() else None
        panel = JOB_PANELS.get(job.kind) if job is not None and job.status == Job.Status.DONE else None
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
