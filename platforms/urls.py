from django.urls import path

from platforms import api

urlpatterns = [
    path("platform-accounts/", api.PlatformAccountListView.as_view(), name="platform-account-list"),
    path("studies/<slug:slug>/platform/", api.StudyPlatformView.as_view(), name="study-platform"),
    path("studies/<slug:slug>/platform/publish/", api.StudyPlatformPublishView.as_view(),
         name="study-platform-publish"),
    path("studies/<slug:slug>/platform/preflight/", api.StudyPlatformPreflightView.as_view(),
         name="study-platform-preflight"),
    path("studies/<slug:slug>/platform/test-run/", api.StudyPlatformTestRunView.as_view(),
         name="study-platform-test-run"),
    path("studies/<slug:slug>/platform/sync/", api.StudyPlatformSyncView.as_view(), name="study-platform-sync"),
    path("studies/<slug:slug>/platform/decisions/", api.StudyPlatformDecisionsView.as_view(),
         name="study-platform-decisions"),
    path("studies/<slug:slug>/platform/bonuses/", api.StudyPlatformBonusesView.as_view(),
         name="study-platform-bonuses"),
    path("studies/<slug:slug>/platform/messages/", api.StudyPlatformMessagesView.as_view(),
         name="study-platform-messages"),
    path("platform-hooks/prolific/<slug:name>/", api.ProlificWebhookView.as_view(), name="platform-hook-prolific"),
]
