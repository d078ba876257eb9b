"""Input and output shapes of the platforms API. No serializer ever has a token or a secret in its output."""
from __future__ import annotations

from rest_framework import serializers

from platforms.models import BonusPayment, Decision, Platform, PlatformAccount, PlatformMessage, PlatformStudy

DEVICES = [("desktop", "desktop"), ("tablet", "tablet"), ("mobile", "mobile")]


class PlatformAccountSerializer(serializers.ModelSerializer):
    token = serializers.SerializerMethodField(help_text="Where the token comes from; never the token itself.")
    # Empty for an account without webhooks (MTurk, the mock platform): a string, not a URI, in the schema.
    webhook_url = serializers.CharField(read_only=True, help_text="Where the platform's webhooks are sent; empty "
                                        "for a platform without webhooks.")

    class Meta:
        model = PlatformAccount
        fields = ["name", "platform", "workspace_id", "project_id", "api_url", "sandbox", "aws_profile",
                  "endpoint_url", "token", "block_list_id", "webhook_url", "checked_at", "created_at"]

    def get_token(self, obj: PlatformAccount) -> str:
        if obj.token_env:
            return f"from the environment variable {obj.token_env}"
        return "stored encrypted" if obj.token_encrypted else ""


class PlatformAccountInput(serializers.Serializer):
    name = serializers.SlugField(max_length=80)
    platform = serializers.ChoiceField(choices=Platform.choices)
    token = serializers.CharField(required=False, allow_blank=True, default="", write_only=True,
                                  trim_whitespace=True, help_text="Prolific: stored encrypted, never shown back.")
    token_env = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    workspace_id = serializers.CharField(required=False, allow_blank=True, default="", max_length=64)
    project_id = serializers.CharField(required=False, allow_blank=True, default="", max_length=64)
    api_url = serializers.URLField(required=False, allow_blank=True, default="")
    sandbox = serializers.BooleanField(required=False, default=True)
    aws_profile = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    endpoint_url = serializers.URLField(required=False, allow_blank=True, default="")


class PlatformStudySerializer(serializers.ModelSerializer):
    study = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    account = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = PlatformStudy
        fields = ["study", "account", "platform", "state", "external_id", "external_status", "places",
                  "reward_cents", "currency", "screen_out_reward_cents", "devices", "filters", "allow_list",
                  "use_block_list", "language_filter", "bonus_cap_per_participant", "bonus_cap_per_study",
                  "create_request",
                  "published_at", "synced_at", "last_error"]


class PublishInput(serializers.Serializer):
    account = serializers.CharField(required=False, allow_blank=True, default="")
    base_url = serializers.URLField(required=False, allow_blank=True, default="")
    publish = serializers.BooleanField(required=False, default=False,
                                       help_text="Publish the draft (needs the permission to spend money).")
    devices = serializers.ListField(child=serializers.ChoiceField(choices=DEVICES), required=False)
    filters = serializers.ListField(child=serializers.DictField(), required=False)
    allow_list = serializers.DictField(required=False)
    screen_out_reward_cents = serializers.IntegerField(required=False, min_value=0)
    use_block_list = serializers.BooleanField(required=False)
    language_filter = serializers.ChoiceField(
        choices=["auto", "first", "fluent", "off"], required=False,
        help_text="Recruit by the study's language: auto (Prolific's first-language filter unless the study is "
                  "English), first, fluent, off.")
    bonus_cap_per_participant = serializers.DecimalField(max_digits=8, decimal_places=2, required=False,
                                                         min_value=0)
    bonus_cap_per_study = serializers.DecimalField(max_digits=10, decimal_places=2, required=False, min_value=0)


class TestRunInput(serializers.Serializer):
    email = serializers.EmailField(required=False, allow_blank=True, default="",
                                   help_text="Creates a test participant with this e-mail first (one not registered "
                                             "with Prolific); empty: the workspace's existing test participants.")


class TestRunCheckInput(serializers.Serializer):
    test_study_id = serializers.RegexField(r"^[0-9a-zA-Z]{1,64}$", help_text="The test study's id, as the test run "
                                                                             "answered it.")


class DecideInput(serializers.Serializer):
    apply = serializers.BooleanField(required=False, default=False)
    confirm_rejections = serializers.BooleanField(required=False, default=False)
    reject_message = serializers.CharField(required=False, allow_blank=True, default="", max_length=10_000)
    retry_failed = serializers.BooleanField(required=False, default=False)


class BonusRuleInput(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["per_accepted_rewrite", "per_correct_item", "flat"])
    amount = serializers.DecimalField(max_digits=8, decimal_places=2, min_value=0)
    label = serializers.CharField(required=False, default="", allow_blank=True, max_length=60)


class BonusInput(serializers.Serializer):
    apply = serializers.BooleanField(required=False, default=False)
    rules = BonusRuleInput(many=True, required=False, help_text="Rules added (or updated) before the run.")
    cap_per_participant = serializers.DecimalField(max_digits=8, decimal_places=2, required=False, min_value=0)
    cap_per_study = serializers.DecimalField(max_digits=10, decimal_places=2, required=False, min_value=0)
    flat = serializers.DecimalField(max_digits=8, decimal_places=2, required=False, allow_null=True, default=None,
                                    min_value=0)
    label = serializers.CharField(required=False, default="flat", max_length=40)


class MessageInput(serializers.Serializer):
    body = serializers.CharField(max_length=4096)
    subject = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    to = serializers.ListField(child=serializers.CharField(max_length=128), required=False, allow_empty=True,
                               default=list)
    apply = serializers.BooleanField(required=False, default=False)
    resend = serializers.BooleanField(required=False, default=False)


class DecisionSerializer(serializers.ModelSerializer):
    submission = serializers.SlugRelatedField(slug_field="external_id", read_only=True)

    class Meta:
        model = Decision
        fields = ["id", "submission", "worker_id", "kind", "rejection_category", "message", "evidence", "state",
                  "request", "response", "error", "created_at", "sent_at", "finished_at"]


class BonusPaymentSerializer(serializers.ModelSerializer):
    submission = serializers.SlugRelatedField(slug_field="external_id", read_only=True)
    bulk = serializers.SlugRelatedField(slug_field="external_id", read_only=True)

    class Meta:
        model = BonusPayment
        fields = ["id", "worker_id", "submission", "source", "units", "amount", "currency", "reason", "state", "bulk",
                  "error", "created_at", "paid_at", "resolution"]


class PlatformMessageSerializer(serializers.ModelSerializer):
    class Meta:
        model = PlatformMessage
        fields = ["id", "group_key", "recipients", "subject", "body", "state", "error", "created_at", "sent_at"]
