"""Platform accounts and the platform's side of a study."""
from __future__ import annotations

import secrets

from django.db import models


class Platform(models.TextChoices):
    PROLIFIC = "prolific", "Prolific"
    MTURK = "mturk", "Amazon Mechanical Turk"
    # In process memory, no account or network (platforms/backends/mock.py); its people enter by the anonymous link.
    MOCK = "mock", "Mock platform (in memory, for demos)"


class PlatformAccount(models.Model):
    """Credentials for one platform account. A Prolific token comes from an environment variable (`token_env`) or is
    stored encrypted (`token_encrypted`, key from STYLECROWD_ENCRYPTION_KEY); it is never shown back by any door. MTurk
    credentials come from boto3's own chain (environment, shared files, instance role), optionally a named profile."""

    name = models.SlugField(max_length=80, unique=True)
    platform = models.CharField(max_length=10, choices=Platform.choices)
    # Prolific
    token_env = models.CharField(
        max_length=100, blank=True, default="",
        help_text="Name of the environment variable holding the Prolific API token (e.g. PROLIFIC_API_TOKEN).")
    token_encrypted = models.TextField(blank=True, default="", editable=False,
                                       help_text="The token, encrypted at rest; never displayed.")
    api_url = models.URLField(blank=True, default="", help_text="Empty: settings.PROLIFIC_API_URL.")
    workspace_id = models.CharField(max_length=64, blank=True, default="")
    project_id = models.CharField(max_length=64, blank=True, default="")
    user_id = models.CharField(max_length=64, blank=True, default="", editable=False,
                               help_text="The platform's id of the account owner, read when the account was checked.")
    # Webhooks (Prolific): the workspace's signing secret, encrypted; the subscription's id.
    webhook_secret_encrypted = models.TextField(blank=True, default="", editable=False)
    webhook_subscription_id = models.CharField(max_length=64, blank=True, default="", editable=False)
    webhook_url = models.URLField(max_length=500, blank=True, default="", editable=False)
    # MTurk
    sandbox = models.BooleanField(default=True, help_text="MTurk: the requester sandbox (no real money) unless off.")
    aws_profile = models.CharField(max_length=100, blank=True, default="",
                                   help_text="MTurk: a profile of boto3's shared credentials (empty: default chain).")
    endpoint_url = models.URLField(blank=True, default="",
                                   help_text="MTurk: overrides the endpoint (empty: settings.MTURK_ENDPOINT_URL, then "
                                             "AWS's sandbox or live endpoint).")
    # Block list kept on the platform: a Prolific participant group / an MTurk qualification type.
    block_list_id = models.CharField(max_length=64, blank=True, default="", editable=False,
                                     help_text="Prolific participant group or MTurk qualification type id.")
    checked_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_platform_display()})"

    def __repr__(self) -> str:  # never the token
        return f"<PlatformAccount {self.name} {self.platform}>"


def new_return_code() -> str:
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "R" + "".join(secrets.choice(alphabet) for _ in range(7))


class PlatformStudy(models.Model):
    """A StyleCrowd study run on a platform: the account, the platform's ids and status, what was sent to create it,
    and the money rules (reward, screen-out pay, bonus caps)."""

    class State(models.TextChoices):
        NONE = "none", "not on the platform"
        CREATING = "creating", "draft being created"
        CREATE_UNKNOWN = "create_unknown", "draft creation: outcome unknown"
        DRAFT = "draft", "draft on the platform"
        PUBLISHING = "publishing", "publishing"
        PUBLISH_UNKNOWN = "publish_unknown", "publishing: outcome unknown"
        PUBLISHED = "published", "published"

    study = models.OneToOneField("annotation.Study", on_delete=models.CASCADE, related_name="platform_study")
    account = models.ForeignKey(PlatformAccount, on_delete=models.PROTECT, related_name="studies")
    platform = models.CharField(max_length=10, choices=Platform.choices)
    state = models.CharField(max_length=16, choices=State.choices, default=State.NONE)
    external_id = models.CharField(max_length=64, blank=True, default="",
                                   help_text="Prolific study id, or MTurk HIT id.")
    external_status = models.CharField(max_length=32, blank=True, default="", help_text="As the platform says.")
    create_key = models.CharField(max_length=64, default="", blank=True,
                                  help_text="Idempotency key of the draft's creation (Prolific metadata, MTurk "
                                            "UniqueRequestToken): stored before the call.")
    create_request = models.JSONField(default=dict, blank=True, help_text="What was sent to create the draft.")
    # What the draft asks for (set at publish time from the study's sampling plan and pay target).
    places = models.PositiveIntegerField(default=0)
    reward_cents = models.PositiveIntegerField(default=0, help_text="Per place, in the account's currency.")
    currency = models.CharField(max_length=3, default="GBP")
    screen_out_reward_cents = models.PositiveIntegerField(
        default=0, help_text="Prolific fixed screen-out payment (0: screened-out participants are asked to return).")
    return_code = models.CharField(max_length=16, default=new_return_code,
                                   help_text="A researcher-only Prolific code whose action asks for a return.")
    devices = models.JSONField(default=list, blank=True, help_text='Prolific device_compatibility, e.g. ["desktop"].')
    filters = models.JSONField(default=list, blank=True,
                               help_text="Prolific filters (select/range objects), or MTurk QualificationRequirements.")
    allow_list = models.JSONField(default=dict, blank=True,
                                  help_text='Only these people: {"participants": [...]} and/or '
                                            '{"accepted_writers_of": ["study-slug", ...]}.')
    allow_list_id = models.CharField(max_length=64, blank=True, default="", editable=False,
                                     help_text="Prolific participant group / MTurk qualification type (allow list).")
    use_block_list = models.BooleanField(default=True,
                                         help_text="Keep blocked workers out before they take a place.")
    language_filter = models.CharField(
        max_length=8, default="auto", choices=[("auto", "auto"), ("first", "first"), ("fluent", "fluent"),
                                               ("off", "off")],
        help_text="Recruit by the study's language: auto (first language unless the study is English), first, "
                  "fluent (fluent languages), off.")
    recruitment_language = models.JSONField(
        default=dict, blank=True, editable=False,
        help_text="How the draft recruited by language: {language, filter (the platform filter sent, or null), note}.")
    bonus_cap_per_participant = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    bonus_cap_per_study = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    hit_type_id = models.CharField(max_length=64, blank=True, default="", editable=False)
    published_at = models.DateTimeField(null=True, blank=True)
    synced_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "platform study"
        verbose_name_plural = "platform studies"
        permissions = [("spend_platformstudy", "Can send decisions, pay bonuses and message participants")]
        constraints = [
            models.UniqueConstraint(fields=["platform", "external_id"], name="platform_study_external_unique",
                                    condition=~models.Q(external_id="")),
        ]

    def __str__(self) -> str:
        return f"{self.study} on {self.get_platform_display()}"


class PlatformSubmission(models.Model):
    """One submission (Prolific) or assignment (MTurk) as the platform last reported it, mapped to its participant.
    `participant` is empty for someone the platform knows and StyleCrowd does not (reported by sync)."""

    platform_study = models.ForeignKey(PlatformStudy, on_delete=models.CASCADE, related_name="submissions")
    external_id = models.CharField(max_length=64, help_text="Prolific submission id / MTurk assignment id.")
    worker_id = models.CharField(max_length=128, help_text="PROLIFIC_PID / MTurk WorkerId.")
    participant = models.ForeignKey("annotation.Participant", on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="+")
    status = models.CharField(max_length=32, help_text="The platform's status, e.g. AWAITING REVIEW, Submitted.")
    study_code = models.CharField(max_length=64, blank=True, default="")
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    return_requested_at = models.DateTimeField(null=True, blank=True)
    slots_released_at = models.DateTimeField(null=True, blank=True,
                                             help_text="When a RETURNED/TIMED-OUT status gave the slots back.")
    raw = models.JSONField(default=dict, blank=True)
    synced_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["platform_study", "started_at", "id"]
        constraints = [models.UniqueConstraint(fields=["platform_study", "external_id"],
                                               name="platform_submission_unique")]
        indexes = [models.Index(fields=["platform_study", "worker_id"])]

    def __str__(self) -> str:
        return f"{self.external_id} ({self.status})"
