"""Assignments and sentence annotations: an annotator reads their own, a lead reads everyone's."""

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics

from annotator.access import LEAD_ROLES
from annotator.models import Assignment, SentenceAnnotation

from ..filters import AnnotationFilter, AssignmentFilter
from ..pagination import IdCursorPagination, PagePagination
from ..permissions import ProjectScopedView
from ..serializers import AssignmentDetailSerializer, AssignmentSerializer, SentenceAnnotationSerializer
from .corpus import TURN_EXAMPLE

ASSIGNMENT_EXAMPLE = {
    "id": 77, "turn": 40, "dialogue_external_id": "cb-000123", "annotator": "ada", "status": "in_progress",
    "is_qualification": False, "version": 3, "assigned_at": "2026-11-21T09:30:00Z",
    "started_at": "2026-11-21T09:31:00Z", "submitted_at": None,
}
ANNOTATION_EXAMPLE = {
    "id": 310, "assignment": 77, "sentence": 901,
    "path": {"relevance": "relevant", "kind": "factual", "faithfulness": "faithful"}, "label": "faithful",
    "note": "", "severity": None, "justification": "", "error_type": "", "seconds_spent": 12.5,
    "updated_at": "2026-11-21T09:32:00Z",
}


class OwnWorkMixin:
    """Leads see every annotator's work; everyone else only their own."""

    @property
    def sees_everyone(self):
        return self.role in LEAD_ROLES


@extend_schema_view(get=extend_schema(
    summary="Assignments: yours (leads: everyone's)",
    tags=["assignments"],
    examples=[OpenApiExample("Assignment", value=ASSIGNMENT_EXAMPLE)],
))
class AssignmentListView(OwnWorkMixin, ProjectScopedView, generics.ListAPIView):
    model = Assignment
    serializer_class = AssignmentSerializer
    filterset_class = AssignmentFilter
    pagination_class = PagePagination

    def project_queryset(self):
        queryset = Assignment.objects.filter(project=self.project).select_related("annotator", "turn__dialogue")
        if not self.sees_everyone:
            queryset = queryset.filter(annotator=self.request.user)
        return queryset.order_by("id")


@extend_schema_view(get=extend_schema(
    summary="An assignment with its turn and your answers",
    tags=["assignments"],
    examples=[OpenApiExample("Assignment", value={
        **ASSIGNMENT_EXAMPLE, "turn_detail": TURN_EXAMPLE, "annotations": [ANNOTATION_EXAMPLE]})],
))
class AssignmentDetailView(OwnWorkMixin, ProjectScopedView, generics.RetrieveAPIView):
    model = Assignment
    serializer_class = AssignmentDetailSerializer
    filter_backends = []

    def project_queryset(self):
        queryset = Assignment.objects.filter(project=self.project).select_related(
            "annotator", "turn__dialogue"
        ).prefetch_related("turn__sentences", "sentence_annotations")
        if not self.sees_everyone:
            queryset = queryset.filter(annotator=self.request.user)
        return queryset


@extend_schema_view(get=extend_schema(
    summary="Sentence annotations: yours (leads: everyone's; cursor-paginated)",
    tags=["annotations"],
    examples=[OpenApiExample("Annotation", value=ANNOTATION_EXAMPLE)],
))
class AnnotationListView(OwnWorkMixin, ProjectScopedView, generics.ListAPIView):
    model = SentenceAnnotation
    serializer_class = SentenceAnnotationSerializer
    filterset_class = AnnotationFilter
    pagination_class = IdCursorPagination

    def project_queryset(self):
        queryset = SentenceAnnotation.objects.filter(assignment__project=self.project)
        if not self.sees_everyone:
            queryset = queryset.filter(assignment__annotator=self.request.user)
        return queryset
