from django.urls import path

from annotation import views

app_name = "annotator"

urlpatterns = [
    path("s/<slug:slug>/", views.study_entry, name="study-entry"),
    path("i18n/<str:lang>/annotator.js", views.javascript_catalog, name="javascript-catalog"),
]
