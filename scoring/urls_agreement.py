"""API routes of the agreement part (under /api/v1/)."""
from django.urls import path

from scoring import api_agreement

urlpatterns = [
    path("agreement-runs/", api_agreement.AgreementRunListView.as_view(), name="agreement-run-list"),
    path("agreement-runs/<int:run_id>/", api_agreement.AgreementRunDetailView.as_view(), name="agreement-run-detail"),
    path("filter-runs/", api_agreement.FilterRunListView.as_view(), name="filter-run-list"),
    path("exports/", api_agreement.ExportListView.as_view(), name="export-list"),
    path("exports/<int:pk>/", api_agreement.ExportDetailView.as_view(), name="export-detail"),
    path("exports/<int:pk>/<str:which>/", api_agreement.ExportDownloadView.as_view(), name="export-download"),
    path("filter-runs/<int:run_id>/", api_agreement.FilterRunDetailView.as_view(), name="filter-run-detail"),
]
