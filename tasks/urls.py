from django.urls import path

from tasks import api

urlpatterns = [
    path("components/", api.StyleComponentList.as_view(), name="api-components"),
    path("corpora/", api.CorpusListCreate.as_view(), name="api-corpora"),
    path("corpora/<int:pk>/", api.CorpusDetail.as_view(), name="api-corpus"),
    path("corpora/<int:pk>/generate/", api.CorpusGenerate.as_view(), name="api-corpus-generate"),
    path("instances/", api.TaskInstanceList.as_view(), name="api-instances"),
]
