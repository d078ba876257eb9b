"""Request/response shapes of the annotator and researcher API (also what the OpenAPI schema shows)."""
from __future__ import annotations

from rest_framework import serializers

from annotation.models import Participant
from annotation.services.rewrite_settings import REWRITE_BY_NAME
from annotation.services.study_settings import drf_field, drf_fields


class SessionCreateInput(serializers.Serializer):
    participant = serializers.CharField(required=False, allow_blank=True, max_length=128, default="")
    platform = serializers.ChoiceField(
        choices=[Participant.Platform.PROLIFIC, Participant.Platform.MTURK, Participant.Platform.ANONYMOUS],
        default=Participant.Platform.ANONYMOUS,
        error_messages={"invalid_choice": "must be one of prolific, mturk, anonymous."},  # never echo the input
    )
    study_ref = serializers.CharField(required=False, allow_blank=True, max_length=128, default="")
    session_ref = serializers.CharField(required=False, allow_blank=True, max_length=128, default="")
    assignment = serializers.CharField(required=False, allow_blank=True, max_length=128, default="")
    hit = serializers.CharField(required=False, allow_blank=True, max_length=128, default="")
    token = serializers.CharField(
        required=False, allow_blank=True, max_length=64, default="",
        help_text="A session token this client holds (proves it started the session; the page sends it as the "
                  "resume cookie instead).",
    )


class ConsentInput(serializers.Serializer):
    agree = serializers.BooleanField(help_text="true: take part; false: decline (recorded; the batch ends).")
    special_category = serializers.BooleanField(
        required=False, default=False,
        help_text="The separate tick of the explicit consent to special-category questions: required (true) with "
                  "agree true when the study asks them (the session's study.special_category_consent is not empty).")


class EligibilityInput(serializers.Serializer):
    answers = serializers.DictField(child=serializers.CharField(allow_blank=True))


class SecondsField(serializers.FloatField):
    """A finite number ≥ 0 (DRF refuses non-finite ones); unlike DRF's FloatField, `true` is not 1 second."""

    def to_internal_value(self, data: object) -> float:
        if isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


class AnswerInput(serializers.Serializer):
    item = serializers.CharField(max_length=64)
    answer = serializers.JSONField(help_text='"S1-S2" | "S1" | {question: int} | ["o2", "o1"] | "rewrite text"')
    seconds = SecondsField(
        required=False, min_value=0, allow_null=True,
        help_text="Client-measured seconds on the item: information only (a finite number ≥ 0, stored clamped to "
                  "3600); speed is measured by the server.",
    )
    telemetry = serializers.JSONField(
        required=False, allow_null=True, default=None,
        help_text="Free-text answers: the page's writing telemetry, counts and durations only (its fields are in "
                  "docs/annotator-api.md, checked by annotation/services/telemetry.py). Absent: stored as 'no "
                  "telemetry'.",
    )


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField()


class EligibilityQuestionSerializer(serializers.Serializer):
    name = serializers.CharField()
    text = serializers.CharField()
    choices = serializers.ListField(child=serializers.CharField(), help_text="The values to answer with.")
    choice_labels = serializers.DictField(
        child=serializers.CharField(), required=False,
        help_text="value → the label shown for it: a persona question's choices in the study's language (a study in "
                  "another language than English), or the labels a researcher gave their own question's choices; "
                  "absent, or a value without one: shown as it is.")


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
    consent_text = serializers.CharField(help_text="The researcher's own consent text.")
    consent_statement = serializers.CharField(
        help_text="What we record, and for how long: generated from the study's settings, shown after consent_text.")
    special_category_consent = serializers.CharField(
        allow_blank=True, help_text="The explicit-consent statement of special-category questions, ticked separately "
                                    "(consent's special_category); empty: the study asks none.")
    eligibility_questions = EligibilityQuestionSerializer(many=True)
    questions = LikertQuestionSerializer(many=True)
    rewrite_min_length = serializers.IntegerField()
    estimated_minutes = serializers.IntegerField()


class SessionSerializer(serializers.Serializer):
    token = serializers.CharField(allow_null=True)
    state = serializers.ChoiceField(choices=[
        "consent", "eligibility", "instructions", "items", "completed", "screened_out", "expired", "declined",
    ])
    batch = serializers.IntegerField()
    study = SessionStudySerializer()
    consent_receipt = serializers.CharField(help_text="The code the participant quotes to withdraw or ask for erasure.")
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
    item = ItemSerializer(allow_null=True, help_text="The item to answer now; null once the batch has none left.")
    state = serializers.ChoiceField(
        choices=["items", "completed", "screened_out"],
        help_text="`items` while there is an item; otherwise how the batch ended.")
    progress = ProgressSerializer()
    expires_at = serializers.DateTimeField(
        allow_null=True, required=False, help_text="With an item: the batch's time limit.")
    completion_code = serializers.CharField(
        allow_null=True, required=False,
        help_text="With `item: null`: the code to take back to the platform (the completion code, or the "
                  "screened-out code).")
    redirect_url = serializers.CharField(
        allow_null=True, required=False,
        help_text="With `item: null`: where to take the code (null for MTurk and for studies without one).")


class AnswerResultSerializer(serializers.Serializer):
    stored = serializers.BooleanField(help_text="true: stored now (201); false: the same answer was already stored "
                                                "(200).")
    state = serializers.ChoiceField(choices=["items", "completed"],
                                    help_text="The batch's state after this answer.")
    progress = ProgressSerializer()
    next = NextSerializer(
        required=False,
        help_text="Exactly the body `GET /api/v1/sessions/{token}/next/` would answer right after this answer: the "
                  "next item, or (`item: null`) the batch's end with its code. Absent only when that request would "
                  "answer with an error; a client then calls `next` itself.")


class ErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    details = serializers.JSONField(required=False)


class ErrorSerializer(serializers.Serializer):
    error = ErrorBodySerializer()


class PingSerializer(serializers.Serializer):
    ok = serializers.BooleanField()


class StudyParticipationSerializer(serializers.Serializer):
    platform = serializers.ChoiceField(choices=["any", "prolific", "mturk"])
    prolific_study_id = serializers.CharField(allow_blank=True)
    allow_anonymous = serializers.BooleanField()
    first_answer_grace_seconds = serializers.IntegerField()
    max_open_batches = serializers.IntegerField(allow_null=True)
    min_seconds_per_item = serializers.FloatField(allow_null=True)


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
    participation = StudyParticipationSerializer()


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
    submissions = serializers.ListField(child=serializers.CharField(), help_text="Prolific SESSION_IDs.")
    assignments = serializers.ListField(child=serializers.DictField(), help_text="MTurk assignmentId/hitId.")
    recommendation = serializers.ChoiceField(choices=["approve", "return", "reject"])
    evidence = serializers.ListField(child=serializers.CharField())
    writing_signals = serializers.DictField(child=serializers.IntegerField(), required=False,
                                            help_text="Rewrite studies: rewrites flagged per writing signal.")
    no_telemetry = serializers.IntegerField(required=False, help_text="Rewrite studies: rewrites without telemetry.")


class RewriteSourceInput(serializers.Serializer):
    id = serializers.CharField(max_length=200)
    text = serializers.CharField(allow_blank=True, max_length=5000)


class RewriteFiltersInput(serializers.Serializer):
    """GYAFC's preprocessing of sources (README, "Rewrite studies and their review")."""

    questions = serializers.BooleanField(default=True)
    urls = serializers.BooleanField(default=True)
    min_words = drf_field(REWRITE_BY_NAME["min_words"])
    max_words = drf_field(REWRITE_BY_NAME["max_words"])


class RewriteCreateInput(serializers.Serializer):
    """The rewrite part of POST /api/v1/studies/ with kind `rewrite`: create_study --kind rewrite's options."""

    # A ListField, not RewriteSourceInput(many=True): DRF hands `allow_null` to the child of `many=True` too, so
    # `[null]` passed validation and failed later (a 500). The list may be null; a source in it may not.
    sources = serializers.ListField(child=RewriteSourceInput(), required=False, default=None, allow_null=True,
                                    help_text="The sources as [{id, text}]; or sources_corpus and side.")
    sources_corpus = serializers.CharField(required=False, allow_blank=True, default="")
    side = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1, max_value=2,
                                    error_messages={"min_value": "Side must be 1 or 2.",
                                                    "max_value": "Side must be 1 or 2."},
                                    help_text="With sources_corpus: the corpus side the sources come from (1 or 2).")
    target_style = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    examples = serializers.ListField(child=serializers.DictField(), required=False, allow_null=True, default=None,
                                     help_text="Worked examples {source, rewrite, note}; empty: the style's defaults.")
    # The declared rewrite settings' fields (annotation.services.study_settings.REWRITE_SETTINGS): their defaults
    # and bounds, so the schema states the bounds the service checks.
    min_length = drf_field(REWRITE_BY_NAME["min_length"])
    max_length = drf_field(REWRITE_BY_NAME["max_length"])
    copy_threshold = drf_field(REWRITE_BY_NAME["copy_threshold"])
    persona = serializers.ListField(required=False, default=list,
                                    help_text="PASTEL attribute names ('pastel' for all; ethnicity names its "
                                              "list: 'ethnicity=prolific', or 'ethnicity=pastel' in an English "
                                              "study), or own questions {name, text, choices}, each choice a value "
                                              "or {value, label} (stored by value, shown by label).")
    persona_from_platform = drf_field(REWRITE_BY_NAME["persona_from_platform"])
    filters = RewriteFiltersInput(required=False, default=None, allow_null=True)
    qualify_min_accepted = drf_field(REWRITE_BY_NAME["min_accepted"])
    qualify_min_rate = drf_field(REWRITE_BY_NAME["min_rate"])
    signal_thresholds = serializers.DictField(required=False, default=None, allow_null=True,
                                              help_text='Writing signals\' thresholds {"signal": number or null}.')
    signal_auto_reject = serializers.ListField(child=serializers.CharField(), required=False, default=None,
                                               allow_null=True, help_text="Signals whose flag rejects a pending "
                                                                          "rewrite without a reviewer.")


STUDY_KINDS = ["ordering", "quadruple", "triple", "style-or-content", "likert", "ranking", "rewrite"]


class StudyCreateBase(serializers.Serializer):
    """What a study's items are made of (annotation.services.study_build.STUDY_INPUTS); the settings are added
    from their declaration below (StudyCreateInput)."""

    slug = serializers.SlugField(max_length=80)
    kind = serializers.ChoiceField(choices=STUDY_KINDS, default="ordering",
                                   help_text="`ordering` (with `setup`), a setup, likert, ranking or rewrite.")
    setup = serializers.ChoiceField(choices=["quadruple", "triple", "style-or-content"], required=False,
                                    allow_null=True, default=None)
    rewrite = RewriteCreateInput(required=False, allow_null=True, default=None,
                                 help_text="kind rewrite: its sources and settings (a reviewed rewrite study).")
    corpora = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    components = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    instance_status = serializers.ChoiceField(choices=["candidate", "validated", "any"], default="candidate")
    count = serializers.IntegerField(required=False, allow_null=True, default=None,
                                     help_text="Instances drawn at random (at least 1); empty: all.")
    seed = serializers.IntegerField(default=0)
    target_validated = serializers.IntegerField(
        required=False, allow_null=True, default=None,
        help_text="Sampling plan: validated instances wanted per component (give `components`).")
    validation_rates = serializers.DictField(child=serializers.FloatField(), required=False, allow_null=True,
                                             default=None, help_text='Sampling plan: {"simplicity": 0.68, …}.')
    rates_from_studies = serializers.ListField(child=serializers.CharField(), required=False, default=list,
                                               help_text="Sampling plan: studies to measure the rates on.")
    practice = serializers.ListField(child=serializers.DictField(), required=False, allow_null=True, default=None,
                                     help_text="Practice items {anchor_1, anchor_2, sentence_1, sentence_2, "
                                               "correct_answer, explanation} (ordering studies).")
    items = serializers.ListField(child=serializers.JSONField(), required=False, allow_null=True, default=None,
                                  help_text="Likert/ranking/rewrite items: {id, source, rewrite} (ranking: outputs "
                                            "[{id, text}]).")
    outputs = serializers.ListField(child=serializers.JSONField(), required=False, allow_null=True, default=None,
                                    help_text="System outputs to rate or rank: {id, source, rewrite[, system, "
                                              "source_id]} or {id, source, <system>: text…}.")
    outputs_study = serializers.CharField(required=False, allow_blank=True, default="",
                                          help_text="A rewrite study whose accepted rewrites are rated or ranked.")
    preset = serializers.ChoiceField(choices=["", "gyafc", "pauli"], required=False, default="",
                                     help_text="Rating preset: questions, k and instructions of a published study.")
    questions = serializers.JSONField(required=False, allow_null=True, default=None,
                                      help_text="Likert questions: a preset name (mind-the-style-gap, gyafc, pauli) "
                                                "or a list of {name, text, min, max, labels}.")
    rewrite_min_length = drf_field(REWRITE_BY_NAME["min_length"],
                                   help_text="Likert/ranking/unreviewed rewrite items: least characters of a "
                                             "free-text answer.")
    eligibility_questions = serializers.ListField(child=serializers.JSONField(), required=False, allow_null=True,
                                                  default=None, help_text="{name, text, choices, accept}; [] for none.")
    open = serializers.BooleanField(default=False, help_text="Open to participants at once (else a draft).")


StudyCreateInput = type("StudyCreateInput", (StudyCreateBase,), {
    "__module__": __name__,
    "__doc__": "POST /api/v1/studies/: a study of any kind, as the admin's \"Create a study\" and create_study "
               "create it; the settings' fields come from annotation.services.study_settings.STUDY_SETTINGS.",
    **drf_fields(),
})
