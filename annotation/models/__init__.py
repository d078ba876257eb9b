"""The annotation app's models, one module per concern; every public name is re-exported here, so
`from annotation.models import X` works whichever module defines X. The migrations name `new_study_code` and
`random_sort_key` as `annotation.models.*`: they stay exported."""
from __future__ import annotations

from annotation.models.batches import Batch, Reservation
from annotation.models.consent import ConsentVersion, new_consent_receipt
from annotation.models.participants import Participant, Response, TelemetryStatus
from annotation.models.practice import PracticeAnswer, PracticeItem
from annotation.models.review import (
    COPY_THRESHOLD_DEFAULT,
    RejectionReason,
    RewriteReview,
    RewriteSettings,
    WorkerBlock,
)
from annotation.models.studies import (
    CHOICES,
    HTTP_URL,
    ORDERING_KINDS,
    EntryPlatform,
    ItemKind,
    Study,
    StudyItem,
    UncertaintyModel,
    canonical_answer,
    displayed_answer,
    new_study_code,
    random_sort_key,
    swap_answer,
)
from annotation.models.writing_signals import Signal, WritingSignal

__all__ = [
    "CHOICES",
    "canonical_answer",
    "displayed_answer",
    "swap_answer",
    "COPY_THRESHOLD_DEFAULT",
    "HTTP_URL",
    "ORDERING_KINDS",
    "Batch",
    "ConsentVersion",
    "EntryPlatform",
    "UncertaintyModel",
    "ItemKind",
    "Participant",
    "PracticeAnswer",
    "PracticeItem",
    "RejectionReason",
    "Reservation",
    "Response",
    "RewriteReview",
    "RewriteSettings",
    "Signal",
    "Study",
    "StudyItem",
    "TelemetryStatus",
    "WorkerBlock",
    "WritingSignal",
    "new_consent_receipt",
    "new_study_code",
    "random_sort_key",
]
