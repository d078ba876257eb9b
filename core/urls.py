from django.urls import path

from core.views import JobDetail

urlpatterns = [path("<int:job_id>/", JobDetail.as_view(), name="job-detail")]
