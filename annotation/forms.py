"""The admin's "Create a study" form: the create_study command's options, in plain words."""
from __future__ import annotations

from typing import Any

from django import forms

from annotation.models import ORDERING_KINDS, EntryPlatform, new_study_code
from annotation.models_review import COPY_THRESHOLD_DEFAULT
from annotation.services.writing_signals.registry import thresholds_parse
from tasks.models import Corpus, InstanceStatus, StyleComponent

STATUS_CHOICES = [(InstanceStatus.CANDIDATE, "candidate (not yet annotated)"),
                  (InstanceStatus.VALIDATED, "validated"), ("any", "any status")]


class StudyCreateForm(forms.Form):
    slug = forms.SlugField(max_length=80, help_text="Part of the participant link: /s/<slug>/.")
    title = forms.CharField(max_length=200, required=False)
    kind = forms.ChoiceField(choices=[("ordering", "ordering study (task instances)"),
                                      ("rewrite", "rewrite study (sources rewritten by the crowd, reviewed)")],
                             initial="ordering", required=False)
    setup = forms.ChoiceField(choices=[(k.value, k.label) for k in ORDERING_KINDS], required=False,
                              help_text="Ordering studies: quadruples, triples or style-or-content triples.")
    corpora = forms.ModelMultipleChoiceField(queryset=Corpus.objects.order_by("name"), to_field_name="name",
                                             required=False, help_text="Empty: every corpus.")
    components = forms.ModelMultipleChoiceField(queryset=StyleComponent.objects.order_by("name"),
                                                to_field_name="name", required=False,
                                                help_text="Empty: every style component.")
    instance_status = forms.ChoiceField(choices=STATUS_CHOICES, initial=InstanceStatus.CANDIDATE)
    count = forms.IntegerField(min_value=1, required=False, help_text="Instances drawn at random; empty: all.")
    seed = forms.IntegerField(initial=0, help_text="The same seed draws the same instances.")
    annotators_per_item = forms.IntegerField(min_value=1, max_value=50, initial=5, label="Annotators per item (k)")
    min_correct = forms.IntegerField(min_value=1, required=False, label="Min correct (m)",
                                     help_text="m of k correct validates an instance; empty: a majority.")
    items_per_batch = forms.IntegerField(min_value=1, initial=14)
    screening_per_batch = forms.IntegerField(min_value=0, initial=2, help_text="Screening questions mixed in.")
    max_batches = forms.IntegerField(min_value=1, initial=5, label="Max batches per participant")
    time_limit_minutes = forms.IntegerField(min_value=1, initial=30, label="Batch time limit (minutes)")
    adaptive = forms.BooleanField(required=False, help_text="Stop serving items whose decision cannot change.")
    completion_code = forms.CharField(max_length=64, required=False, initial=new_study_code,
                                      help_text="The code finished participants get (Prolific's completion code).")
    screened_out_code = forms.CharField(
        max_length=64, required=False, initial=new_study_code,
        help_text="The code people screened out get: random and independent of the completion code, so that it "
                  "never earns the full pay (Prolific: a separate completion code with its own action).")
    redirect_url = forms.URLField(required=False, help_text="Where finished participants go, e.g. Prolific's "
                                                            "https://app.prolific.com/submissions/complete?cc=…")
    platform = forms.ChoiceField(choices=EntryPlatform.choices, initial=EntryPlatform.ANY, required=False,
                                 help_text="Accept only this platform's links and check their parameters.")
    prolific_study_id = forms.CharField(max_length=64, required=False, label="Prolific study id",
                                        help_text="The STUDY_ID that Prolific links must carry (24 hex characters).")
    allow_anonymous = forms.NullBooleanField(required=False, label="Allow anonymous links",
                                             help_text="Unknown: allowed only when the platform is 'any'.")
    first_answer_grace_seconds = forms.IntegerField(
        min_value=1, required=False, label="First-answer grace (seconds)",
        help_text="A started batch without a first answer gives its items back after this; empty: the default.")
    max_open_batches = forms.IntegerField(min_value=1, required=False,
                                          help_text="Batches open at once in the study; empty: no cap.")
    min_seconds_per_item = forms.FloatField(min_value=0, max_value=3600, required=False,
                                            help_text="Flag participants faster than this (server-measured).")
    estimated_minutes = forms.IntegerField(min_value=1, initial=10)
    target_hourly_pay = forms.DecimalField(min_value=0, initial=9, decimal_places=2,
                                           help_text="Per hour, in the platform's currency.")

    # Rewrite studies (create_study --kind rewrite): README, "Rewrite studies and their review".
    sources = forms.CharField(widget=forms.Textarea(attrs={"rows": 6, "cols": 80}), required=False,
                              help_text="Rewrite studies: one source a line, or 'id<TAB>text' lines.")
    sources_corpus = forms.ModelChoiceField(queryset=Corpus.objects.order_by("name"), to_field_name="name",
                                            required=False, help_text="… or the sources from one side of a corpus.")
    side = forms.TypedChoiceField(choices=[("", "—"), (1, "side 1"), (2, "side 2")], coerce=int, required=False,
                                  empty_value=None)
    target_style = forms.CharField(max_length=100, required=False, help_text="e.g. formal (built-in examples for "
                                                                             "formal and informal).")
    rewrite_min_length = forms.IntegerField(required=False, min_value=1, initial=10,
                                            label="Rewrite min length (characters)")
    rewrite_max_length = forms.IntegerField(required=False, min_value=1, initial=500,
                                            label="Rewrite max length (characters)")
    copy_threshold = forms.FloatField(required=False, min_value=0, max_value=100, initial=int(COPY_THRESHOLD_DEFAULT),
                                      help_text="Refuse a rewrite this similar (rapidfuzz ratio, 0-100) to its source.")
    persona = forms.CharField(required=False, help_text="Persona questions (PASTEL), comma-separated: gender, age, "
                                                        "ethnicity, country, education, political_orientation.")
    filter_questions = forms.BooleanField(required=False, initial=True, label="Drop questions")
    filter_urls = forms.BooleanField(required=False, initial=True, label="Drop sentences with URLs")
    min_words = forms.IntegerField(required=False, min_value=0, initial=5,
                                   help_text="Drop shorter sources (0: no limit).")
    max_words = forms.IntegerField(required=False, min_value=0, initial=25,
                                   help_text="Drop longer sources (0: no limit).")
    qualify_min_accepted = forms.IntegerField(required=False, min_value=0, initial=0,
                                              label="Qualification: min accepted rewrites")
    qualify_min_rate = forms.FloatField(required=False, min_value=0, max_value=1, initial=0,
                                        label="Qualification: min acceptance rate (0-1)")
    signal_thresholds = forms.CharField(required=False, label="Writing signal thresholds",
                                        help_text="NAME=VALUE, comma-separated (e.g. mostly_pasted=0.6, "
                                                  "typing_speed=off); empty: the defaults.")
    signal_auto_reject = forms.CharField(required=False, label="Auto-reject on signals",
                                         help_text="Signals whose flag rejects a pending rewrite without a reviewer, "
                                                   "comma-separated; empty (recommended): a person decides.")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        data["kind"] = data.get("kind") or "ordering"
        if data["kind"] == "ordering" and not data.get("setup") and "setup" not in self.errors:
            self.add_error("setup", "An ordering study needs a setup.")
        if data["kind"] == "rewrite":
            if bool((data.get("sources") or "").strip()) == bool(data.get("sources_corpus")):
                self.add_error("sources", "Give the sources, or a corpus and its side (one of the two).")
            elif data.get("sources_corpus") and data.get("side") is None:
                self.add_error("side", "Choose the side of the corpus the sources are taken from.")
        k, m = data.get("annotators_per_item"), data.get("min_correct")
        if k and m and m > k:
            self.add_error("min_correct", f"Min correct must be at most the annotators per item ({k}).")
        return data

    def rewrite_kwargs(self) -> dict[str, Any]:
        """rewrite_study_create's arguments (the sources read by the caller from `sources_spec`)."""
        d = self.cleaned_data
        common = self.service_kwargs()
        for key in ("item_kind", "setup", "corpus", "component", "status", "count", "seed", "screening_per_batch",
                    "adaptive"):
            common.pop(key)
        def given(name: str) -> Any:
            return d[name] if d.get(name) is not None else self.fields[name].initial
        return {**common, "target_style": d["target_style"], "min_length": given("rewrite_min_length"),
                "max_length": given("rewrite_max_length"), "copy_threshold": given("copy_threshold"),
                "persona": [a.strip() for a in d["persona"].split(",") if a.strip()],
                "filters": {"questions": d["filter_questions"], "urls": d["filter_urls"],
                            "min_words": given("min_words"), "max_words": given("max_words")},
                "min_accepted": given("qualify_min_accepted"), "min_rate": given("qualify_min_rate"),
                "signal_thresholds": thresholds_parse([p for p in (d.get("signal_thresholds") or "").split(",")
                                                       if p.strip()]),
                "signal_auto_reject": d.get("signal_auto_reject") or "", "eligibility_questions": []}

    def sources_spec(self) -> tuple[list[tuple[str, str]] | None, str, int | None]:
        """The typed sources as (id, text) (line numbers as ids unless 'id<TAB>text'), or the corpus and side."""
        d = self.cleaned_data
        if d["sources_corpus"]:
            return None, d["sources_corpus"].name, d["side"]
        rows = []
        for n, line in enumerate(d["sources"].splitlines(), start=1):
            if line.strip():
                sid, tab, text = line.partition("\t")
                rows.append((sid.strip(), text) if tab else (str(n), line))
        return rows, "", None

    def service_kwargs(self) -> dict[str, Any]:
        d = self.cleaned_data
        return {
            "slug": d["slug"], "title": d["title"], "item_kind": d["setup"], "setup": d["setup"],
            "corpus": [c.name for c in d["corpora"]] or None, "component": [c.name for c in d["components"]] or None,
            "status": None if d["instance_status"] == "any" else d["instance_status"], "count": d["count"],
            "seed": d["seed"], "annotators_per_item": d["annotators_per_item"], "min_correct": d["min_correct"],
            "items_per_batch": d["items_per_batch"], "screening_per_batch": d["screening_per_batch"],
            "max_batches": d["max_batches"], "time_limit_minutes": d["time_limit_minutes"], "adaptive": d["adaptive"],
            "completion_code": d["completion_code"], "screened_out_code": d["screened_out_code"],
            "redirect_url": d["redirect_url"], "platform": d["platform"] or EntryPlatform.ANY,
            "prolific_study_id": d["prolific_study_id"], "allow_anonymous": d["allow_anonymous"],
            "first_answer_grace_seconds": d["first_answer_grace_seconds"],
            "max_open_batches": d["max_open_batches"], "min_seconds_per_item": d["min_seconds_per_item"],
            "estimated_minutes": d["estimated_minutes"], "target_hourly_pay": float(d["target_hourly_pay"]),
        }
