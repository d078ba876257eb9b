"""When: a participant's sessions (batches, behind an unguessable token) and the reservations that hold an item's
slots while a batch is open."""
from __future__ import annotations

from django.db import models

from annotation.models.consent import ConsentVersion, new_consent_receipt
from annotation.models.participants import Participant
from annotation.models.studies import Study, StudyItem
from tasks.models import ScreeningQuestion


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
    opened_from = models.CharField(
        max_length=32, blank=True, default="",
        help_text="Keyed pseudonym of the client address that opened it (the open-batch cap per address); never the "
                  "address itself.",
    )
    eligibility_answers = models.JSONField(default=dict, blank=True)
    n_items = models.PositiveSmallIntegerField(default=0, help_text="Items reserved when the batch started.")
    created_at = models.DateTimeField(auto_now_add=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    consent_version = models.ForeignKey(
        ConsentVersion, on_delete=models.PROTECT, null=True, blank=True, related_name="batches",
        help_text="The consent text the participant agreed to in this session.",
    )
    special_consented_at = models.DateTimeField(
        null=True, blank=True, help_text="When the explicit consent to special-category questions was ticked.",
    )
    consent_receipt = models.CharField(
        max_length=16, default=new_consent_receipt, db_index=True,
        help_text="The code shown with the consent, which the participant quotes to withdraw or ask for erasure.",
    )
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
