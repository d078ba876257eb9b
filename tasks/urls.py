from django.urls import path

from tasks import api

urlpatterns = [
    path("components/", api.StyleComponentListView.as_view(), name="api-components"),
    path("corpora/", api.CorpusListView.as_view(), name="api-corpora"),
    path("corpora/<int:pk>/", api.CorpusDetailView.as_view(), name="api-corpus"),
    path("corpora/<int:pk>/generate/", api.CorpusGenerateView.as_view(), name="api-corpus-generate"),
    path("instances/", api.TaskInstanceListView.as_view(), name="api-instances"),
]
