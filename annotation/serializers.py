"""Request/response shapes of the annotator and researcher API (also what the OpenAPI schema shows)."""
from __future__ import annotations

from rest_framework import serializers

from annotation.models import Participant


class SessionCreateInput(serializers.Serializer):
    participant = serializers.CharField(required=False, allow_blank=True, max_length=128, default="")
    platform = serializers.ChoiceField(
        choices=[Participant.Platform.PROLIFIC, Participant.Platform.MTURK, Participant.Platform.ANONYMOUS],
        default=Participant.Platform.ANONYMOUS,
    )
    study_ref = serializers.CharField(required=False, allow_blank=True, max_length=128, default="")
    session_ref = serializers.CharField(required=False, allow_blank=True, max_length=128, default="")
    assignment = serializers.CharField(required=False, allow_blank=True, max_length=128, default="")
    hit = serializers.CharField(required=False, allow_blank=True, max_length=128, default="")


class ConsentInput(serializers.Serializer):
    agree = serializers.BooleanField()


class EligibilityInput(serializers.Serializer):
    answers = serializers.DictField(child=serializers.CharField(allow_blank=True))


class AnswerInput(serializers.Serializer):
    item = serializers.CharField(max_length=64)
    answer = serializers.JSONField(help_text='"S1-S2" | "S1" | {question: int} | ["o2", "o1"] | "rewrite text"')
    seconds = serializers.FloatField(required=False, min_value=0, allow_null=True)


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField()


class EligibilityQuestionSerializer(serializers.Serializer):
    name = serializers.CharField()
    text = serializers.CharField()
    choices = serializers.ListField(child=serializers.CharField())


class LikertQuestionSerializer(serializers.Serializer):
    name = serializers.CharField()
    text = serializers.CharField()
    min = serializers.IntegerField()
    max = serializers.IntegerField()
    labels = serializers.DictField(child=serializers.CharField())


class SessionStudySerializer(serializers.Serializer):
    slug = serializers.CharField()
    title = serializers.CharField()
    item_kind = serializers.CharField()
    task_description = serializers.CharField()
    consent_text = serializers.CharField()
    eligibility_questions = EligibilityQuestionSerializer(many=True)
    questions = LikertQuestionSerializer(many=True)
    rewrite_min_length = serializers.IntegerField()
    estimated_minutes = serializers.IntegerField()


class SessionSerializer(serializers.Serializer):
    token = serializers.CharField()
    state = serializers.ChoiceField(choices=[
        "consent", "eligibility", "instructions", "items", "completed", "screened_out", "expired",
    ])
    batch = serializers.IntegerField()
    study = SessionStudySerializer()
    progress = ProgressSerializer()
    expires_at = serializers.DateTimeField(allow_null=True)
    completion_code = serializers.CharField(allow_null=True)
    redirect_url = serializers.CharField(allow_null=True)


class RankingOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    text = serializers.CharField()


class ItemSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="Opaque; send it back with the answer.")
    kind = serializers.CharField()
    position = serializers.IntegerField()
    texts = serializers.DictField(child=serializers.CharField())
    choices = serializers.ListField(child=serializers.CharField())
    questions = LikertQuestionSerializer(many=True, required=False)
    outputs = RankingOutputSerializer(many=True, required=False)
    min_length = serializers.IntegerField(required=False)


class NextSerializer(serializers.Serializer):
    item = ItemSerializer(allow_null=True)
    state = serializers.CharField()
    progress = ProgressSerializer()
    expires_at = serializers.DateTimeField(allow_null=True, required=False)
    completion_code = serializers.CharField(required=False)
    redirect_url = serializers.CharField(required=False)


class AnswerResultSerializer(serializers.Serializer):
    stored = serializers.BooleanField()
    state = serializers.CharField()
    progress = ProgressSerializer()


class ErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    details = serializers.JSONField(required=False)


class ErrorSerializer(serializers.Serializer):
    error = ErrorBodySerializer()


class PingSerializer(serializers.Serializer):
    ok = serializers.BooleanField()


class StudyProgressSerializer(serializers.Serializer):
    slug = serializers.CharField()
    item_kind = serializers.CharField()
    annotators_per_item = serializers.IntegerField()
    items = serializers.IntegerField()
    items_complete = serializers.IntegerField()
    items_closed_early = serializers.IntegerField()
    responses = serializers.IntegerField()
    valid_responses = serializers.IntegerField()
    participants = serializers.IntegerField()
    screened_out = serializers.IntegerField()
    excluded = serializers.IntegerField()
    batches_completed = serializers.IntegerField()
    median_minutes_per_batch = serializers.FloatField(allow_null=True)
    effective_hourly_pay = serializers.FloatField(allow_null=True)
    target_hourly_pay = serializers.FloatField()
    adaptive = serializers.DictField(child=serializers.IntegerField(), allow_null=True)


class RecommendationSerializer(serializers.Serializer):
    participant = serializers.CharField()
    platform = serializers.CharField()
    screened_out = serializers.BooleanField()
    excluded = serializers.BooleanField()
    exclusion_reason = serializers.CharField()
    answers = serializers.IntegerField()
    attention_checks = serializers.IntegerField()
    failed_checks = serializers.ListField(child=serializers.DictField())
    median_seconds = serializers.FloatField(allow_null=True)
    speeder = serializers.BooleanField()
    batches = serializers.IntegerField()
    recommendation = serializers.ChoiceField(choices=["approve", "return", "reject"])
    evidence = serializers.ListField(child=serializers.CharField())


class StudyCreateInput(serializers.Serializer):
    """POST /api/v1/studies/: the admin's "Create a study" form (and create_study's options) for ordering studies."""

    slug = serializers.SlugField(max_length=80)
    title = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    setup = serializers.ChoiceField(choices=["quadruple", "triple", "style-or-content"])
    corpora = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    components = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    instance_status = serializers.ChoiceField(choices=["candidate", "validated", "any"], default="candidate")
    count = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)
    seed = serializers.IntegerField(default=0)
    annotators_per_item = serializers.IntegerField(min_value=1, max_value=50, default=5)
    min_correct = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)
    items_per_batch = serializers.IntegerField(min_value=1, default=14)
    screening_per_batch = serializers.IntegerField(min_value=0, default=2)
    max_batches = serializers.IntegerField(min_value=1, default=5)
    time_limit_minutes = serializers.IntegerField(min_value=1, default=30)
    adaptive = serializers.BooleanField(default=False)
    completion_code = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    redirect_url = serializers.URLField(required=False, allow_blank=True, default="")
    estimated_minutes = serializers.IntegerField(min_value=1, default=10)
    target_hourly_pay = serializers.FloatField(min_value=0, default=9.0)
    open = serializers.BooleanField(default=False, help_text="Open to participants at once (else a draft).")

    def validate(self, data: dict) -> dict:
        k, m = data["annotators_per_item"], data.get("min_correct")
        if m is not None and m > k:
            raise serializers.ValidationError({"min_correct": f"must be at most the annotators per item ({k})"})
        return data
