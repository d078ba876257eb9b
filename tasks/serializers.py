from typing import Any

from rest_framework import serializers

from tasks.licences import licence_get
from tasks.models import Corpus, Setup, StyleComponent, TaskInstance
from tasks.services.imports import FORMATS


class StyleComponentSerializer(serializers.ModelSerializer):
    class Meta:
        model = StyleComponent
        fields = ["name", "label_1", "label_2", "kind", "description"]


class CorpusSerializer(serializers.ModelSerializer):
    component = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = Corpus
        fields = ["id", "name", "component", "import_format", "source", "licence", "attribution", "language",
                  "redistributable", "import_params", "n_pairs", "n_rows_read", "n_skipped", "n_instances",
                  "created_at"]

    redistributable = serializers.SerializerMethodField(
        help_text="Whether the licence lets exports publish the texts (null: no licence recorded).")

    def get_redistributable(self, corpus: Corpus) -> bool | None:
        licence = licence_get(corpus.licence)
        return None if licence is None else licence.redistributable



class CorpusLicenceInput(serializers.Serializer):
    licence = serializers.CharField(required=False, allow_blank=True,
                                    help_text="SPDX identifier; empty: not recorded.")
    attribution = serializers.CharField(required=False, allow_blank=True)
    language = serializers.CharField(required=False, max_length=35)


class FormNullIntegerField(serializers.IntegerField):
    """A nullable integer of a form body (CorpusImportInput reads `request.POST`, all text): the text `null` is null,
    as DRF's BooleanField already reads it for `detokenize`. A form has no other way to say it, and the schema
    documents the field as nullable; absent is the default."""

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        return super().validate_empty_values(None if data == "null" and self.allow_null else data)


class CorpusImportInput(serializers.Serializer):
    name = serializers.CharField(max_length=128)
    component = serializers.CharField(required=False, allow_blank=True)
    format = serializers.ChoiceField(choices=FORMATS)
    files = serializers.ListField(child=serializers.FileField(), required=False, default=list,
                                  help_text="The files of every format but aligned.")
    style_1_file = serializers.FileField(required=False, allow_null=True, default=None,
                                         help_text="aligned: the file in the component's style 1 (e.g. informal).")
    style_2_file = serializers.FileField(required=False, allow_null=True, default=None,
                                         help_text="aligned: the file in style 2, line i parallel to style 1's.")
    seed = serializers.IntegerField(default=0)
    min_edit_distance = FormNullIntegerField(
        required=False, allow_null=True, default=None, min_value=0,
        help_text="Pair test threshold; empty: STEL's 4 for a dimension, 0 for a characteristic.",
    )
    detokenize = serializers.BooleanField(
        required=False, allow_null=True, default=None,
        help_text="Undo word tokenization before the pair test; empty: on for turkcorpus only.",
    )
    replace = serializers.BooleanField(default=False)
    source = serializers.CharField(required=False, allow_blank=True, default="")
    licence = serializers.CharField(required=False, allow_blank=True, default="",
                                    help_text="SPDX identifier (MIT, GPL-3.0-only, CC-BY-4.0, …; LicenseRef-GYAFC); "
                                              "empty: the format's own (STEL MIT, TurkCorpus GPL-3.0) or none.")
    attribution = serializers.CharField(required=False, allow_blank=True, default="")
    language = serializers.CharField(required=False, max_length=35, default="en")


class InstancesGenerateInput(serializers.Serializer):
    setup = serializers.ChoiceField(choices=Setup.choices)
    seed = serializers.IntegerField(default=0)
    count = serializers.IntegerField(required=False, allow_null=True, min_value=1, default=None)
    replace = serializers.BooleanField(default=False)


class TaskInstanceSerializer(serializers.ModelSerializer):
    component = serializers.SlugRelatedField(slug_field="name", read_only=True)
    corpus = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = TaskInstance
        fields = ["id", "stel_id", "setup", "component", "corpus", "anchor_1", "anchor_2", "sentence_1", "sentence_2",
                  "anchor_1_style", "anchor_2_style", "sentence_1_style", "sentence_2_style", "correct_order",
                  "status", "family", "published_votes"]
