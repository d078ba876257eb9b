"""API routes of the metric meta-evaluation (issue 5)."""
from django.urls import path

from scoring.metrics import api

urlpatterns = [
    path("metric-evaluations/", api.MetricEvaluationListCreate.as_view(), name="api-metric-evaluations"),
    path("metric-evaluations/<int:pk>/", api.MetricEvaluationDetail.as_view(), name="api-metric-evaluation"),
    path("metric-evaluations/<int:pk>/plot.png", api.MetricEvaluationPlot.as_view(),
         name="api-metric-evaluation-plot"),
]
