"""Assignments and sentence annotations: an annotator reads their own, a lead reads everyone's.

A lead also reopens a submitted assignment, releases an unfinished one or gives it to another annotator.
"""

from django.contrib.auth import get_user_model
from django.db.models import Q
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.response import Response

from annotator.access import LEAD_ROLES, role_in
from annotator.models import Assignment, SentenceAnnotation
from annotator.work.assignment import assignment_reassign, assignment_release
from annotator.gold.services import annotation_reopen
from annotator.domain.vocabulary import Role

from ..filters import AnnotationFilter, AssignmentFilter
from ..pagination import IdCursorPagination, PagePagination
from ..permissions import LEADS, ProjectScopedView
from ..serializers import (
    AssignmentDetailSerializer,
    AssignmentSerializer,
    ReasonSerializer,
    ReassignSerializer,
    SentenceAnnotationSerializer,
)
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
    """Leads see every annotator's work (but not others' on the turns they hold an unsubmitted slot on);
    everyone else only their own."""

    @property
    def sees_everyone(self):
        return self.role in LEAD_ROLES

    def others_not_on_blind_turns(self, queryset, annotator_field, turn_field):
        return queryset.exclude(~Q(**{annotator_field: self.request.user}), **{f"{turn_field}__in": self.blind_turns})


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
        return self.others_not_on_blind_turns(queryset, "annotator", "turn_id")


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
        return self.others_not_on_blind_turns(queryset, "assignment__annotator", "assignment__turn_id")


class LeadAssignmentActionView(ProjectScopedView):
    """Base of a lead's action on any assignment of the project: it answers with the assignment."""

    method_roles = {"POST": LEADS}
    filter_backends = []

    def assignment(self, pk):
        return get_object_or_404(Assignment, pk=pk, project=self.project)

    def respond(self, assignment):
        assignment = Assignment.objects.select_related("annotator", "turn__dialogue").get(pk=assignment.pk)
        return Response(AssignmentSerializer(assignment).data)

    def valid_body(self, request):
        serializer = self.serializer_class(data=request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data


class AssignmentReopenView(LeadAssignmentActionView):
    """Send a submitted annotation back to its annotator; the gold derived from it is cleared."""

    serializer_class = ReasonSerializer

    @extend_schema(
        summary="Reopen a submitted assignment (leads)",
        description="The gold that came from agreement or adjudication on the turn is cleared (recorded in the "
                    "gold history) and derived again when the annotator submits; a lead's override stays.",
        request=ReasonSerializer, responses={200: AssignmentSerializer},
        examples=[
            OpenApiExample("Reopen", request_only=True, value={"reason": "Sentence 3 needs evidence."}),
            OpenApiExample("Reopened", response_only=True, value={**ASSIGNMENT_EXAMPLE, "version": 4}),
        ],
        tags=["assignments"],
    )
    def post(self, request, slug, pk):
        data = self.valid_body(request)
        return self.respond(annotation_reopen(self.assignment(pk), request.user, data["reason"]))


class AssignmentReleaseView(LeadAssignmentActionView):
    """Take an unfinished slot back from its holder; the turn opens for someone else."""

    serializer_class = ReasonSerializer

    @extend_schema(
        summary="Release an unfinished assignment (leads)",
        description="The released assignment and its answers are kept for the audit but no longer count as a "
                    "slot and can no longer be edited.",
        request=ReasonSerializer, responses={200: AssignmentSerializer},
        examples=[
            OpenApiExample("Release", request_only=True, value={"reason": "Away for two weeks."}),
            OpenApiExample("Released", response_only=True,
                           value={**ASSIGNMENT_EXAMPLE, "status": "released", "version": 4}),
        ],
        tags=["assignments"],
    )
    def post(self, request, slug, pk):
        data = self.valid_body(request)
        reason = data["reason"] or "released by a lead"  # what the lead's page records
        return self.respond(assignment_release(self.assignment(pk), actor=request.user, reason=reason))


class AssignmentReassignView(LeadAssignmentActionView):
    """Release an unfinished slot and give the same turn to another annotator (who starts from scratch)."""

    serializer_class = ReassignSerializer

    @extend_schema(
        summary="Reassign an unfinished assignment (leads)",
        description="Answers with the new assignment of the other annotator.",
        request=ReassignSerializer, responses={200: AssignmentSerializer},
        examples=[
            OpenApiExample("Reassign", request_only=True, value={"annotator": "grace"}),
            OpenApiExample("New assignment", response_only=True, value={
                **ASSIGNMENT_EXAMPLE, "id": 91, "annotator": "grace", "status": "assigned", "version": 1,
                "started_at": None}),
        ],
        tags=["assignments"],
    )
    def post(self, request, slug, pk):
        username = self.valid_body(request)["annotator"]
        target = get_user_model().objects.filter(username=username).first()
        # As on the lead's page: only the project's annotators can be given work.
        if target is None or role_in(target, self.project) != Role.ANNOTATOR:
            raise serializers.ValidationError({"annotator": [f"{username!r} is not an annotator of this project."]})
        return self.respond(assignment_reassign(self.assignment(pk), target, actor=request.user))
