from django import forms

from core.errors import ApplicationError
from tasks.licences import licence_choices
from tasks.models import Setup, StyleComponent
from tasks.services.imports import FORMATS
from tasks.services.uploads import upload_files_by_role


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(item, initial) for item in data]
        return [single(data, initial)] if data else []


class CorpusImportForm(forms.Form):
    name = forms.CharField(max_length=128)
    component = forms.ModelChoiceField(
        queryset=StyleComponent.objects.all(), to_field_name="name", required=False,
        help_text="Required except for STEL TSV files (their 'style type' column names it).",
    )
    import_format = forms.ChoiceField(label="Format", choices=[(f, f) for f in FORMATS])
    style_1_file = forms.FileField(required=False, label="Style-1 file",
                                   help_text="aligned: the text in the component's style 1 (e.g. informal).")
    style_2_file = forms.FileField(required=False, label="Style-2 file",
                                   help_text="aligned: the same text in style 2, line i parallel to line i.")
    files = MultipleFileField(required=False, help_text="turkcorpus, pairs, stel: the file(s) to import.")
    seed = forms.IntegerField(initial=0, help_text="turkcorpus: seed of the simplification draw.")
    min_edit_distance = forms.IntegerField(
        required=False, min_value=0, help_text="Pair test; empty: STEL's 4 for a dimension, 0 for a characteristic.",
    )
    detokenize = forms.NullBooleanField(
        required=False, help_text="Undo word tokenization (`Sudan .`); unknown: on for turkcorpus only.",
    )
    replace = forms.BooleanField(required=False)
    source = forms.CharField(required=False, help_text="Citation or description.")
    licence = forms.ChoiceField(
        required=False, choices=licence_choices,
        help_text="Empty: STEL files are recorded as MIT, TurkCorpus as GPL-3.0-only, files named like GYAFC's under "
                  "GYAFC's licence (not redistributable: exports then offer the ids-only form).")
    attribution = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                                  help_text="Who to credit and cite (shown in every dataset card).")
    language = forms.CharField(initial="en", required=False, max_length=35,
                               help_text="BCP-47 tag of the texts' language (empty: en).")

    def clean(self) -> dict:
        data = super().clean()
        if data.get("import_format"):
            try:
                data["files"] = upload_files_by_role(
                    import_format=data["import_format"], files=data.get("files"),
                    style_1_file=data.get("style_1_file"), style_2_file=data.get("style_2_file"))
            except ApplicationError as exc:
                raise forms.ValidationError(exc.message) from None
        return data


class GenerateInstancesForm(forms.Form):
    setup = forms.ChoiceField(choices=Setup.choices)
    seed = forms.IntegerField(initial=0)
    count = forms.IntegerField(required=False, min_value=1, help_text="Empty: every pair anchors one instance.")
    replace = forms.BooleanField(required=False, help_text="Replace this setup's existing instances.")


class ScreeningImportForm(forms.Form):
    file = forms.FileField(help_text="UTF-8 TSV with STEL's header: style type, Correct Order, Anchor 1, Anchor 2, "
                                     "Alternative 1.1, Alternative 1.2 [, setups].")
    prefix = forms.CharField(initial="private", max_length=41,
                             help_text="Questions are named <prefix>-<component>-<n>.")
    source = forms.CharField(required=False, max_length=200, help_text="Where the questions come from (optional).")
    active = forms.BooleanField(required=False, initial=True, help_text="Serve them at once.")
    language = forms.CharField(initial="en", required=False, max_length=35,
                               help_text="BCP 47 tag of their texts (en, fr, pt-BR, …): only studies in that language "
                               "draw them.")
