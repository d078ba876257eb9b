"""What moves money or messages people: decisions sent, the bonus ledger, Prolific's bulk bonus set-ups, messages.

Every row is written (with its idempotency key and state) before the platform is called, and its state says what
is known about the call: a call whose outcome is unknown (a timeout or a reset after the request left, a 5xx) is
left "unknown" for a person to resolve, never sent again automatically."""
from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class CallState(models.TextChoices):
    PENDING = "pending", "written, not sent yet"
    SENDING = "sending", "being sent"
    SENT = "sent", "sent: the platform accepted it"
    FAILED = "failed", "refused by the platform (nothing done)"
    UNKNOWN = "unknown", "outcome unknown: check on the platform"
    CONFIRMED = "confirmed", "confirmed on the platform after an unknown outcome"
    NOT_SENT = "not_sent", "resolved: the platform never did it"


class Decision(models.Model):
    """One decision on one submission/assignment, sent once: approve, reject (with category and message), ask to
    return, or screen out."""

    class Kind(models.TextChoices):
        APPROVE = "approve", "approve"
        REJECT = "reject", "reject"
        RETURN = "return", "ask to return"
        SCREEN_OUT = "screen_out", "screen out"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    platform_study = models.ForeignKey("platforms.PlatformStudy", on_delete=models.CASCADE, related_name="decisions")
    submission = models.OneToOneField("platforms.PlatformSubmission", on_delete=models.CASCADE,
                                      related_name="decision")
    worker_id = models.CharField(max_length=128)
    kind = models.CharField(max_length=12, choices=Kind.choices)
    evidence = models.TextField(blank=True, default="", help_text="Why, from StyleCrowd's recommendation.")
    rejection_category = models.CharField(max_length=24, blank=True, default="")
    message = models.TextField(blank=True, default="", help_text="Sent to the participant (rejection, return).")
    state = models.CharField(max_length=10, choices=CallState.choices, default=CallState.PENDING)
    call_key = models.UUIDField(default=uuid.uuid4, help_text="The call that sent it (shared by a bulk approval).")
    request = models.JSONField(default=dict, blank=True, help_text="Exactly what was sent.")
    response = models.JSONField(default=dict, blank=True, help_text="The platform's answer.")
    error = models.TextField(blank=True, default="")
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["platform_study", "created_at"]
        constraints = [
            models.CheckConstraint(condition=~models.Q(kind="reject") | ~models.Q(rejection_category=""),
                                   name="decision_reject_has_category"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.worker_id} ({self.state})"


class BonusRule(models.Model):
    """A bonus a researcher sets: per accepted rewrite, per correct known-answer item, or flat per approved
    participant; amounts in the account's currency."""

    class Kind(models.TextChoices):
        PER_ACCEPTED_REWRITE = "per_accepted_rewrite", "per accepted rewrite"
        PER_CORRECT_ITEM = "per_correct_item", "per correct known-answer item"
        FLAT = "flat", "flat, per approved participant"

    platform_study = models.ForeignKey("platforms.PlatformStudy", on_delete=models.CASCADE, related_name="bonus_rules")
    kind = models.CharField(max_length=24, choices=Kind.choices)
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    label = models.CharField(max_length=60, blank=True, default="")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="bonus_rule_amount_positive"),
            models.UniqueConstraint(fields=["platform_study", "kind", "label"], name="bonus_rule_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.amount}"


class BonusPayment(models.Model):
    """A row of the bonus ledger: one amount owed to one worker for one reason. Its id is the idempotency key
    (MTurk's UniqueRequestToken). (study, worker, source, units_upto) is unique, so computing the same bonuses twice,
    or in two workers at once, writes them once."""

    class State(models.TextChoices):
        PENDING = "pending", "owed, not sent"
        CLAIMED = "claimed", "being sent (in a set-up / call)"
        PAID = "paid", "paid"
        FAILED = "failed", "refused by the platform: not paid"
        UNKNOWN = "unknown", "outcome unknown: check on the platform"
        CANCELLED = "cancelled", "cancelled by a researcher"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    platform_study = models.ForeignKey("platforms.PlatformStudy", on_delete=models.CASCADE, related_name="bonuses")
    worker_id = models.CharField(max_length=128)
    submission = models.ForeignKey("platforms.PlatformSubmission", on_delete=models.PROTECT, null=True, blank=True,
                                   related_name="bonuses")
    source = models.CharField(max_length=80, help_text='What earned it: "rule:<id>" or "flat:<label>".')
    units_upto = models.PositiveIntegerField(default=1, help_text="Counted units this row brings the total up to.")
    units = models.PositiveIntegerField(default=1, help_text="Units paid by this row.")
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    currency = models.CharField(max_length=3)
    reason = models.CharField(max_length=500, blank=True, default="", help_text="Shown to the worker (MTurk).")
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    bulk = models.ForeignKey("platforms.BulkBonus", on_delete=models.PROTECT, null=True, blank=True,
                             related_name="payments")
    response = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    paid_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="+")
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        ordering = ["platform_study", "created_at"]
        verbose_name = "bonus payment (ledger)"
        verbose_name_plural = "bonus ledger"
        constraints = [
            models.UniqueConstraint(fields=["platform_study", "worker_id", "source", "units_upto"],
                                    name="bonus_payment_once"),
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="bonus_payment_amount_positive"),
        ]
        indexes = [models.Index(fields=["platform_study", "state"])]

    def __str__(self) -> str:
        return f"{self.amount} {self.currency} to {self.worker_id} ({self.state})"


class BulkBonus(models.Model):
    """One Prolific bulk bonus: set up (its id stored), then paid. The pay call is made at most once per set-up:
    `pay_called_at` is written, committed, before the call, and only a row still in `set_up` with no pay call may
    take that step."""

    class State(models.TextChoices):
        SETTING_UP = "setting_up", "being set up"
        SET_UP = "set_up", "set up, not paid"
        SETUP_FAILED = "setup_failed", "set-up refused"
        SETUP_UNKNOWN = "setup_unknown", "set-up outcome unknown (no money moved)"
        PAYING = "paying", "pay call sent"
        PAID = "paid", "paid"
        PAY_FAILED = "pay_failed", "pay refused (not paid)"
        PAY_UNKNOWN = "pay_unknown", "pay outcome unknown: check on Prolific"
        RESOLVED_PAID = "resolved_paid", "resolved: paid"
        RESOLVED_UNPAID = "resolved_unpaid", "resolved: not paid"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    platform_study = models.ForeignKey("platforms.PlatformStudy", on_delete=models.CASCADE, related_name="bulk_bonuses")
    external_id = models.CharField(max_length=64, blank=True, default="", help_text="Prolific's bulk bonus id.")
    state = models.CharField(max_length=16, choices=State.choices, default=State.SETTING_UP)
    csv = models.TextField(help_text="The csv_bonuses sent: <participant_id>,<amount> per line.")
    total = models.DecimalField(max_digits=10, decimal_places=2)
    currency = models.CharField(max_length=3)
    setup_response = models.JSONField(default=dict, blank=True)
    pay_response = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    setup_called_at = models.DateTimeField(null=True, blank=True)
    pay_called_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["platform_study", "created_at"]
        verbose_name = "Prolific bulk bonus"
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(state__in=["paying", "paid", "pay_failed", "pay_unknown"])
                | models.Q(pay_called_at__isnull=False), name="bulk_bonus_paid_after_pay_call"),
        ]

    def __str__(self) -> str:
        return f"bulk bonus {self.external_id or self.pk} ({self.state})"


class PlatformMessage(models.Model):
    """One message call (a chunk of recipients within the platform's limit); the text is stored."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    platform_study = models.ForeignKey("platforms.PlatformStudy", on_delete=models.CASCADE, related_name="messages")
    group_key = models.UUIDField(help_text="The one send this call is a part of.")
    recipients = models.JSONField(default=list)
    subject = models.CharField(max_length=200, blank=True, default="")
    body = models.TextField()
    state = models.CharField(max_length=10, choices=CallState.choices, default=CallState.PENDING)
    response = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["platform_study", "created_at"]

    def __str__(self) -> str:
        return f"message to {len(self.recipients)} ({self.state})"
