"""What a study collects: studies (their settings, codes and integrity rules) and their items, with the item
kinds and the entry platforms a study accepts."""
from __future__ import annotations

import secrets
from typing import Any

from django.core.validators import URLValidator
from django.db import models

from tasks.models import StyleComponent, TaskInstance


class ItemKind(models.TextChoices):
    QUADRUPLE = "quadruple", "quadruple"
    TRIPLE = "triple", "triple"
    STYLE_OR_CONTENT = "style-or-content", "style or content"
    LIKERT = "likert", "Likert ratings"
    RANKING = "ranking", "ranking of system outputs"
    REWRITE = "rewrite", "free-text rewrite"


# The answers an ordering item offers, in its canonical order; a display may swap the two sentences, and
# `shown["swapped"]` records it.
CHOICES: dict[str, list[str]] = {
    ItemKind.QUADRUPLE: ["S1-S2", "S2-S1"],
    ItemKind.TRIPLE: ["S1", "S2"],
    ItemKind.STYLE_OR_CONTENT: ["S1", "S2"],
}
_SWAP = {"S1": "S2", "S2": "S1", "S1-S2": "S2-S1", "S2-S1": "S1-S2"}


def swap_answer(answer: str) -> str:
    return _SWAP.get(answer, answer)


def canonical_answer(*, shown: dict[str, Any], displayed: str) -> str:
    """The answer in the item's canonical order (as stored): undo the display swap."""
    return swap_answer(displayed) if shown.get("swapped") else displayed


def displayed_answer(*, shown: dict[str, Any], canonical: str) -> str:
    return swap_answer(canonical) if shown.get("swapped") else canonical


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


class UncertaintyModel(models.TextChoices):
    """A study's model of its items' p_correct (scoring.agreement.uncertainty.study_uncertainty)."""

    AUTO = "auto", "auto"
    ONE_COIN = "one_coin", "one_coin"
    ITEM_DIFFICULTY = "item_difficulty", "item_difficulty"


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
    language = models.CharField(
        max_length=35, default="en",
        help_text="BCP 47 tag: the participant pages are shown in it; item texts are marked with it (fr, pt-BR, ar).",
    )
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
    # Per-item uncertainty (scoring/agreement/uncertainty.py) and stopping on its posterior (tasks/stel/posterior.py).
    uncertainty_model = models.CharField(
        max_length=20, choices=UncertaintyModel.choices, default=UncertaintyModel.AUTO,
        help_text="The model of the items' p_correct: auto (item difficulty classes only where the answers are "
                  "overdispersed against the one-coin model), one_coin, or item_difficulty (data known to hold very "
                  "hard items).",
    )
    posterior_stop = models.FloatField(
        null=True, blank=True,
        help_text="Adaptive studies: validate an item and stop asking once P(gold right | its answers) reaches this "
                  "(e.g. 0.99); dropped once it cannot within k answers. Empty: off (m of k).",
    )
    posterior_drop = models.FloatField(
        null=True, blank=True, help_text="Also drop an item early once P(gold right | its answers) is at most this.",
    )
    posterior_pilot_items = models.PositiveIntegerField(
        default=100, help_text="Items decided by m of k before the posterior rule's parameters are first fitted.",
    )
    posterior_fit = models.JSONField(
        default=dict, blank=True,
        help_text="The posterior rule's parameters, fitted by the refit job on the study's answers so far: "
                  "vote_accuracy, share_gold_right, items, answers, fitted_at. Empty: not fitted (m of k).",
    )
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
    prolific_test_study_ids = models.JSONField(
        default=list, blank=True,
        help_text="Prolific test studies of this study's draft (a test participant's pre-flight run): their links are "
                  "accepted too, and the test participant's answers are excluded once the run is checked.",
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
    # Personal data (docs/data-protection.md): what the consent statement promises and retention applies.
    retention_days = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="Days after the study is closed and its payments are settled before raw platform ids become "
                  "pseudonyms and persona answers and telemetry detail are deleted. Empty: "
                  "settings.STYLECROWD_RETENTION_DAYS.",
    )
    release_annotator_labels = models.BooleanField(
        default=True,
        help_text="Publish each valid vote with its annotator's pseudonym (the per-annotator votes table); the "
                  "consent says so.",
    )
    special_category_consent = models.TextField(
        blank=True, default="",
        help_text="The explicit-consent statement for special-category questions (ethnicity, political orientation, "
                  "a question marked special_category); required before a study asking them is created or opened.",
    )
    closed_at = models.DateTimeField(null=True, blank=True, help_text="When the study was closed.")
    retention_applied_at = models.DateTimeField(
        null=True, blank=True, help_text="When retention replaced raw ids and deleted persona answers and telemetry.",
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
