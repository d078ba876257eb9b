"""API routes of model scoring (score_stel)."""
from django.urls import path

from scoring.model_scoring import api

urlpatterns = [
    path("score-runs/", api.ScoreRunListView.as_view(), name="score-run-list"),
    path("score-runs/<int:pk>/", api.ScoreRunDetailView.as_view(), name="score-run-detail"),
    path("score-runs/<int:pk>/predictions/", api.ScoreRunPredictionsView.as_view(), name="score-run-predictions"),
]
