"""Corpora in the admin (with upload), their pairs, generation runs and task instances."""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from core.admin import job_link_register, job_message, job_next_step_register
from core.errors import ApplicationError
from core.models import Job
from tasks.forms import CorpusImportForm, GenerateInstancesForm
from tasks.licences import licence_choices
from tasks.models import Corpus, GenerationRun, ParallelPair, StyleComponent, TaskInstance
from tasks.services.leaks import instances_audit
from tasks.services.uploads import corpus_import_start, instances_generate_start


@admin.register(StyleComponent)
class StyleComponentAdmin(admin.ModelAdmin):
    list_display = ["name", "label_1", "label_2", "kind"]
    list_filter = ["kind"]


class CorpusForm(forms.ModelForm):
    licence = forms.ChoiceField(
        required=False, choices=licence_choices,
        help_text="The source data's licence. One that forbids redistribution (GYAFC's) keeps the texts out of every "
                  "export; the ids-only form with its rebuild recipe is offered instead.")

    class Meta:
        model = Corpus
        fields = "__all__"


@admin.register(Corpus)
class CorpusAdmin(admin.ModelAdmin):
    form = CorpusForm
    list_display = ["name", "component", "import_format", "licence", "n_pairs", "n_skipped", "n_instances_total",
                    "pairs_link", "created_at"]
    list_filter = ["component", "import_format"]
    search_fields = ["name", "source"]
    readonly_fields = ["import_format", "import_params", "n_pairs", "n_rows_read", "n_skipped", "n_instances",
                       "created_at", "leak_audit"]
    actions = ["generate_instances"]
    change_list_template = "admin/tasks/corpus_change_list.html"

    @admin.display(description="instances")
    def n_instances_total(self, obj: Corpus) -> int:
        return obj.instances.count()

    @admin.display(description="leak audit")
    def leak_audit(self, obj: Corpus) -> str:
        """Surface features that decide the corpus's instances (tasks.services.leaks), shown before a study uses
        them."""
        if obj.pk is None or not obj.instances.exists():
            return "no instances yet: generate instances, then this page audits them for leaks"
        report = instances_audit(corpus=obj)
        rows = format_html_join(
            "", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            ((f["feature"], f"{f['decided']} / {f['instances']}", f"{f['accuracy']:.3f}", f"{f['pvalue']:.1e}",
              "LEAK" if f["leak"] else "ok") for f in report["features"]),
        )
        warnings = format_html_join("", '<li class="leak-warning"><strong>Warning:</strong> {}</li>',
                                    ((w,) for w in report["warnings"]))
        warnings += format_html_join("", '<li class="leak-note">Note: {}</li>', ((n,) for n in report["notes"]))
        verdict = "Leaks found" if report["leaks"] else "No surface feature decides the instances (passed)"
        return format_html(
            '<div class="leak-audit"><p><strong>{}</strong></p><ul>{}</ul><table><tr><th>feature</th>'
            "<th>decided</th><th>accuracy</th><th>p</th><th></th></tr>{}</table></div>",
            verdict, warnings, rows,
        )

    @admin.display(description="pairs")
    def pairs_link(self, obj: Corpus) -> str:
        url = reverse("admin:tasks_parallelpair_changelist") + f"?corpus__id__exact={obj.pk}"
        return format_html('<a href="{}">browse {} pairs</a>', url, obj.n_pairs)

    def get_urls(self):
        return [path("import/", self.admin_site.admin_view(self.import_view), name="tasks_corpus_import"),
                path("<int:pk>/generate/", self.admin_site.admin_view(self.generate_view),
                     name="tasks_corpus_generate"),
                *super().get_urls()]

    def generate_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The "Generate instances" action for one corpus, as a page of its own: the next step a corpus import's
        job page links to."""
        if not self.has_change_permission(request):
            raise PermissionDenied("You need the permission to change corpora.")
        response = self.generate_instances(request, Corpus.objects.filter(pk=pk))
        return response or HttpResponseRedirect(reverse("admin:tasks_corpus_changelist"))

    def import_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied("You need the permission to add corpora.")
        form = CorpusImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                job = corpus_import_start(
                    name=data["name"], component=data["component"].name if data["component"] else None,
                    import_format=data["import_format"], files=data["files"], seed=data["seed"],
                    min_edit_distance=data["min_edit_distance"], detokenize=data.get("detokenize"),
                    replace=data["replace"], source=data["source"],
                    licence=data["licence"], attribution=data["attribution"], language=data["language"] or "en",
                    created_by=request.user.get_username(),
                )
            except ApplicationError as exc:
                form.add_error(None, exc.message)
            else:
                messages.info(request, job_message(f"Import of '{data['name']}' queued as", job))
                return HttpResponseRedirect(reverse("admin:core_job_change", args=[job.pk]))
        context = {**self.admin_site.each_context(request), "form": form, "title": "Import a corpus",
                   "opts": self.model._meta}
        return TemplateResponse(request, "admin/tasks/corpus_import.html", context)

    @admin.action(description="Generate instances for the selected corpora", permissions=["change"])
    def generate_instances(self, request: HttpRequest, queryset: QuerySet[Corpus]) -> HttpResponse | None:
        form = GenerateInstancesForm(request.POST if "apply" in request.POST else None)
        if "apply" in request.POST and form.is_valid():
            for corpus in queryset:
                try:
                    job = instances_generate_start(corpus=corpus, created_by=request.user.get_username(),
                                                     **form.cleaned_data)
                except ApplicationError as exc:
                    self.message_user(request, f"{corpus.name}: {exc.message}", messages.ERROR)
                else:
                    self.message_user(request, job_message(f"{corpus.name}: generation queued as", job))
            return None
        context = {**self.admin_site.each_context(request), "form": form, "corpora": queryset,
                   "title": "Generate instances", "opts": self.model._meta,
                   "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME}
        return TemplateResponse(request, "admin/tasks/generate_instances.html", context)


@admin.register(ParallelPair)
class ParallelPairAdmin(admin.ModelAdmin):
    list_display = ["source_id", "corpus", "text_1", "text_2"]
    list_filter = ["corpus"]
    search_fields = ["text_1", "text_2", "source_id"]
    list_select_related = ["corpus"]
    readonly_fields = ["corpus", "position"]


@admin.register(GenerationRun)
class GenerationRunAdmin(admin.ModelAdmin):
    list_display = ["id", "corpus", "setup", "seed", "count", "n_instances", "created_at"]
    list_filter = ["setup", "corpus"]
    readonly_fields = [f.name for f in GenerationRun._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(TaskInstance)
class TaskInstanceAdmin(admin.ModelAdmin):
    list_display = ["stel_id", "setup", "component", "corpus", "status", "correct_order", "published_votes"]
    list_filter = ["component", "setup", "status", "corpus"]
    search_fields = ["stel_id", "anchor_1", "anchor_2", "sentence_1", "sentence_2"]
    list_select_related = ["component", "corpus"]
    readonly_fields = ["generation_run", "anchor_pair", "sentence_pair", "family", "created_at"]


def _corpus_link(name: object) -> tuple[str, str] | None:
    """How a job page links the corpus it names (core/admin/jobs.py, JOB_LINKS)."""
    corpus = Corpus.objects.filter(name=str(name)).only("pk", "name").first()
    return None if corpus is None else (reverse("admin:tasks_corpus_change", args=[corpus.pk]), corpus.name)


def _corpus_by_id(pk: object) -> tuple[str, str] | None:
    corpus = Corpus.objects.filter(pk=int(str(pk))).only("pk", "name").first()
    return None if corpus is None else (reverse("admin:tasks_corpus_change", args=[corpus.pk]), corpus.name)


def _generation_run_link(pk: object) -> tuple[str, str] | None:
    run = GenerationRun.objects.filter(pk=int(str(pk))).select_related("corpus").first()
    return None if run is None else (reverse("admin:tasks_generationrun_change", args=[run.pk]), str(run))


def _after_import(job: Job) -> tuple[str, str] | None:
    """A corpus import is followed by generating its task instances."""
    corpus = Corpus.objects.filter(pk=int(job.result["corpus_id"])).only("pk", "name").first()
    if corpus is None:
        return None
    return reverse("admin:tasks_corpus_generate", args=[corpus.pk]), f"Next: generate instances for {corpus.name}"


job_link_register("corpus", _corpus_link)
job_link_register("corpus_id", _corpus_by_id)
job_link_register("generation_run_id", _generation_run_link)
job_next_step_register("corpus_import", _after_import)
