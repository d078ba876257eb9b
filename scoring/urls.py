"""Scoring API routes: each part keeps its own module."""
from django.urls import include, path

urlpatterns = [
    path("", include("scoring.urls_agreement")),
    path("", include("scoring.urls_model_scoring")),
    path("", include("scoring.urls_metrics")),
]
