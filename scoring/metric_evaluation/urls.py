"""API routes of the metric meta-evaluation."""
from django.urls import path

from scoring.metric_evaluation import api

urlpatterns = [
    path("metric-evaluations/", api.MetricEvaluationListView.as_view(), name="metric-evaluation-list"),
    path("metric-evaluations/<int:pk>/", api.MetricEvaluationDetailView.as_view(), name="metric-evaluation-detail"),
    path("metric-evaluations/<int:pk>/plot.png", api.MetricEvaluationPlotView.as_view(),
         name="metric-evaluation-plot"),
]
