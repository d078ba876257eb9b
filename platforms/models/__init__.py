"""The platforms app's models: accounts and studies (`accounts`), money and messages (`money`), webhook events."""
from platforms.models.accounts import Platform, PlatformAccount, PlatformStudy, PlatformSubmission  # noqa: F401
from platforms.models.events import WebhookEvent  # noqa: F401
from platforms.models.money import (  # noqa: F401
    BonusPayment,
    BonusRule,
    BulkBonus,
    CallState,
    Decision,
    PlatformMessage,
)

# Names for the API schema's enums (settings.SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]).
PlatformStudyState = PlatformStudy.State
BonusPaymentState = BonusPayment.State
DecisionKind = Decision.Kind
