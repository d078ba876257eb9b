from django.urls import path

from tasks import api

urlpatterns = [
    path("components/", api.StyleComponentListView.as_view(), name="component-list"),
    path("corpora/", api.CorpusListView.as_view(), name="corpus-list"),
    path("corpora/<int:pk>/", api.CorpusDetailView.as_view(), name="corpus-detail"),
    path("corpora/<int:pk>/generate/", api.CorpusGenerateView.as_view(), name="corpus-generate"),
    path("instances/", api.TaskInstanceListView.as_view(), name="instance-list"),
]
