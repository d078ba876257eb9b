"""API routes of model annotators."""
from django.urls import path

from scoring.model_annotators import api

urlpatterns = [
    path("model-runs/", api.ModelRunListView.as_view(), name="model-run-list"),
    path("model-runs/<int:pk>/", api.ModelRunDetailView.as_view(), name="model-run-detail"),
    path("model-runs/<int:pk>/answers/", api.ModelRunAnswersView.as_view(), name="model-run-answers"),
    path("model-runs/<int:pk>/stop/", api.ModelRunStopView.as_view(), name="model-run-stop"),
    path("model-runs/<int:pk>/guide/", api.ModelRunGuideView.as_view(), name="model-run-guide"),
]
