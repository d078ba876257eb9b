"""API routes of benchmark exports (under /api/v1/)."""
from django.urls import path

from scoring.export import api

urlpatterns = [
    path("exports/", api.ExportListView.as_view(), name="export-list"),
    path("exports/<int:pk>/", api.ExportDetailView.as_view(), name="export-detail"),
    path("exports/<int:pk>/<str:which>/", api.ExportDownloadView.as_view(), name="export-download"),
]
