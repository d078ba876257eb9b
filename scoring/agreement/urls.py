"""API routes of agreement runs and filter runs (under /api/v1/)."""
from django.urls import path

from scoring.agreement import api

urlpatterns = [
    path("agreement-runs/", api.AgreementRunListView.as_view(), name="agreement-run-list"),
    path("agreement-runs/<int:run_id>/", api.AgreementRunDetailView.as_view(), name="agreement-run-detail"),
    path("filter-runs/", api.FilterRunListView.as_view(), name="filter-run-list"),
    path("filter-runs/<int:run_id>/", api.FilterRunDetailView.as_view(), name="filter-run-detail"),
    path("annotation-imports/", api.AnnotationImportView.as_view(), name="annotation-import"),
]
