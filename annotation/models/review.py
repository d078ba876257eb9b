"""Rewrite studies and their review: a rewrite study's settings, reviewers' decisions on rewrites, and blocked
workers. The services are `annotation/services/rewrites.py` and `review.py`."""
from __future__ import annotations

from django.conf import settings
from django.db import models

# The copy rule's default threshold (annotation.services.rewrites.rewrite_check), for every door that creates a
# rewrite study: service, API serializer, admin form, command line.
COPY_THRESHOLD_DEFAULT = 90.0


class RewriteSettings(models.Model):
    """What makes a study a reviewed rewrite study: target style, instructions' examples, limits, copy threshold,
    persona questions and the qualification rule. A rewrite study without this row is not reviewed (its valid
    rewrites count as accepted)."""

    study = models.OneToOneField("annotation.Study", on_delete=models.CASCADE, related_name="rewrite_settings")
    target_style = models.CharField(max_length=100, blank=True, default="", help_text="e.g. formal")
    examples = models.JSONField(default=list, blank=True, help_text='[{"source": …, "rewrite": …, "note": …}]')
    max_length = models.PositiveIntegerField(default=500)
    copy_threshold = models.FloatField(
        default=COPY_THRESHOLD_DEFAULT,
        help_text="A rewrite whose rapidfuzz ratio with its source (0-100) is at least this is a copy.")
    review_required = models.BooleanField(default=True, help_text="Only rewrites accepted by a reviewer count.")
    persona_questions = models.JSONField(default=list, blank=True, help_text="Names of the persona questions asked.")
    filters = models.JSONField(default=dict, blank=True, help_text="Source preprocessing filters and their counts.")
    qualification_min_accepted = models.PositiveIntegerField(
        default=0, help_text="Minimum rewrites accepted in earlier studies (GYAFC's experts: more than 100).")
    qualification_min_rate = models.FloatField(
        default=0.0, help_text="Minimum acceptance rate (0-1) in earlier studies (GYAFC's experts: 1.0).")
    signal_thresholds = models.JSONField(
        default=dict, blank=True,
        help_text='Writing signals\' thresholds, e.g. {"mostly_pasted": 0.5, "typing_speed": 15}; a missing name takes '
                  "its default, null switches the signal off (README, \"Writing telemetry and signals\").")
    signal_auto_reject = models.JSONField(
        default=list, blank=True,
        help_text='Signals whose flag rejects a pending rewrite without a reviewer, e.g. ["mostly_pasted"]. Empty (the '
                  "default): signals only flag, a person decides.")

    class Meta:
        verbose_name_plural = "rewrite settings"
        constraints = [
            models.CheckConstraint(condition=models.Q(copy_threshold__gte=0, copy_threshold__lte=100),
                                   name="rewrite_copy_threshold_0_100"),
            models.CheckConstraint(condition=models.Q(qualification_min_rate__gte=0, qualification_min_rate__lte=1),
                                   name="rewrite_min_rate_0_1"),
        ]

    def __str__(self) -> str:
        return f"rewrite settings of {self.study_id}"


class RejectionReason(models.TextChoices):
    COPIED = "copied", "copied the source"
    MEANING = "meaning", "meaning changed"
    STYLE = "style", "not in the target style"
    GRAMMAR = "grammar", "ungrammatical"
    OTHER = "other", "other"


class RewriteReview(models.Model):
    """A reviewer's decision on one rewrite (a Response of a rewrite item). A rejected rewrite is invalidated and
    its slot released, so another worker writes it."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        ACCEPTED = "accepted", "accepted"
        REJECTED = "rejected", "rejected"

    response = models.OneToOneField("annotation.Response", on_delete=models.CASCADE, related_name="review")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    reason = models.CharField(max_length=10, choices=RejectionReason.choices, blank=True, default="")
    reason_text = models.CharField(max_length=500, blank=True, default="")
    flagged = models.BooleanField(default=False, help_text="Written by a worker who was later blocked.")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                 related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    shown_to_worker_at = models.DateTimeField(null=True, blank=True, help_text="When the worker saw the reason.")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~models.Q(status="rejected") | ~models.Q(reason=""),
                                   name="review_rejection_has_reason"),
        ]
        indexes = [models.Index(fields=["status", "flagged"])]

    def __str__(self) -> str:
        return f"{self.response_id}: {self.status}"


class WorkerBlock(models.Model):
    """A blocked person (platform + id, across studies): their later sessions are refused."""

    platform = models.CharField(max_length=10)
    external_id = models.CharField(max_length=128)
    reason = models.CharField(max_length=500, blank=True, default="")
    blocked_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "external_id"], name="worker_block_unique")]

    def __str__(self) -> str:
        return f"{self.platform}:{self.external_id}"
