"""An annotator's work over the API: the next item, one protocol step at a time, notes, evidence, submit.

Thin: every write goes through ``annotator.work.services`` and so through the
one write path, ``annotation_write`` (locking, idempotency by request id, version
check, audit), exactly as the annotation screen does; ``assignment_next`` is the same call as the screen's Start button.
"""

from django.http import Http404
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotator.access import access_assignment
from annotator.models import Sentence, SentenceAnnotation
from annotator.work import services as services
from annotator.work.assignment import assignment_next
from annotator.domain.vocabulary import ProtocolMode
from annotator.projects.protocols import protocol_for_assignment

from .. import serializers as s
from ..permissions import ProjectScopedView
from ..schema import ErrorSerializer
from .work import ANNOTATION_EXAMPLE, ASSIGNMENT_EXAMPLE

IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key", str, OpenApiParameter.HEADER, required=False,
    description="Same as the `request_id` field: a retried request with the same key changes nothing.",
)
RESULT_EXAMPLE = OpenApiExample("Saved", response_only=True, value={
    "assignment": {**ASSIGNMENT_EXAMPLE, "version": 4},
    "annotation": {**ANNOTATION_EXAMPLE, "path": {"relevance": "relevant", "kind": "cognitive"}, "label": ""},
    "next_step": "rational", "replayed": False,
})
CONFLICT = OpenApiResponse(ErrorSerializer, description="Changed in another tab (`version_conflict`) or the "
                                                       "assignment is submitted or released (`assignment_closed`).")


class NextAssignmentView(ProjectScopedView):
    """Your unfinished assignment, or a newly claimed turn (qualification turns first when required)."""

    serializer_class = s.AssignmentDetailSerializer
    filter_backends = []

    @extend_schema(
        summary="Next item to annotate",
        request=None,
        responses={
            200: s.AssignmentDetailSerializer,
            204: OpenApiResponse(description="No turn left for you in this project."),
            403: OpenApiResponse(ErrorSerializer, description="Adjudicators and leads take annotation slots only "
                                                              "where the project lets adjudicators annotate."),
        },
        examples=[OpenApiExample("Next", response_only=True, value={
            **ASSIGNMENT_EXAMPLE, "turn_detail": None, "annotations": []})],
        tags=["assignments"],
    )
    def post(self, request, slug):
        assignment = assignment_next(self.project, request.user)
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        assignment = (
            type(assignment).objects.select_related("annotator", "turn__dialogue")
            .prefetch_related("turn__sentences", "sentence_annotations").get(pk=assignment.pk)
        )
        return Response(s.AssignmentDetailSerializer(assignment).data)


class _AssignmentActionView(ProjectScopedView):
    """Base of the writes on one of your assignments (another person's assignment is a 404)."""

    input_serializer = None
    filter_backends = []

    def get_serializer_class(self):
        return self.input_serializer

    def assignment(self, pk):
        assignment = access_assignment(self.request.user, pk)
        if assignment.project_id != self.project.pk:
            raise Http404("No such assignment")
        assignment.project = self.project
        return assignment

    def common(self, data):
        return {
            "actor": self.request.user,
            "request_id": self.request.headers.get("Idempotency-Key") or data.get("request_id") or "",
            "expected_version": data.get("expected_version"),
        }

    def sentence(self, assignment, sentence_id):
        sentence = Sentence.objects.filter(pk=sentence_id, turn_id=assignment.turn_id).first()
        if sentence is None:
            raise ValidationError({"sentence": ["Not a sentence of this assignment's turn."]})
        return sentence

    def post(self, request, slug, pk):
        assignment = self.assignment(pk)  # someone else's assignment: 404 before anything else
        serializer = self.input_serializer(data=request.data,
                                           context={"protocol": protocol_for_assignment(assignment)})
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        sentence = self.sentence(assignment, data["sentence"]) if "sentence" in data else None
        common = self.common(data)
        if sentence is not None:
            common["seconds"] = data.get("seconds", 0)
        outcome = self.act(assignment, sentence, data, common)
        return Response(self.result(outcome, sentence))

    def result(self, outcome, sentence):
        annotation = outcome.annotation
        if annotation is None and sentence is not None:
            annotation = SentenceAnnotation.objects.filter(assignment=outcome.assignment, sentence=sentence).first()
        next_step = None
        if sentence is not None and outcome.assignment.project.protocol_mode == ProtocolMode.SEQUENTIAL:
            protocol = protocol_for_assignment(outcome.assignment)
            next_step = protocol.next_step(protocol.ordered(annotation.path) if annotation else {})
        return {
            "assignment": s.AssignmentSerializer(outcome.assignment).data,
            "annotation": s.SentenceAnnotationSerializer(annotation).data if annotation else None,
            "next_step": next_step,
            "replayed": outcome.replayed,
        }


def _action_schema(summary, serializer, example):
    return extend_schema(
        summary=summary,
        request=serializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={200: s.ActionResultSerializer, 409: CONFLICT},
        examples=[OpenApiExample("Request", value=example, request_only=True), RESULT_EXAMPLE],
        tags=["annotations"],
    )


@extend_schema_view(post=_action_schema("Answer one protocol step", s.AnswerStepSerializer, {
    "sentence": 901, "step": "kind", "answer": "cognitive", "request_id": "3f1c9a52-answer-1",
    "expected_version": 3}))
class AnswerStepView(_AssignmentActionView):
    """Answer one question of the sequential protocol for a sentence (an earlier step re-answered clears the later ones)."""

    input_serializer = s.AnswerStepSerializer

    def act(self, assignment, sentence, data, common):
        return services.annotation_answer_step(assignment, sentence, data["step"], data["answer"], **common)


@extend_schema_view(post=_action_schema("Pick a label (independent mode)", s.PickLabelSerializer,
    {"sentence": 901, "label": "speculative", "request_id": "3f1c9a52-pick-1"}))
class PickLabelView(_AssignmentActionView):
    """Independent mode: pick one of the labels of the project's protocol at once."""

    input_serializer = s.PickLabelSerializer

    def act(self, assignment, sentence, data, common):
        return services.annotation_pick_label(assignment, sentence, data["label"], **common)


@extend_schema_view(post=_action_schema("Undo the last answer", s.UndoSerializer, {"sentence": 901, "request_id": "3f1c9a52-undo-1"}))
class UndoView(_AssignmentActionView):
    """Take back the last answer of a sentence."""

    input_serializer = s.UndoSerializer

    def act(self, assignment, sentence, data, common):
        return services.annotation_undo(assignment, sentence, **common)


@extend_schema_view(post=_action_schema("Write a note", s.NoteSerializer,
    {"sentence": 901, "note": "The reference gives no date.", "request_id": "3f1c9a52-note-1"}))
class NoteView(_AssignmentActionView):
    """Set (or clear, with an empty note) your note on a sentence."""

    input_serializer = s.NoteSerializer

    def act(self, assignment, sentence, data, common):
        return services.annotation_set_note(assignment, sentence, data["note"], **common)


@extend_schema_view(post=_action_schema("Attach evidence", s.EvidenceAddSerializer,
    {"sentence": 901, "start": 0, "end": 38, "request_id": "3f1c9a52-evidence-1"}))
class EvidenceAddView(_AssignmentActionView):
    """Attach a span of the reference as evidence for a sentence."""

    input_serializer = s.EvidenceAddSerializer

    def act(self, assignment, sentence, data, common):
        return services.annotation_evidence_add(assignment, sentence, data["start"], data["end"], **common)


@extend_schema_view(post=_action_schema("Remove evidence", s.EvidenceRemoveSerializer,
    {"sentence": 901, "evidence": 12, "request_id": "3f1c9a52-evidence-2"}))
class EvidenceRemoveView(_AssignmentActionView):
    """Detach an evidence span from a sentence."""

    input_serializer = s.EvidenceRemoveSerializer

    def act(self, assignment, sentence, data, common):
        return services.annotation_evidence_remove(assignment, sentence, data["evidence"], **common)


@extend_schema_view(post=_action_schema("Submit the turn", s.SubmitSerializer, {"request_id": "3f1c9a52-submit", "expected_version": 9}))
class SubmitView(_AssignmentActionView):
    """Submit the turn: every sentence needs a label (and the evidence the project requires)."""

    input_serializer = s.SubmitSerializer

    def act(self, assignment, sentence, data, common):
        return services.assignment_submit(assignment, **common)
