"""Researchers' REST door to the tasks app (admin users; session or basic auth)."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.parsers import GuardedFormParser, GuardedMultiPartParser, StrictJSONParser
from core.views import JobAcceptedSchema, job_accepted
from tasks.models import Corpus, StyleComponent, TaskInstance
from tasks.serializers import (
    CorpusImportInput,
    CorpusLicenceInput,
    CorpusSerializer,
    InstancesGenerateInput,
    StyleComponentSerializer,
    TaskInstanceSerializer,
)
from tasks.services.components import component_create
from tasks.services.imports import corpus_licence_update
from tasks.services.uploads import corpus_import_start, instances_generate_start, upload_files_by_role


class StyleComponentListView(generics.ListAPIView):
    """The style components (STEL's four and any added), with their two style labels."""

    permission_model = StyleComponent
    queryset = StyleComponent.objects.all()
    serializer_class = StyleComponentSerializer
    pagination_class = None

    @extend_schema(request=StyleComponentSerializer, responses={201: StyleComponentSerializer})
    def post(self, request: Request) -> Response:
        """Create a style component (a STEL `style type`), e.g. before importing a new characteristic file."""
        serializer = StyleComponentSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        component = component_create(**serializer.validated_data)
        return Response(StyleComponentSerializer(component).data, status=status.HTTP_201_CREATED)


class CorpusListView(APIView):
    permission_model = Corpus
    parser_classes = [GuardedMultiPartParser, GuardedFormParser]

    @extend_schema(responses=CorpusSerializer(many=True))
    def get(self, request: Request) -> Response:
        """Every corpus with its import counts."""
        corpora = Corpus.objects.select_related("component").order_by("name")
        return Response(CorpusSerializer(corpora, many=True).data)

    @extend_schema(request=CorpusImportInput, responses={202: JobAcceptedSchema})
    def post(self, request: Request) -> Response:
        """Upload files and import them in the background; poll the returned job."""
        # Never copy request.data: it holds the uploaded files, which stream to temporary files above 5 MB and
        # cannot be deep-copied. Plain fields by name, files by field.
        fields = {key: request.POST.get(key) for key in request.POST}
        serializer = CorpusImportInput(data={
            **fields, "files": request.FILES.getlist("files"), "style_1_file": request.FILES.get("style_1_file"),
            "style_2_file": request.FILES.get("style_2_file"),
        })
        serializer.is_valid(raise_exception=True)
        v = serializer.validated_data
        files = upload_files_by_role(import_format=v["format"], files=v["files"], style_1_file=v["style_1_file"],
                                     style_2_file=v["style_2_file"])
        job = corpus_import_start(
            name=v["name"], component=v.get("component") or None, import_format=v["format"], files=files,
            seed=v["seed"], min_edit_distance=v.get("min_edit_distance"), detokenize=v.get("detokenize"),
            replace=v["replace"], source=v["source"],
            licence=v["licence"], attribution=v["attribution"], language=v["language"],
            created_by=request.user.get_username(),
        )
        return job_accepted(job)


class CorpusDetailView(APIView):
    permission_model = Corpus
    parser_classes = [StrictJSONParser]

    @extend_schema(responses=CorpusSerializer)
    def get(self, request: Request, pk: int) -> Response:
        """One corpus with its import parameters, counts and licence."""
        return Response(CorpusSerializer(get_object_or_404(Corpus.objects.select_related("component"), pk=pk)).data)

    @extend_schema(request=CorpusLicenceInput, responses=CorpusSerializer)
    def patch(self, request: Request, pk: int) -> Response:
        """Record the corpus's licence, attribution or language (the admin's fields; what exports read)."""
        corpus = get_object_or_404(Corpus.objects.select_related("component"), pk=pk)
        serializer = CorpusLicenceInput(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        corpus = corpus_licence_update(corpus=corpus, **serializer.validated_data)
        return Response(CorpusSerializer(corpus).data)


class CorpusGenerateView(APIView):
    # the same rule as the admin's "Generate instances" action on corpora
    permission_model = Corpus
    permission_actions = {"POST": "change"}
    parser_classes = [StrictJSONParser]

    @extend_schema(request=InstancesGenerateInput, responses={202: JobAcceptedSchema})
    def post(self, request: Request, pk: int) -> Response:
        """Generate task instances (quadruples, triples, style-or-content) from the corpus in the background."""
        corpus = get_object_or_404(Corpus, pk=pk)
        serializer = InstancesGenerateInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        job = instances_generate_start(corpus=corpus, created_by=request.user.get_username(),
                                         **serializer.validated_data)
        return job_accepted(job)


@extend_schema(parameters=[OpenApiParameter(name, str) for name in ("corpus", "component", "setup", "status")])
class TaskInstanceListView(generics.ListAPIView):
    """Task instances, filterable by corpus, component, setup and status (paginated)."""

    permission_model = TaskInstance
    serializer_class = TaskInstanceSerializer

    def get_queryset(self):
        queryset = TaskInstance.objects.select_related("component", "corpus").order_by("corpus__name", "setup",
                                                                                          "position")
        params = self.request.query_params
        filters = {"corpus__name": params.get("corpus"), "component__name": params.get("component"),
                   "setup": params.get("setup"), "status": params.get("status")}
        return queryset.filter(**{k: v for k, v in filters.items() if v})
