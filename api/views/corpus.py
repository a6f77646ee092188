"""The corpus (dialogues, turns, sentences), gold, import batches: read endpoints."""

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.exceptions import ValidationError

from annotator.access import LEAD_ROLES
from annotator.models import Dialogue, GoldLabel, ImportBatch, Sentence, Turn
from annotator.corpus.imports.services import import_batch_start
from annotator.corpus.selectors import dialogues_of, gold_of, sentences_of, turns_of

from ..filters import DialogueFilter, GoldFilter, LabelledSentenceFilter, SentenceFilter, TurnFilter
from ..pagination import IdCursorPagination, PagePagination
from ..permissions import ADJUDICATORS, LEADS, ProjectScopedView
from ..serializers import (
    DialogueSerializer,
    GoldSerializer,
    ImportBatchSerializer,
    ImportUploadSerializer,
    LabelledSentenceSerializer,
    SentenceSerializer,
    TurnSerializer,
)

DIALOGUE_EXAMPLE = {
    "id": 12, "external_id": "cb-000123", "batch": 3, "topic": "geography", "language": "english",
    "generator_model": "gpt-4o", "reference": "The Amazon river flows through Brazil.", "metadata": {},
    "turn_count": 2,
}
SENTENCE_EXAMPLE = {"id": 901, "index": 0, "text": "The Amazon flows through Brazil.", "start": 0, "end": 32}
TURN_EXAMPLE = {
    "id": 40, "dialogue": 12, "dialogue_external_id": "cb-000123", "index": 1, "external_id": "cb-000123-1",
    "user_message": "Tell me about the Amazon.", "assistant_response": "The Amazon flows through Brazil.",
    "history": [], "metadata": {}, "is_qualification": False, "sentences": [SENTENCE_EXAMPLE],
}
LABELLED_SENTENCE_EXAMPLE = {
    "id": 901, "turn": 40, "dialogue": 12, "dialogue_external_id": "cb-000123", "index": 0,
    "text": "The Amazon flows through Brazil.", "start": 0, "end": 32, "gold_label": "faithful",
    "agreement_state": "agreed",
}
GOLD_EXAMPLE = {
    "id": 5, "sentence": 901, "sentence_text": "The Amazon flows through Brazil.", "turn": 40,
    "dialogue_external_id": "cb-000123", "label": "faithful",
    "path": {"relevance": "relevant", "kind": "factual", "faithfulness": "faithful"},
    "provenance": "agreement", "reason": "", "severity": None, "error_type": "", "decided_by": None,
    "updated_at": "2026-11-21T10:00:00Z",
}
BATCH_EXAMPLE = {
    "id": 3, "kind": "cognibench", "filename": "cognibench_sample.json", "sha256": "9f86d08…", "status": "done",
    "progress": 120, "total": 120, "summary": {"dialogues": 40, "turns": 120, "sentences": 1433}, "error": "",
    "created_by": "lea", "created_at": "2026-11-21T09:10:00Z", "finished_at": "2026-11-21T09:10:04Z",
}


@extend_schema_view(get=extend_schema(summary="Dialogues", tags=["corpus"],
                                      examples=[OpenApiExample("Dialogue", value=DIALOGUE_EXAMPLE)]))
class DialogueListView(ProjectScopedView, generics.ListAPIView):
    serializer_class = DialogueSerializer
    filterset_class = DialogueFilter
    pagination_class = PagePagination

    model = Dialogue

    def list(self, request, *args, **kwargs):
        # The record id finds the source's public labels: asking which dialogue has it is a lead's question.
        if "external_id" in request.query_params and self.role not in LEAD_ROLES:
            raise ValidationError({"external_id": ["Only leads can look dialogues up by the source's record id."]})
        return super().list(request, *args, **kwargs)

    def project_queryset(self):
        queryset = dialogues_of(self.project)
        if "external_id" in self.request.query_params:
            # Not even a lead learns which dialogue holds a turn they are annotating (blind) from its record id.
            queryset = queryset.exclude(turns__in=self.blind_turns)
        return queryset


@extend_schema_view(get=extend_schema(summary="A dialogue", tags=["corpus"],
                                      examples=[OpenApiExample("Dialogue", value=DIALOGUE_EXAMPLE)]))
class DialogueDetailView(ProjectScopedView, generics.RetrieveAPIView):
    serializer_class = DialogueSerializer
    filter_backends = []

    model = Dialogue

    def project_queryset(self):
        return dialogues_of(self.project)


@extend_schema_view(get=extend_schema(summary="Turns, with their sentences (cursor-paginated)", tags=["corpus"],
                                      examples=[OpenApiExample("Turn", value=TURN_EXAMPLE)]))
class TurnListView(ProjectScopedView, generics.ListAPIView):
    serializer_class = TurnSerializer
    filterset_class = TurnFilter
    pagination_class = IdCursorPagination

    model = Turn

    def project_queryset(self):
        return turns_of(self.project)


@extend_schema_view(get=extend_schema(summary="A turn", tags=["corpus"],
                                      examples=[OpenApiExample("Turn", value=TURN_EXAMPLE)]))
class TurnDetailView(ProjectScopedView, generics.RetrieveAPIView):
    serializer_class = TurnSerializer
    filter_backends = []

    model = Turn

    def project_queryset(self):
        return turns_of(self.project)


class SentenceAccessMixin:
    """Annotators see text only; adjudicators and leads also gold and agreement state."""

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Sentence.objects.none()
        queryset = sentences_of(self.project, with_gold=self.sees_labels)
        if self.sees_labels:
            # Gold and agreement state, but not of the turns the user holds an unsubmitted slot on.
            queryset = queryset.exclude(turn_id__in=self.blind_turns)
        return queryset

    def get_serializer_class(self):
        if getattr(self, "swagger_fake_view", False) or self.sees_labels:
            return LabelledSentenceSerializer
        return SentenceSerializer


@extend_schema_view(get=extend_schema(
    summary="Sentences (cursor-paginated)",
    description="Annotators get text and position; adjudicators and leads also get `gold_label` and "
                "`agreement_state` and may filter by them, except on the turns they hold an unsubmitted "
                "annotation slot on, which are left out.",
    tags=["corpus"],
    examples=[OpenApiExample("As a lead", value=LABELLED_SENTENCE_EXAMPLE)],
))
class SentenceListView(SentenceAccessMixin, ProjectScopedView, generics.ListAPIView):
    pagination_class = IdCursorPagination

    @property
    def filterset_class(self):
        if getattr(self, "swagger_fake_view", False) or self.sees_labels:
            return LabelledSentenceFilter
        return SentenceFilter

    def list(self, request, *args, **kwargs):
        if not self.sees_labels:
            hidden = [name for name in ("label", "agreement_state") if name in request.query_params]
            if hidden:
                raise ValidationError({name: ["Only adjudicators and leads can filter by gold."] for name in hidden})
        return super().list(request, *args, **kwargs)


@extend_schema_view(get=extend_schema(summary="A sentence", tags=["corpus"],
                                      examples=[OpenApiExample("As a lead", value=LABELLED_SENTENCE_EXAMPLE)]))
class SentenceDetailView(SentenceAccessMixin, ProjectScopedView, generics.RetrieveAPIView):
    filter_backends = []


@extend_schema_view(get=extend_schema(
    summary="Gold labels (adjudicators and leads; cursor-paginated)",
    description="Not of the turns you hold an unsubmitted annotation slot on.",
    tags=["gold"],
    examples=[OpenApiExample("Gold", value=GOLD_EXAMPLE)],
))
class GoldListView(ProjectScopedView, generics.ListAPIView):
    method_roles = {"GET": ADJUDICATORS}
    serializer_class = GoldSerializer
    filterset_class = GoldFilter
    pagination_class = IdCursorPagination

    model = GoldLabel

    def project_queryset(self):
        return gold_of(self.project).exclude(sentence__turn_id__in=self.blind_turns)


@extend_schema_view(get=extend_schema(summary="Import jobs (leads)", tags=["imports"],
                                      examples=[OpenApiExample("Import", value=BATCH_EXAMPLE)]))
class BatchListView(ProjectScopedView, generics.ListAPIView):
    method_roles = {"GET": LEADS, "POST": LEADS}
    serializer_class = ImportBatchSerializer
    pagination_class = PagePagination
    filter_backends = []
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        summary="Upload a file to import (leads)",
        description="The import runs as a background job (the admin upload's job). Poll the returned job: "
                    "`status` goes pending → running → done or failed, and `error` names the record and "
                    "field at fault, with the same message as `manage.py import_*`. Nothing is written "
                    "unless the whole file is valid.",
        request={"multipart/form-data": ImportUploadSerializer},
        responses={202: ImportBatchSerializer},
        examples=[OpenApiExample("Queued", response_only=True, status_codes=["202"], value={
            **BATCH_EXAMPLE, "status": "pending", "progress": 0, "total": 0, "summary": {},
            "finished_at": None, "live_progress": {"done": 0, "total": 0, "percent": 0}})],
        tags=["imports"],
    )
    def post(self, request, slug):
        serializer = ImportUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        batch = import_batch_start(self.project, data["kind"], data["upload"], data.get("second_upload"),
                                   actor=request.user)
        return Response(ImportBatchSerializer(batch).data, status=status.HTTP_202_ACCEPTED)

    model = ImportBatch

    def project_queryset(self):
        return ImportBatch.objects.filter(project=self.project).select_related("created_by").order_by("-id")


@extend_schema_view(get=extend_schema(summary="An import job and its status (leads)", tags=["imports"],
                                      examples=[OpenApiExample("Import", value=BATCH_EXAMPLE)]))
class BatchDetailView(ProjectScopedView, generics.RetrieveAPIView):
    method_roles = {"GET": LEADS}
    serializer_class = ImportBatchSerializer
    filter_backends = []

    model = ImportBatch

    def project_queryset(self):
        return ImportBatch.objects.filter(project=self.project).select_related("created_by")

