"""The admin's form for starting a meta-evaluation; it only parses input, the service validates the rest."""
from __future__ import annotations

from typing import Any

from django import forms

from annotation.models import ItemKind, Study

from . import metric_names
from .base import REGISTRY


class MetricEvaluationForm(forms.Form):
    study = forms.ModelChoiceField(queryset=Study.objects.filter(item_kind=ItemKind.LIKERT), to_field_name="slug")
    question = forms.CharField(max_length=64, help_text="Name of the Likert question, e.g. content or style.")
    metrics = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, choices=())
    by_style = forms.BooleanField(required=False, label="Also per target style")
    by_dataset = forms.BooleanField(required=False, label="Also per dataset (instead of per style)")
    embedding_model = forms.CharField(required=False, help_text="Directory; empty = the packaged all-MiniLM-L6-v2.")
    bertscore_model = forms.CharField(required=False, help_text="Directory; empty = the packaged all-MiniLM-L6-v2.")
    bertscore_layers = forms.IntegerField(required=False, min_value=1, help_text="Empty = the model's last layer.")
    nli_model = forms.CharField(required=False, help_text="NLI classifier directory (needed for nli_mutual).")
    lm_model = forms.CharField(required=False, help_text="Causal LM directory (needed for logprob).")
    cross_encoder_model = forms.CharField(required=False, help_text="One-output cross-encoder directory (needed for "
                                                                    "cross_encoder).")
    llm_base_url = forms.CharField(required=False, help_text="OpenAI-compatible endpoint (needed for llm_rater).")
    llm_model = forms.CharField(required=False, help_text="The model's name at that endpoint (llm_rater).")
    device = forms.ChoiceField(choices=[("auto", "auto"), ("cpu", "cpu"), ("cuda", "cuda")], initial="auto")
    batch_size = forms.IntegerField(required=False, min_value=1)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["metrics"].choices = [(name, f"{name} — {REGISTRY[name].description}") for name in metric_names()]

    def service_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "study_slug": data["study"].slug, "question": data["question"].strip(), "metric_names": data["metrics"],
            "by": "dataset" if data["by_dataset"] else "style" if data["by_style"] else "",
            "options": {
                "device": data["device"], "batch_size": data["batch_size"],
                "embedding_cosine": {"model_path": data["embedding_model"]},
                "bertscore": {"model_path": data["bertscore_model"], "num_layers": data["bertscore_layers"]},
                "nli_mutual": {"model_path": data["nli_model"]},
                "logprob": {"model_path": data["lm_model"]},
                "cross_encoder": {"model_path": data["cross_encoder_model"]},
                "llm_rater": {"base_url": data["llm_base_url"], "model": data["llm_model"]},
            },
        }
