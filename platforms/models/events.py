"""Webhook deliveries from the platform, each recorded once."""
from __future__ import annotations

from django.db import models


class WebhookEvent(models.Model):
    """One event a platform delivered. `event_id` (Prolific's X-Event-ID, or the body's SHA-256 where a delivery has
    none) is unique in the database, so a redelivery or a restart cannot process it twice."""

    class State(models.TextChoices):
        RECEIVED = "received", "received"
        PROCESSED = "processed", "processed"
        IGNORED = "ignored", "ignored (not a study of ours)"
        FAILED = "failed", "failed"

    account = models.ForeignKey("platforms.PlatformAccount", on_delete=models.CASCADE, related_name="events")
    event_id = models.CharField(max_length=128)
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
        constraints = [models.UniqueConstraint(fields=["account", "event_id"], name="webhook_event_once")]

    def __str__(self) -> str:
        return f"{self.event_type} {self.resource_id} ({self.state})"
