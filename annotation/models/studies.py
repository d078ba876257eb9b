"""Who annotates what, when: studies, their items, participants, batches, reservations and responses.

Scoring reads `Response` (study, study_item, participant, question, answer, value, is_valid, is_correct,
is_screening, answered_at); keep those fields' names and meaning stable.
"""
from __future__ import annotations

import secrets

from django.core.validators import URLValidator
from django.db import models

from tasks.models import ScreeningQuestion, StyleComponent, TaskInstance


class ItemKind(models.TextChoices):
    QUADRUPLE = "quadruple", "quadruple"
    TRIPLE = "triple", "triple"
    STYLE_OR_CONTENT = "style-or-content", "style or content"
    LIKERT = "likert", "Likert ratings"
    RANKING = "ranking", "ranking of system outputs"
    REWRITE = "rewrite", "free-text rewrite"


HTTP_URL = URLValidator(schemes=["http", "https"])  # a redirect the participant's browser follows
ORDERING_KINDS = (ItemKind.QUADRUPLE, ItemKind.TRIPLE, ItemKind.STYLE_OR_CONTENT)


def new_study_code() -> str:
    """A random code participants paste into the platform: 8 characters from an alphabet without look-alikes.

    The completion and the screened-out codes are drawn independently, so knowing one says nothing about the other.
    """
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "".join(secrets.choice(alphabet) for _ in range(8))


class EntryPlatform(models.TextChoices):
    ANY = "any", "any link (Prolific, MTurk or anonymous)"
    PROLIFIC = "prolific", "Prolific only"
    MTURK = "mturk", "MTurk only"


class Study(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "draft"
        ACTIVE = "active", "active"
        CLOSED = "closed", "closed"

    class Origin(models.TextChoices):
        PLATFORM = "platform", "collected on this platform"
        IMPORTED = "imported", "imported annotations"

    slug = models.SlugField(max_length=80, unique=True)
    title = models.CharField(max_length=200, blank=True, default="")
    item_kind = models.CharField(max_length=20, choices=ItemKind.choices, default=ItemKind.QUADRUPLE)
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.PLATFORM)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    selection = models.JSONField(default=dict, blank=True, help_text="corpus/component/setup/status/count/seed.")
    annotators_per_item = models.PositiveSmallIntegerField(default=5, help_text="k distinct people per item.")
    min_correct = models.PositiveSmallIntegerField(default=3, help_text="m of k correct to validate an instance.")
    items_per_batch = models.PositiveSmallIntegerField(default=14)
    screening_per_batch = models.PositiveSmallIntegerField(default=2)
    max_batches_per_participant = models.PositiveSmallIntegerField(default=5)
    batch_time_limit_minutes = models.PositiveSmallIntegerField(default=30)
    allow_multiple_setups = models.BooleanField(
        default=False, help_text="Let one participant see the triple and the quadruple form of one instance."
    )
    adaptive_stopping = models.BooleanField(
        default=False, help_text="Stop serving an instance once its filter decision can no longer change."
    )
    guide_stop_after = models.PositiveSmallIntegerField(
        null=True, blank=True,
        help_text="Adaptive studies: also stop an item once its first this-many valid human answers all equal the "
                  "guide's answer (a model that answered the same in every order). Empty: off.",
    )
    guide_source = models.CharField(max_length=200, blank=True, default="",
                                    help_text="Where the items' guide answers came from (a model run).")
    consent_text = models.TextField(blank=True, default="")
    eligibility_questions = models.JSONField(
        default=list, blank=True,
        help_text='[{"name": "native", "text": "Is English your native language?", "choices": ["yes", "no"], '
                  '"accept": ["yes"]}]',
    )
    task_description = models.TextField(
        blank=True, default="",
        help_text="The instructions before the items. create_study (and the API) compose them from the study's style "
                  "components and setup, with a worked example per component, unless one is given.",
    )
    questions = models.JSONField(
        default=list, blank=True,
        help_text='Likert questions: [{"name": "style", "text": …, "min": 1, "max": 5, "labels": {…}, '
                  '"level": "ordinal"}]',
    )
    rewrite_min_length = models.PositiveSmallIntegerField(default=10)
    completion_code = models.CharField(
        max_length=64, default=new_study_code, help_text="Shown to participants who finish a batch (full pay)."
    )
    screened_out_code = models.CharField(
        max_length=64, default=new_study_code,
        help_text="Shown to participants screened out by the eligibility questions; drawn independently of the "
                  "completion code (Prolific: the 'screened out' completion code of a fixed screening payment).",
    )
    redirect_url = models.URLField(
        max_length=500, blank=True, default="", validators=[HTTP_URL],
        help_text="Where a finished participant is sent, http(s) only; {code} is replaced by the completion code.",
    )
    estimated_minutes = models.PositiveSmallIntegerField(default=10)
    target_hourly_pay = models.DecimalField(max_digits=6, decimal_places=2, default=9)
    # Participation integrity (docs/annotator-api.md, "Who may take part").
    platform = models.CharField(
        max_length=10, choices=EntryPlatform.choices, default=EntryPlatform.ANY,
        help_text="Which links are accepted. Prolific/MTurk studies require and check the platform's parameters.",
    )
    prolific_study_id = models.CharField(
        max_length=64, blank=True, default="",
        help_text="Prolific's study id: when set, a Prolific link must carry STUDY_ID equal to it.",
    )
    allow_anonymous = models.BooleanField(
        default=True, help_text="Accept links without a platform id (off, and enforced off, for platform studies).",
    )
    first_answer_grace_seconds = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="A started batch whose first answer has not arrived within this many seconds gives its items "
                  "back. Empty: settings.ANNOTATION_FIRST_ANSWER_GRACE_SECONDS.",
    )
    max_open_batches = models.PositiveIntegerField(
        null=True, blank=True, help_text="At most this many batches open at once (empty: no cap).",
    )
    min_seconds_per_item = models.FloatField(
        null=True, blank=True,
        help_text="A participant whose median server-measured time per item is below this is flagged a speeder.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(platform="any") | models.Q(allow_anonymous=False),
                name="study_platform_not_anonymous",
            ),
            models.CheckConstraint(condition=models.Q(annotators_per_item__gte=1), name="study_k_positive"),
            models.CheckConstraint(
                condition=models.Q(min_correct__lte=models.F("annotators_per_item")), name="study_m_at_most_k"
            ),
            # The screened-out code must never pay the full reward.
            models.CheckConstraint(
                condition=~models.Q(screened_out_code=models.F("completion_code")), name="study_codes_differ",
                violation_error_message="The screened-out code must differ from the completion code.",
            ),
            # A participant's browser is sent there: never a javascript:/data: URL running in the app's origin.
            models.CheckConstraint(
                condition=models.Q(redirect_url="") | models.Q(redirect_url__iregex=r"^https?://"),
                name="study_redirect_url_http",
            ),
        ]

    def __str__(self) -> str:
        return self.slug


def random_sort_key() -> int:
    return secrets.randbelow(2**31 - 1)


class StudyItem(models.Model):
    """One thing a study collects k annotations for: a task instance, or a Likert/ranking/rewrite/imported item.

    `payload` holds what non-instance items show: `source`, `rewrite`, `reference`, `target_style`, `system`,
    `outputs` (ranking) or `item_text` (imported annotations).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    instance = models.ForeignKey(TaskInstance, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    external_id = models.CharField(max_length=255, help_text="STEL ID of the instance, or the imported item id.")
    position = models.PositiveIntegerField(default=0)
    kind = models.CharField(max_length=20, choices=ItemKind.choices)
    component = models.ForeignKey(StyleComponent, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    family = models.CharField(max_length=255, blank=True, default="", db_index=True)
    payload = models.JSONField(default=dict, blank=True)
    correct_answer = models.CharField(max_length=64, blank=True, default="", help_text="Empty when unknown.")
    is_closed = models.BooleanField(default=False, help_text="Closed early by adaptive collection.")
    guide_answer = models.CharField(
        max_length=64, blank=True, default="",
        help_text="The guide's answer (a model that answered the same in every order); only adaptive stopping reads "
                  "it, never a participant, a count or a statistic.",
    )
    # The serving order (annotation/services/engine.py): fewest holders first, ties broken by a random key drawn
    # once per item. `fill` is written by reservers, who hold the item's row lock and count its holders exactly;
    # releases elsewhere (expiry, exclusion) leave it high until the periodic tidy-up or the next reserver
    # recounts. It is never below the live count, and it only orders candidates: whether a slot is free is
    # always counted from the reservations themselves.
    fill = models.PositiveSmallIntegerField(default=0, help_text="Slots held at the last count (serving order).")
    sort_key = models.IntegerField(default=random_sort_key, help_text="Random tie-break of the serving order.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "position"]
        constraints = [models.UniqueConstraint(fields=["study", "external_id"], name="item_unique_external_id")]
        indexes = [
            models.Index(fields=["study", "fill", "sort_key"], name="studyitem_serving_order",
                         condition=models.Q(is_closed=False)),
        ]

    def __str__(self) -> str:
        return f"{self.study_id}:{self.external_id}"


class Participant(models.Model):
    class Platform(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Amazon Mechanical Turk"
        ANONYMOUS = "anonymous", "anonymous link"
        IMPORTED = "imported", "imported annotations"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    platform = models.CharField(max_length=10, choices=Platform.choices)
    external_id = models.CharField(max_length=128, help_text="PROLIFIC_PID, MTurk workerId, or generated.")
    screened_out = models.BooleanField(default=False, help_text="Failed eligibility: not allowed to annotate.")
    excluded = models.BooleanField(default=False, help_text="Failed a screening question: responses excluded.")
    exclusion_reason = models.CharField(max_length=200, blank=True, default="")
    excluded_at = models.DateTimeField(null=True, blank=True)
    persona = models.JSONField(default=dict, blank=True, help_text="Persona questionnaire answers (PASTEL).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["study", "platform", "external_id"], name="participant_unique"),
        ]
        # One person across studies (a reserver skips every family they saw in any study).
        indexes = [models.Index(fields=["platform", "external_id"], name="participant_person")]

    def __str__(self) -> str:
        return f"{self.platform}:{self.external_id}"


class TelemetryStatus(models.TextChoices):
    NONE = "none", "no telemetry"
    CONSISTENT = "consistent", "consistent"
    INCONSISTENT = "inconsistent", "inconsistent"


class Response(models.Model):
    """One answer of one participant to one item (and one question of it, for Likert items)."""

    # No index of its own: the (study, is_valid, study_item) index below serves every lookup by study.
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="responses", db_index=False)
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="responses")
    study_item = models.ForeignKey(StudyItem, on_delete=models.CASCADE, null=True, blank=True, related_name="responses")
    screening_question = models.ForeignKey(
        ScreeningQuestion, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    batch_number = models.PositiveSmallIntegerField(default=1)
    question = models.CharField(max_length=64, blank=True, default="", help_text="Likert question name.")
    answer = models.TextField(help_text="Canonical answer: S1-S2, S2, 4, a JSON ranking, a rewrite.")
    value = models.FloatField(null=True, blank=True, help_text="Numeric value of a rating.")
    is_screening = models.BooleanField(default=False)
    is_correct = models.BooleanField(null=True, blank=True, help_text="Empty when the item has no correct answer.")
    is_valid = models.BooleanField(default=True, help_text="False once the participant is excluded.")
    shown = models.JSONField(default=dict, blank=True, help_text="Exactly what was shown: texts, order, positions.")
    shown_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField()
    seconds = models.FloatField(
        null=True, blank=True, help_text="Client-reported seconds on the item (information only, 0…3600)."
    )
    server_seconds = models.FloatField(
        null=True, blank=True, help_text="Server-measured seconds from serving the item to its answer."
    )
    batch = models.ForeignKey("Batch", on_delete=models.SET_NULL, null=True, blank=True, related_name="responses")
    reservation = models.ForeignKey(
        "Reservation", on_delete=models.SET_NULL, null=True, blank=True, related_name="responses"
    )
    # Writing telemetry of a free-text answer (annotation/services/telemetry.py): counts and durations only, never
    # the keys typed. `db_default`: the hot path's INSERT does not name these columns (it never stores telemetry).
    telemetry = models.JSONField(
        null=True, blank=True,
        help_text="What the page measured while the answer was written (counts and durations), the server's times "
                  "and the consistency check's findings; empty: no telemetry was sent.")
    telemetry_status = models.CharField(
        max_length=12, choices=TelemetryStatus.choices, default=TelemetryStatus.NONE, db_default=TelemetryStatus.NONE,
        help_text="none: no telemetry sent; inconsistent: it contradicts the text or the server's clock.")

    class Meta:
        ordering = ["answered_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "study_item", "question"], name="response_one_per_item",
                condition=models.Q(study_item__isnull=False),
            ),
            models.UniqueConstraint(
                fields=["participant", "screening_question", "batch_number"], name="response_one_per_screening",
                condition=models.Q(screening_question__isnull=False),
            ),
            models.CheckConstraint(
                condition=models.Q(study_item__isnull=False) | models.Q(screening_question__isnull=False),
                name="response_has_target",
            ),
        ]
        indexes = [models.Index(fields=["study", "is_valid", "study_item"])]

    def __str__(self) -> str:
        return f"{self.participant_id} → {self.study_item_id or self.screening_question_id}: {self.answer}"


class Batch(models.Model):
    """One participant session: a batch of reserved items behind an unguessable token (the only credential)."""

    class State(models.TextChoices):
        CONSENT = "consent", "consent"
        ELIGIBILITY = "eligibility", "eligibility"
        INSTRUCTIONS = "instructions", "instructions"
        ITEMS = "items", "items"
        COMPLETED = "completed", "completed"
        SCREENED_OUT = "screened_out", "screened out"
        EXPIRED = "expired", "expired"
        DECLINED = "declined", "declined consent"

    OPEN_STATES = (State.CONSENT, State.ELIGIBILITY, State.INSTRUCTIONS, State.ITEMS)

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="batches")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="batches")
    number = models.PositiveSmallIntegerField(help_text="1 for the participant's first batch in the study.")
    token = models.CharField(max_length=64, unique=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.CONSENT)
    study_ref = models.CharField(max_length=128, blank=True, default="", help_text="Prolific STUDY_ID.")
    session_ref = models.CharField(max_length=128, blank=True, default="", help_text="Prolific SESSION_ID.")
    assignment = models.CharField(max_length=128, blank=True, default="", help_text="MTurk assignmentId.")
    hit = models.CharField(max_length=128, blank=True, default="", help_text="MTurk hitId.")
    eligibility_answers = models.JSONField(default=dict, blank=True)
    n_items = models.PositiveSmallIntegerField(default=0, help_text="Items reserved when the batch started.")
    created_at = models.DateTimeField(auto_now_add=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "created_at"]
        verbose_name_plural = "batches"
        constraints = [
            models.UniqueConstraint(fields=["participant", "number"], name="batch_unique_number"),
            # One open session per participant: a returning participant gets it back instead of a second one.
            models.UniqueConstraint(
                fields=["participant"], name="batch_one_open_per_participant",
                condition=models.Q(state__in=["consent", "eligibility", "instructions", "items"]),
            ),
            models.CheckConstraint(condition=models.Q(number__gte=1), name="batch_number_positive"),
            models.CheckConstraint(
                condition=~models.Q(state="declined") | models.Q(finished_at__isnull=False, consented_at__isnull=True),
                name="batch_declined_finished_unconsented",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.participant} batch {self.number} ({self.state})"


class Reservation(models.Model):
    """A place in a batch: a study item (holding one of its k slots) or a screening question.

    A reservation holds its slot while `released` is False: until it expires unanswered, or its participant is
    excluded. The partial unique constraint on (study_item, slot) is what makes "never more than k" hold in the
    database itself, whatever the concurrency.
    """

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="reservations")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="reservations")
    study_item = models.ForeignKey(
        StudyItem, on_delete=models.CASCADE, null=True, blank=True, related_name="reservations"
    )
    screening_question = models.ForeignKey(
        ScreeningQuestion, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    slot = models.PositiveSmallIntegerField(null=True, blank=True, help_text="1…k for study items.")
    position = models.PositiveSmallIntegerField(help_text="0-based place in the batch.")
    public_id = models.CharField(max_length=32, unique=True, help_text="Opaque id sent to the participant.")
    shown = models.JSONField(default=dict, blank=True, help_text="What is shown: texts, order, swap, outputs.")
    public_item = models.JSONField(
        default=dict, blank=True, help_text="The item exactly as `next` sends it (no answer, no swap flag)."
    )
    expires_at = models.DateTimeField()
    released = models.BooleanField(default=False)
    released_at = models.DateTimeField(null=True, blank=True)
    served_at = models.DateTimeField(null=True, blank=True, help_text="When `next` first returned this item.")
    shown_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["batch", "position"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "position"], name="reservation_unique_position"),
            models.UniqueConstraint(
                fields=["study_item", "slot"], name="reservation_one_holder_per_slot",
                condition=models.Q(released=False, study_item__isnull=False),
            ),
            models.UniqueConstraint(
                fields=["participant", "study_item"], name="reservation_item_once_per_participant",
                condition=models.Q(study_item__isnull=False),
            ),
            models.CheckConstraint(
                condition=(models.Q(study_item__isnull=False, screening_question__isnull=True, slot__gte=1))
                | (models.Q(study_item__isnull=True, screening_question__isnull=False, slot__isnull=True)),
                name="reservation_item_xor_screening",
            ),
        ]
        indexes = [models.Index(fields=["study_item", "released"]), models.Index(fields=["released", "expires_at"])]

    def __str__(self) -> str:
        return f"{self.batch_id}#{self.position}"


from annotation.models_practice import PracticeAnswer, PracticeItem  # noqa: E402,F401  (practice items)
from annotation.models_review import RewriteReview, RewriteSettings, WorkerBlock  # noqa: E402,F401  (rewrites)
from annotation.models_signals import WritingSignal  # noqa: E402,F401  (writing signals of rewrites)
