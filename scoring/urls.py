"""Scoring API routes: each part keeps its own `urls.py` in its own package."""
from django.urls import include, path

urlpatterns = [
    path("", include("scoring.agreement.urls")),
    path("", include("scoring.export.urls")),
    path("", include("scoring.model_scoring.urls")),
    path("", include("scoring.metric_evaluation.urls")),
    path("", include("scoring.model_annotators.urls")),
]
