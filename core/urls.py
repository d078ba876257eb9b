from django.urls import path

from core import views

urlpatterns = [path("<int:job_id>/", views.job_detail, name="job-detail")]
