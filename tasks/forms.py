from django import forms

from tasks.models import Setup, StyleComponent
from tasks.services.imports import FORMATS


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
        return [single(data, initial)]


class CorpusImportForm(forms.Form):
    name = forms.CharField(max_length=128)
    component = forms.ModelChoiceField(
        queryset=StyleComponent.objects.all(), to_field_name="name", required=False,
        help_text="Required except for STEL TSV files (their 'style type' column names it).",
    )
    import_format = forms.ChoiceField(label="Format", choices=[(f, f) for f in FORMATS])
    files = MultipleFileField(help_text="aligned: the style-1 file, then the style-2 file.")
    seed = forms.IntegerField(initial=0, help_text="TurkCorpus: seed of the simplification draw.")
    min_edit_distance = forms.IntegerField(initial=4, min_value=0)
    replace = forms.BooleanField(required=False)
    source = forms.CharField(required=False, help_text="Citation or description.")
    licence = forms.CharField(required=False)


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
