from django.urls import path

from annotation import api, api_practice, api_review, api_signals

urlpatterns = [
    path("ping/", api.PingView.as_view(), name="ping"),
    path("ping/db/", api.PingDatabaseView.as_view(), name="ping-db"),
    path("studies/", api.StudyListView.as_view(), name="study-list"),
    path("studies/<slug:slug>/", api.StudyDetailView.as_view(), name="study-detail"),
    path("studies/<slug:slug>/open/", api.StudyOpenView.as_view(), name="study-open"),
    path("studies/<slug:slug>/participants/", api.StudyParticipantsView.as_view(), name="study-participants"),
    path("studies/<slug:slug>/decisions/", api.StudyDecisionsExportView.as_view(), name="study-decisions"),
    path("studies/<slug:slug>/responses/", api.StudyResponsesExportView.as_view(), name="study-responses"),
    path("studies/<slug:slug>/reviews/", api_review.StudyReviewsView.as_view(), name="study-reviews"),
    path("studies/<slug:slug>/writing-signals/", api_signals.WritingSignalsView.as_view(),
         name="study-writing-signals"),
    path("studies/<slug:slug>/sessions/", api.SessionCreateView.as_view(), name="session-create"),
    path("sessions/<str:token>/", api.SessionDetailView.as_view(), name="session-detail"),
    path("sessions/<str:token>/consent/", api.SessionConsentView.as_view(), name="session-consent"),
    path("sessions/<str:token>/eligibility/", api.SessionEligibilityView.as_view(), name="session-eligibility"),
    path("sessions/<str:token>/start/", api.SessionStartView.as_view(), name="session-start"),
    path("sessions/<str:token>/next/", api.SessionNextView.as_view(), name="session-next"),
    path("sessions/<str:token>/answers/", api.SessionAnswerView.as_view(), name="session-answer"),
    path("sessions/<str:token>/practice/", api_practice.SessionPracticeView.as_view(), name="session-practice"),
]
