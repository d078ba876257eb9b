"""API routes of model scoring (score_stel, issue 5)."""
from django.urls import path

from scoring.stel_scoring import api

urlpatterns = [
    path("score-runs/", api.ScoreRunListView.as_view(), name="api-score-runs"),
    path("score-runs/<int:pk>/", api.ScoreRunDetailView.as_view(), name="api-score-run"),
    path("score-runs/<int:pk>/predictions/", api.ScoreRunPredictionsView.as_view(), name="api-score-run-predictions"),
]
