"""The JSON API's URLs (mounted at /api/v1/ by config/urls.py): names and paths are public, keep them."""
from django.urls import path

from annotation.api import erasure, practice, review, sessions, studies, writing_signals

urlpatterns = [
    path("ping/", sessions.PingView.as_view(), name="ping"),
    path("ping/db/", sessions.PingDatabaseView.as_view(), name="ping-db"),
    path("participants/erase/", erasure.ParticipantEraseView.as_view(), name="participant-erase"),
    path("studies/", studies.StudyListView.as_view(), name="study-list"),
    path("studies/<slug:slug>/", studies.StudyDetailView.as_view(), name="study-detail"),
    path("studies/<slug:slug>/open/", studies.StudyOpenView.as_view(), name="study-open"),
    path("studies/<slug:slug>/close/", studies.StudyCloseView.as_view(), name="study-close"),
    path("studies/<slug:slug>/participants/", studies.StudyParticipantsView.as_view(), name="study-participants"),
    path("studies/<slug:slug>/decisions/", studies.StudyDecisionsExportView.as_view(), name="study-decisions"),
    path("studies/<slug:slug>/responses/", studies.StudyResponsesExportView.as_view(), name="study-responses"),
    path("studies/<slug:slug>/reviews/", review.StudyReviewsView.as_view(), name="study-reviews"),
    path("studies/<slug:slug>/writing-signals/", writing_signals.WritingSignalsView.as_view(),
         name="study-writing-signals"),
    path("studies/<slug:slug>/sessions/", sessions.SessionCreateView.as_view(), name="session-create"),
    path("sessions/<str:token>/", sessions.SessionDetailView.as_view(), name="session-detail"),
    path("sessions/<str:token>/consent/", sessions.SessionConsentView.as_view(), name="session-consent"),
    path("sessions/<str:token>/eligibility/", sessions.SessionEligibilityView.as_view(), name="session-eligibility"),
    path("sessions/<str:token>/start/", sessions.SessionStartView.as_view(), name="session-start"),
    path("sessions/<str:token>/next/", sessions.SessionNextView.as_view(), name="session-next"),
    path("sessions/<str:token>/answers/", sessions.SessionAnswerView.as_view(), name="session-answer"),
    path("sessions/<str:token>/practice/", practice.SessionPracticeView.as_view(), name="session-practice"),
]
