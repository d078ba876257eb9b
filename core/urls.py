from django.urls import path

from core.views import JobDetailView

urlpatterns = [path("<int:job_id>/", JobDetailView.as_view(), name="job-detail")]
