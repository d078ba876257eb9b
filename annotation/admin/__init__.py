"""The annotation app's admin, one module per concern. Importing the package (Django's admin autodiscovery does)
imports every submodule, so each registers its model admins."""
from __future__ import annotations

from annotation.admin import practice, review, rewrite_corpus, studies, study_setup
from annotation.admin.studies import BatchAdmin, ParticipantAdmin, ResponseAdmin, StudyAdmin, StudyItemAdmin

__all__ = [
    "BatchAdmin",
    "ParticipantAdmin",
    "ResponseAdmin",
    "StudyAdmin",
    "StudyItemAdmin",
    "practice",
    "review",
    "rewrite_corpus",
    "studies",
    "study_setup",
]
