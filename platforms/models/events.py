"""Webhook deliveries from the platform, each recorded once: keyed by what the platform signed."""
from __future__ import annotations

from django.db import models


class WebhookEvent(models.Model):
    """One event a platform delivered. `signed_digest` (the HMAC the platform signed over the timestamp and the body,
    hex) is unique per account in the database, so a replayed delivery — whatever unsigned headers it carries — or a
    restart cannot store or process it twice. `event_id` (Prolific's X-Event-ID, unsigned) is kept for reference
    only. Rows recorded before the digest existed have none (NULL, outside the constraint)."""

    class State(models.TextChoices):
        RECEIVED = "received", "received"
        PROCESSED = "processed", "processed"
        IGNORED = "ignored", "ignored (not a study of ours)"
        FAILED = "failed", "failed"

    account = models.ForeignKey("platforms.PlatformAccount", on_delete=models.CASCADE, related_name="events")
    event_id = models.CharField(max_length=128, help_text="The delivery's X-Event-ID (unsigned: not a key).")
    signed_digest = models.CharField(max_length=64, null=True, blank=True,
                                     help_text="HMAC-SHA256 (hex) of the signed timestamp and body: the event's key.")
    event_type = models.CharField(max_length=64, blank=True, default="")
    resource_id = models.CharField(max_length=64, blank=True, default="")
    status = models.CharField(max_length=32, blank=True, default="")
    payload = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.RECEIVED)
    error = models.TextField(blank=True, default="")
    received_at = models.DateTimeField(auto_now_add=True)
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-received_at"]
        constraints = [models.UniqueConstraint(fields=["account", "signed_digest"], name="webhook_event_signed_once")]

    def __str__(self) -> str:
        return f"{self.event_type} {self.resource_id} ({self.state})"
