"""API routes of the metric meta-evaluation (issue 5)."""
from django.urls import path

from scoring.metrics import api

urlpatterns = [
    path("metric-evaluations/", api.MetricEvaluationListView.as_view(), name="api-metric-evaluations"),
    path("metric-evaluations/<int:pk>/", api.MetricEvaluationDetailView.as_view(), name="api-metric-evaluation"),
    path("metric-evaluations/<int:pk>/plot.png", api.MetricEvaluationPlotView.as_view(),
         name="api-metric-evaluation-plot"),
]
