"""The admin's "Create a study" form: the create_study command's options, in plain words."""
from __future__ import annotations

import json
from typing import Any

from django import forms

from annotation.models import ORDERING_KINDS, Study, new_study_code
from annotation.services.rewrite_settings import REWRITE_BY_NAME, REWRITE_DEFAULTS
from annotation.services.sampling_plan import validation_rates_parse
from annotation.services.study_build import STUDY_INPUTS
from annotation.services.study_settings import (
    SETTINGS_BY_NAME,
    form_fields,
    form_values,
    setting_applies,
)
from annotation.services.writing_signals.registry import thresholds_parse
from core.errors import ApplicationError
from core.json_guard import JsonRefused, json_parse
from tasks.models import Corpus, InstanceStatus, StyleComponent
from tasks.services.parsers import LineLengthCheck, records_read

STATUS_CHOICES = [(InstanceStatus.CANDIDATE, "candidate (not yet annotated)"),
                  (InstanceStatus.VALIDATED, "validated"), ("any", "any status")]


KIND_CHOICES = [("ordering", "ordering study (task instances; choose the setup)"),
                ("likert", "Likert study (rate rewrites on scales)"),
                ("ranking", "ranking study (order several rewrites of a source)"),
                ("rewrite", "rewrite study (sources rewritten by the crowd, reviewed)")]
# "Create a study" starts by choosing one of these kinds (a sentence each: what participants do), then shows only
# that kind's fields (`StudyCreateForm(kind=…)`).
STUDY_KINDS: tuple[tuple[str, str, str], ...] = (
    ("quadruple", "Quadruple (STEL)", "Task instances drawn from a parallel corpus: participants see two sentence "
                                      "pairs and choose the order that puts each sentence with its style."),
    ("triple", "Triple", "Task instances drawn from a parallel corpus: participants see an anchor sentence and pick "
                         "which of two sentences is in its style."),
    ("style-or-content", "Style or content", "Task instances drawn from a corpus (STEL-Or-Content): participants "
                                             "pick the sentence that shares the anchor's style, not its content."),
    ("likert", "Likert ratings", "Participants rate system outputs or a rewrite study's accepted rewrites on "
                                 "scales (formality, fluency, meaning), with a published rating preset or your own "
                                 "questions."),
    ("ranking", "Ranking", "Participants order several outputs of one source text, best first."),
    ("rewrite", "Rewrite", "Participants rewrite source texts in a target style; every rewrite is reviewed before it "
                           "counts, and accepted rewrites can become a corpus."),
)
KIND_TITLES = {name: title for name, title, _ in STUDY_KINDS}
# A form field that is not a declared setting → the study_build input (STUDY_INPUTS) or the setting it goes with:
# the kinds it applies to come from that declaration.
REWRITE_FIELDS = ("sources", "sources_corpus", "side", "target_style", "rewrite_max_length", "copy_threshold",
                  "persona", "persona_from_platform", "filter_questions", "filter_urls", "min_words", "max_words",
                  "qualify_min_accepted", "qualify_min_rate", "signal_thresholds", "signal_auto_reject")
INPUT_OF_FIELD = {"corpora": "corpus", "components": "component", "instance_status": "status", "count": "count",
                  "seed": "seed", "load_stel_screening": "screening_per_batch", "target_validated": "target_validated",
                  "validation_rates": "validation_rates", "rates_from_studies": "rates_from_studies",
                  "practice_file": "practice", "items_file": "items", "outputs_file": "outputs",
                  "outputs_study": "outputs_study", "preset": "preset", "questions": "questions",
                  "eligibility_questions": "eligibility_questions", "rewrite_min_length": "items",
                  **dict.fromkeys(REWRITE_FIELDS, "rewrite")}
INPUT_KINDS = {i.name: i.kinds for i in STUDY_INPUTS}


def field_kinds(name: str) -> str:
    """The kinds a form field applies to, from the declarations (settings, then study_build's inputs)."""
    name = INPUT_OF_FIELD.get(name, name)
    if name in SETTINGS_BY_NAME:
        return SETTINGS_BY_NAME[name].kinds
    return INPUT_KINDS.get(name, "all")


# The service's keyword → this form's field, where the two differ (an error is shown beside its field).
FORM_FIELD_OF = {"corpus": "corpora", "component": "components", "status": "instance_status", "kind": "kind",
                 "items": "items_file", "outputs": "outputs_file", "practice": "practice_file",
                 "validation_rates": "validation_rates", "rates_from_studies": "rates_from_studies",
                 "min_length": "rewrite_min_length", "max_length": "rewrite_max_length",
                 "min_accepted": "qualify_min_accepted", "min_rate": "qualify_min_rate",
                 "signal_threshold": "signal_thresholds", "rewrite.sources": "sources",
                 "item_kind": "kind"}


def _upload_bytes(upload: Any) -> bytes:
    """The upload's bytes, each line held to STYLECROWD_MAX_LINE_BYTES (an error naming the file and the line)."""
    data = upload.read()
    LineLengthCheck(upload.name or "upload").feed(data)
    return data


def _json_upload(upload: Any, label: str, field: str) -> Any:
    try:
        return json_parse(_upload_bytes(upload).decode("utf-8-sig"))
    except JsonRefused as exc:
        raise ApplicationError(f"{label}: {upload.name}: {exc.message}", field=field) from None
    except UnicodeDecodeError:
        raise ApplicationError(f"{label}: {upload.name} is not UTF-8 text.", field=field) from None
    except json.JSONDecodeError as exc:
        raise ApplicationError(f"{label}: {upload.name}: line {exc.lineno}: invalid JSON ({exc.msg}).",
                               field=field) from None


def _json_text(text: str, label: str, field: str) -> Any:
    try:
        return json_parse(text)
    except JsonRefused as exc:
        raise ApplicationError(f"{label}: {exc.message}", field=field) from None
    except json.JSONDecodeError as exc:
        raise ApplicationError(f"{label}: line {exc.lineno}: invalid JSON ({exc.msg}).", field=field) from None


def _jsonl_upload(upload: Any) -> list[Any]:
    rows = []
    for number, line in enumerate(_upload_text(upload, "Items", "items").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json_parse(line))
            except JsonRefused as exc:
                raise ApplicationError(f"{upload.name}: line {number}: {exc.message}", field="items") from None
            except json.JSONDecodeError as exc:
                raise ApplicationError(f"{upload.name}: line {number}: invalid JSON ({exc.msg}).",
                                       field="items") from None
    return rows


def _upload_text(upload: Any, label: str, field: str) -> str:
    try:
        return _upload_bytes(upload).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ApplicationError(f"{label}: {upload.name} is not UTF-8 text.", field=field) from None


class StudyCreateForm(forms.Form):
    """Every kind of study, as `create_study` and `POST /api/v1/studies/` create it (annotation.services.study_build);
    the settings' fields come from their declaration (annotation.services.study_settings.STUDY_SETTINGS). The form
    only reads what is typed and uploaded; the service checks it and its errors are shown beside their field."""

    slug = forms.SlugField(max_length=80, help_text="Part of the participant link: /s/<slug>/.")
    kind = forms.ChoiceField(choices=KIND_CHOICES, initial="ordering", required=False)
    setup = forms.ChoiceField(choices=[("", "—"), *((k.value, k.label) for k in ORDERING_KINDS)], required=False,
                              help_text="Ordering studies: quadruples, triples or style-or-content triples.")
    corpora = forms.ModelMultipleChoiceField(queryset=Corpus.objects.order_by("name"), to_field_name="name",
                                             required=False, help_text="Empty: every corpus.")
    components = forms.ModelMultipleChoiceField(queryset=StyleComponent.objects.order_by("name"),
                                                to_field_name="name", required=False,
                                                help_text="Empty: every style component.")
    instance_status = forms.ChoiceField(choices=STATUS_CHOICES, initial=InstanceStatus.CANDIDATE)
    count = forms.IntegerField(required=False, help_text="Instances drawn at random; empty: all.")
    seed = forms.IntegerField(initial=0, required=False, help_text="The same seed draws the same instances.")
    load_stel_screening = forms.BooleanField(
        required=False, label="Load STEL's screening questions",
        help_text="Load STEL's published screening questions first (those missing only). Their answers are public: "
                  "for demos and pilots; a paid study needs questions of its own.")
    # Sampling plan (create_study --target-validated, --validation-rate, --rates-from-study)
    target_validated = forms.IntegerField(required=False, label="Sampling plan: validated instances wanted",
                                          help_text="Per component (choose the components): sample enough to end "
                                                    "with this many validated instances at the expected rates.")
    validation_rates = forms.CharField(required=False, label="Sampling plan: expected validation rates",
                                       help_text="COMPONENT=RATE, comma-separated, e.g. simplicity=0.68, "
                                                 "formality=0.88.")
    rates_from_studies = forms.ModelMultipleChoiceField(
        queryset=Study.objects.order_by("slug"), to_field_name="slug", required=False,
        label="Sampling plan: rates measured on", help_text="Earlier, filtered studies to measure the rates on.")
    practice_file = forms.FileField(required=False, label="Practice items (JSON)",
                                    help_text="A JSON list of {anchor_1, anchor_2, sentence_1, sentence_2, "
                                              "correct_answer, explanation}: shown with feedback before the first "
                                              "batch, never counted.")
    # Likert and ranking studies (create_study --kind likert|ranking)
    items_file = forms.FileField(required=False, label="Items (JSONL)",
                                 help_text="Likert/ranking items, one JSON object a line: id, source, rewrite "
                                           "(ranking: outputs [{id, text}]).")
    outputs_file = forms.FileField(required=False, label="System outputs (CSV/TSV/JSONL)",
                                   help_text="… or system outputs to rate or rank: id, source, rewrite[, system, "
                                             "source_id], or id, source, one column per system.")
    outputs_study = forms.ModelChoiceField(queryset=Study.objects.filter(item_kind="rewrite").order_by("slug"),
                                           to_field_name="slug", required=False, label="Rate a rewrite study",
                                           help_text="… or the accepted rewrites of this rewrite study.")
    preset = forms.ChoiceField(choices=[("", "—"), ("gyafc", "GYAFC (Rao & Tetreault 2018)"),
                                        ("pauli", "Pauli et al. 2025 (Likert only)")], required=False,
                               label="Rating preset", help_text="Questions, k and instructions of a published study.")
    questions = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
                                label="Likert questions",
                                help_text="A preset (mind-the-style-gap, gyafc, pauli) or a JSON list of {name, text, "
                                          "min, max, labels}; empty: the rating preset's.")
    eligibility_questions = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
                                            help_text="A JSON list of {name, text, choices, accept}; [] for none; "
                                                      "empty: the default (native English; none for a rewrite "
                                                      "study).")
    rewrite_min_length = forms.IntegerField(required=False, initial=REWRITE_DEFAULTS["min_length"],
                                            label="Rewrite min length (characters)")

    # Rewrite studies (create_study --kind rewrite): README, "Rewrite studies and their review".
    sources = forms.CharField(widget=forms.Textarea(attrs={"rows": 6, "cols": 80}), required=False,
                              help_text="Rewrite studies: one source a line, or 'id<TAB>text' lines.")
    sources_corpus = forms.ModelChoiceField(queryset=Corpus.objects.order_by("name"), to_field_name="name",
                                            required=False, help_text="… or the sources from one side of a corpus.")
    side = forms.TypedChoiceField(choices=[("", "—"), (1, "side 1"), (2, "side 2")], coerce=int, required=False,
                                  empty_value=None)
    target_style = forms.CharField(max_length=100, required=False, help_text="e.g. formal (built-in examples for "
                                                                             "formal and informal).")
    rewrite_max_length = forms.IntegerField(required=False, initial=REWRITE_DEFAULTS["max_length"],
                                            label="Rewrite max length (characters)")
    copy_threshold = forms.FloatField(required=False, initial=REWRITE_DEFAULTS["copy_threshold"],
                                      help_text="Refuse a rewrite this similar (rapidfuzz ratio, 0-100) to its source.")
    persona = forms.CharField(required=False, help_text="Persona questions (PASTEL), comma-separated: gender, age, "
                                                        "ethnicity=prolific (or ethnicity=pastel, PASTEL's US-census "
                                                        "list, in an English study), country, education, "
                                                        "political_orientation; pastel for all of them.")
    persona_from_platform = forms.CharField(required=False, initial=REWRITE_DEFAULTS["persona_from_platform"],
                                            label=REWRITE_BY_NAME["persona_from_platform"].label,
                                            help_text=REWRITE_BY_NAME["persona_from_platform"].help)
    filter_questions = forms.BooleanField(required=False, initial=True, label="Drop questions")
    filter_urls = forms.BooleanField(required=False, initial=True, label="Drop sentences with URLs")
    min_words = forms.IntegerField(required=False, min_value=0, initial=REWRITE_DEFAULTS["min_words"],
                                   help_text="Drop shorter sources (0: no limit).")
    max_words = forms.IntegerField(required=False, min_value=0, initial=REWRITE_DEFAULTS["max_words"],
                                   help_text="Drop longer sources (0: no limit).")
    qualify_min_accepted = forms.IntegerField(required=False, initial=REWRITE_DEFAULTS["min_accepted"],
                                              label="Qualification: min accepted rewrites")
    qualify_min_rate = forms.FloatField(required=False, initial=REWRITE_DEFAULTS["min_rate"],
                                        label="Qualification: min acceptance rate (0-1)")
    signal_thresholds = forms.CharField(required=False, label="Writing signal thresholds",
                                        help_text="NAME=VALUE, comma-separated (e.g. mostly_pasted=0.6, "
                                                  "typing_speed=off); empty: the defaults.")
    signal_auto_reject = forms.CharField(required=False, label="Auto-reject on signals",
                                         help_text="Signals whose flag rejects a pending rewrite without a reviewer, "
                                                   "comma-separated; empty (recommended): a person decides.")

    def __init__(self, *args: Any, kind: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind = kind
        declared = form_fields()
        order = ["slug", "title", "kind", "setup", "corpora", "components", "instance_status", "count", "seed"]
        fields = {name: self.fields[name] for name in order if name in self.fields}
        fields["title"] = declared.pop("title")
        fields = {name: fields[name] for name in order}
        fields.update(declared)
        fields.update({name: field for name, field in self.fields.items() if name not in fields})
        self.fields = fields
        for name in ("completion_code", "screened_out_code"):  # shown drawn: two independent random codes
            self.fields[name].initial = new_study_code
        if kind is not None:  # the kind was chosen first: only its own fields, the kind itself fixed
            self.fields = {name: field for name, field in self.fields.items()
                           if name not in ("kind", "setup") and setting_applies(field_kinds(name), kind)}

    SECTIONS = (
        ("The study", ["slug", "title", "kind"]),
        ("Task instances", ["setup", "corpora", "components", "instance_status", "count", "seed",
                                              "screening_per_batch", "load_stel_screening", "adaptive",
                                              "allow_multiple_setups", "min_correct"]),
        ("Sampling plan", ["target_validated", "validation_rates", "rates_from_studies"]),
        ("Practice", ["practice_file"]),
        ("Items", ["items_file", "outputs_file", "outputs_study", "preset", "questions",
                                        "rewrite_min_length"]),
        ("Sources and review", ["sources", "sources_corpus", "side", "target_style", "rewrite_max_length",
                             "copy_threshold", "persona", "persona_from_platform",
                             "filter_questions", "filter_urls", "min_words",
                             "max_words", "qualify_min_accepted", "qualify_min_rate", "signal_thresholds",
                             "signal_auto_reject"]),
    )

    def sections(self) -> list[tuple[str, list[Any]]]:
        """The fields in the page's sections; every declared setting not placed above is under "Settings"."""
        placed = {name for _, names in self.SECTIONS for name in names}
        rest = [name for name in self.fields if name not in placed]
        sections = [(title, [self[name] for name in names if name in self.fields])
                    for title, names in (*self.SECTIONS[:1], ("Settings", rest), *self.SECTIONS[1:])]
        return [(title, fields) for title, fields in sections if fields]

    def error_field(self, exc: ApplicationError) -> str | None:
        """The form field a service error is about (None: shown above the form)."""
        name = FORM_FIELD_OF.get(exc.field or "", exc.field)
        return name if name in self.fields else None

    def build_kwargs(self) -> dict[str, Any]:
        """study_build's arguments from what is typed and uploaded (files read here, checked by the service)."""
        d = self.cleaned_data
        kind = self.kind or d.get("kind") or "ordering"
        kwargs: dict[str, Any] = {
            "slug": d["slug"], "kind": kind, "setup": d.get("setup") or (kind if kind in ORDERING_KINDS else None),
            "corpus": [c.name for c in d.get("corpora") or []] or None,
            "component": [c.name for c in d.get("components") or []] or None,
            "status": d.get("instance_status") or "candidate", "count": d.get("count"), "seed": d.get("seed") or 0,
            **form_values(d), **self._sampling_plan(), **self._uploads(), **self._questions(kind),
        }
        if kind in ("likert", "ranking", "rewrite"):
            kwargs["rewrite_min_length"] = d["rewrite_min_length"] or 10
        if kind == "rewrite" and not d.get("items_file"):
            kwargs.pop("rewrite_min_length", None)
            kwargs["rewrite"] = self.rewrite_spec()
        return kwargs

    def _sampling_plan(self) -> dict[str, Any]:
        d, kwargs = self.cleaned_data, {}
        if d.get("target_validated") is not None:
            kwargs["target_validated"] = d["target_validated"]
        if d.get("validation_rates"):
            kwargs["validation_rates"] = validation_rates_parse(
                [p for p in d["validation_rates"].split(",") if p.strip()])
        if d.get("rates_from_studies"):
            kwargs["rates_from_studies"] = [s.slug for s in d["rates_from_studies"]]
        return kwargs

    def _uploads(self) -> dict[str, Any]:
        """The files read: practice items, Likert/ranking items, system outputs (or a rewrite study to rate)."""
        d, kwargs = self.cleaned_data, {}
        if d.get("practice_file"):
            kwargs["practice"] = _json_upload(d["practice_file"], "Practice items", "practice")
            if not isinstance(kwargs["practice"], list):
                raise ApplicationError("Practice items: expected a JSON list of practice items.", field="practice")
        if d.get("items_file"):
            kwargs["items"] = _jsonl_upload(d["items_file"])
        if d.get("outputs_file"):
            upload = d["outputs_file"]
            kwargs["outputs"] = records_read(upload.name, _upload_text(upload, "Outputs", "outputs"),
                                             unknown_type=f"{upload.name}: outputs are read from .csv, .tsv or "
                                                          ".jsonl files")
            kwargs["outputs_where"] = upload.name
        if d.get("outputs_study"):
            kwargs["outputs_study"] = d["outputs_study"].slug
        return kwargs

    def _questions(self, kind: str) -> dict[str, Any]:
        """The rating preset, the Likert questions and the eligibility questions typed."""
        d, kwargs = self.cleaned_data, {}
        if d.get("preset"):
            kwargs["preset"] = d["preset"]
        questions = (d.get("questions") or "").strip()
        if questions:
            kwargs["questions"] = (_json_text(questions, "Likert questions", "questions") if questions[0] in "[{"
                                   else questions)
        eligibility = (d.get("eligibility_questions") or "").strip()
        if eligibility:
            kwargs["eligibility_questions"] = _json_text(eligibility, "Eligibility questions", "eligibility_questions")
        elif kind == "rewrite":
            kwargs["eligibility_questions"] = []  # the persona questions only
        return kwargs

    def rewrite_spec(self) -> dict[str, Any]:
        """study_build's `rewrite`: the sources typed (line numbers as ids unless 'id<TAB>text') or a corpus side."""
        d = self.cleaned_data
        sources = None
        if (d.get("sources") or "").strip():
            sources = []
            for n, line in enumerate(d["sources"].splitlines(), start=1):
                if line.strip():
                    sid, tab, text = line.partition("\t")
                    sources.append((sid.strip(), text) if tab else (str(n), line))

        def given(name: str) -> Any:
            return d[name] if d.get(name) is not None else self.fields[name].initial

        return {"sources": sources, "sources_corpus": d["sources_corpus"].name if d.get("sources_corpus") else "",
                "side": d.get("side"), "target_style": d["target_style"], "min_length": given("rewrite_min_length"),
                "max_length": given("rewrite_max_length"), "copy_threshold": given("copy_threshold"),
                "persona": [a.strip() for a in d["persona"].split(",") if a.strip()],
                "persona_from_platform": d.get("persona_from_platform") or "",
                "filters": {"questions": d["filter_questions"], "urls": d["filter_urls"],
                            "min_words": given("min_words"), "max_words": given("max_words")},
                "min_accepted": given("qualify_min_accepted"), "min_rate": given("qualify_min_rate"),
                "signal_thresholds": thresholds_parse([p for p in (d.get("signal_thresholds") or "").split(",")
                                                       if p.strip()]),
                "signal_auto_reject": d.get("signal_auto_reject") or ""}
