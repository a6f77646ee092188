"""Questions (real-time, about a sentence), feedback (post-hoc, from a lead) and the qualification set (leads):
the QA services over HTTP.

An annotator reads and writes only their own questions and the feedback addressed
to them; a lead reads all of the project's. Someone else's thread is a 404.
"""

from django.db.models import Q
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.response import Response

from annotator.access import LEAD_ROLES
from annotator.qa.access import access_annotation_as_lead, access_feedback, access_own_feedback, access_qualification_result, access_question
from annotator.models import Feedback, QualificationResult, Question, Sentence, Turn
from annotator.qa.selectors import qualification_results
from annotator.qa import services as services
from annotator.qa.qualification import qualification_allow_retry, qualification_set, qualification_turns
from annotator.projects.protocols import protocol_for

from ..serializers import (
    MAX_ID,
    PROJECT_DEFINED,
    PathField,
    ProtocolValueField,
    blank_label,
    QualificationAttemptSerializer,
    QualificationSerializer,
    QualificationSetSerializer,
)
from ..pagination import PagePagination
from ..permissions import LEADS, ProjectScopedView


class MessageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    author = serializers.CharField(source="author.username")
    body = serializers.CharField()
    created_at = serializers.DateTimeField()


class QuestionSerializer(serializers.ModelSerializer):
    asked_by = serializers.CharField(source="asked_by.username", read_only=True)
    messages = MessageSerializer(many=True, read_only=True)
    step = serializers.CharField(allow_blank=True, read_only=True,
                                 help_text=PROJECT_DEFINED.format(kind="step") + " Empty for a question on the turn.")
    path = PathField(read_only=True, help_text="The decision path when the question was asked.")

    class Meta:
        model = Question
        fields = ["id", "turn", "sentence", "asked_by", "path", "step", "status", "unread_by_asker", "messages",
                  "created_at", "updated_at"]
        read_only_fields = fields


class AskSerializer(serializers.Serializer):
    turn = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    sentence = serializers.IntegerField(min_value=1, max_value=MAX_ID, required=False, allow_null=True)
    body = serializers.CharField(max_length=5000)
    path = PathField(required=False, help_text="Your decision path on the sentence when asking.")


class MessageInSerializer(serializers.Serializer):
    body = serializers.CharField(max_length=5000)


class FeedbackSerializer(serializers.ModelSerializer):
    lead = serializers.CharField(source="lead.username", read_only=True)
    annotator = serializers.CharField(source="annotation.assignment.annotator.username", read_only=True)
    sentence = serializers.IntegerField(source="annotation.sentence_id", read_only=True)
    given_label = serializers.CharField(source="annotation.label", read_only=True)
    expected_label = blank_label()

    class Meta:
        model = Feedback
        fields = ["id", "annotation", "sentence", "annotator", "given_label", "expected_label", "comment", "lead",
                  "created_at", "acknowledged_at"]
        read_only_fields = fields


class FeedbackInSerializer(serializers.Serializer):
    annotation = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="Id of a submitted sentence annotation.")
    comment = serializers.CharField(max_length=5000)
    expected_label = ProtocolValueField("label", required=False, allow_blank=True)


QUESTION_EXAMPLE = {
    "id": 4, "turn": 40, "sentence": 902, "asked_by": "ada",
    "path": {"relevance": "relevant", "kind": "cognitive"}, "step": "rational", "status": "answered",
    "unread_by_asker": True,
    "messages": [
        {"id": 9, "author": "ada", "body": "Is a superlative without a source rational?",
         "created_at": "2026-11-21T10:01:00Z"},
        {"id": 10, "author": "lea", "body": "Rational yes, grounded no: speculative.",
         "created_at": "2026-11-21T10:03:00Z"},
    ],
    "created_at": "2026-11-21T10:01:00Z", "updated_at": "2026-11-21T10:03:00Z",
}
FEEDBACK_EXAMPLE = {
    "id": 2, "annotation": 310, "sentence": 902, "annotator": "ada", "given_label": "reliable",
    "expected_label": "speculative", "comment": "The reference does not support the superlative.", "lead": "lea",
    "created_at": "2026-11-21T11:00:00Z", "acknowledged_at": None,
}


def _is_lead(view):
    return view.role in LEAD_ROLES


@extend_schema_view(get=extend_schema(
    summary="Questions: yours (leads: the project's)",
    parameters=[OpenApiParameter("status", str, enum=[c for c, _ in Question.Status.choices])],
    tags=["questions"], examples=[OpenApiExample("Thread", value=QUESTION_EXAMPLE)],
))
class QuestionListView(ProjectScopedView, generics.ListAPIView):
    model = Question
    serializer_class = QuestionSerializer
    pagination_class = PagePagination
    filter_backends = []

    def project_queryset(self):
        queryset = Question.objects.filter(project=self.project)
        if not _is_lead(self):
            queryset = queryset.filter(asked_by=self.request.user)
        else:  # not another person's question on a turn the lead is blind on
            queryset = queryset.exclude(~Q(asked_by=self.request.user), turn_id__in=self.blind_turns)
        state = self.request.query_params.get("status")
        if state is not None:
            if state not in Question.Status.values:
                raise serializers.ValidationError({"status": [f'"{state}" is not a valid choice.']})
            queryset = queryset.filter(status=state)
        return queryset.select_related("asked_by").prefetch_related("messages__author").order_by("-updated_at", "-id")

    @extend_schema(
        summary="Ask a question about a sentence (or a turn)",
        request=AskSerializer, responses={201: QuestionSerializer},
        examples=[OpenApiExample("Ask", request_only=True, value={
            "turn": 40, "sentence": 902, "body": "Is a superlative without a source rational?",
            "path": {"relevance": "relevant", "kind": "cognitive"}})],
        tags=["questions"],
    )
    def post(self, request, slug):
        serializer = AskSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        turn = Turn.objects.filter(pk=data["turn"], dialogue__project=self.project).select_related("dialogue").first()
        if turn is None:
            raise serializers.ValidationError({"turn": ["Not a turn of this project."]})
        sentence = None
        if data.get("sentence"):
            sentence = Sentence.objects.filter(pk=data["sentence"], turn=turn).first()
            if sentence is None:
                raise serializers.ValidationError({"sentence": ["Not a sentence of this turn."]})
        question = services.question_ask(project=self.project, user=request.user, turn=turn, body=data["body"],
                                         sentence=sentence, path=data.get("path"))
        return Response(QuestionSerializer(question).data, status=status.HTTP_201_CREATED)


@extend_schema_view(get=extend_schema(summary="A question thread", tags=["questions"],
                                      examples=[OpenApiExample("Thread", value=QUESTION_EXAMPLE)]))
class QuestionDetailView(ProjectScopedView, generics.RetrieveAPIView):
    model = Question
    serializer_class = QuestionSerializer
    filter_backends = []

    def project_queryset(self):
        queryset = Question.objects.filter(project=self.project)
        if not _is_lead(self):
            queryset = queryset.filter(asked_by=self.request.user)
        else:  # not another person's question on a turn the lead is blind on
            queryset = queryset.exclude(~Q(asked_by=self.request.user), turn_id__in=self.blind_turns)
        return queryset.select_related("asked_by").prefetch_related("messages__author")

    def retrieve(self, request, *args, **kwargs):
        question = self.get_object()
        services.question_mark_read(question=question, user=request.user)
        return Response(QuestionSerializer(question).data)


class QuestionReplyView(ProjectScopedView):
    """Add to a thread: a lead's answer, or the asker's follow-up."""

    serializer_class = MessageInSerializer
    filter_backends = []

    @extend_schema(
        summary="Answer (leads) or follow up (the asker)",
        request=MessageInSerializer, responses={201: QuestionSerializer},
        examples=[OpenApiExample("Answer", request_only=True, value={"body": "Rational yes, grounded no."})],
        tags=["questions"],
    )
    def post(self, request, slug, pk):
        question = get_object_or_404(Question, pk=access_question(request.user, pk).pk, project=self.project)
        serializer = MessageInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if question.asked_by_id == request.user.pk:
            services.question_follow_up(question=question, user=request.user, body=serializer.validated_data["body"])
        else:
            services.question_answer(question=question, lead=request.user, body=serializer.validated_data["body"])
        question = Question.objects.prefetch_related("messages__author").select_related("asked_by").get(pk=pk)
        return Response(QuestionSerializer(question).data, status=status.HTTP_201_CREATED)


class QuestionCloseView(ProjectScopedView):
    method_roles = {"POST": LEADS}
    serializer_class = QuestionSerializer
    filter_backends = []

    @extend_schema(summary="Close a question (leads)", request=None, responses={200: QuestionSerializer},
                   examples=[OpenApiExample("Closed", response_only=True,
                                            value={**QUESTION_EXAMPLE, "status": "closed"})],
                   tags=["questions"])
    def post(self, request, slug, pk):
        question = get_object_or_404(Question, pk=access_question(request.user, pk).pk, project=self.project)
        services.question_close(question=question, actor=request.user)
        question = Question.objects.prefetch_related("messages__author").select_related("asked_by").get(pk=pk)
        return Response(QuestionSerializer(question).data)


@extend_schema_view(get=extend_schema(
    summary="Feedback: addressed to you (leads: the project's)",
    parameters=[OpenApiParameter("pending", bool, description="Only feedback not yet acknowledged.")],
    tags=["feedback"], examples=[OpenApiExample("Feedback", value=FEEDBACK_EXAMPLE)],
))
class FeedbackListView(ProjectScopedView, generics.ListAPIView):
    model = Feedback
    method_roles = {"POST": LEADS}
    serializer_class = FeedbackSerializer
    pagination_class = PagePagination
    filter_backends = []

    def project_queryset(self):
        queryset = Feedback.objects.filter(project=self.project)
        if not _is_lead(self):
            queryset = queryset.filter(annotation__assignment__annotator=self.request.user)
        else:
            queryset = queryset.exclude(~Q(annotation__assignment__annotator=self.request.user),
                                        annotation__sentence__turn_id__in=self.blind_turns)
        pending = self.request.query_params.get("pending")
        if pending is not None:
            if pending not in ("true", "false", "1", "0"):
                raise serializers.ValidationError({"pending": ["Must be true or false."]})
            queryset = queryset.filter(acknowledged_at__isnull=pending in ("true", "1"))
        return queryset.select_related("lead", "annotation__assignment__annotator").order_by("-created_at", "-id")

    @extend_schema(
        summary="Give feedback on a submitted annotation (leads)",
        request=FeedbackInSerializer, responses={201: FeedbackSerializer},
        examples=[OpenApiExample("Feedback", request_only=True, value={
            "annotation": 310, "expected_label": "speculative",
            "comment": "The reference does not support the superlative."})],
        tags=["feedback"],
    )
    def post(self, request, slug):
        serializer = FeedbackInSerializer(data=request.data, context={"protocol": protocol_for(self.project)})
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            annotation = access_annotation_as_lead(request.user, self.project, data["annotation"])
        except Http404:
            raise serializers.ValidationError({"annotation": ["Not an annotation of this project."]}) from None
        feedback = services.feedback_give(annotation=annotation, lead=request.user, comment=data["comment"],
                                          expected_label=data.get("expected_label", ""))
        return Response(FeedbackSerializer(feedback).data, status=status.HTTP_201_CREATED)


@extend_schema_view(get=extend_schema(summary="One piece of feedback", tags=["feedback"],
                                      examples=[OpenApiExample("Feedback", value=FEEDBACK_EXAMPLE)]))
class FeedbackDetailView(ProjectScopedView, generics.RetrieveAPIView):
    model = Feedback
    serializer_class = FeedbackSerializer
    filter_backends = []

    def get_object(self):
        feedback = access_feedback(self.request.user, self.kwargs["pk"])
        if feedback.project_id != self.project.pk:
            raise Http404("No such feedback")
        return feedback


class FeedbackAcknowledgeView(ProjectScopedView):
    serializer_class = FeedbackSerializer
    filter_backends = []

    @extend_schema(summary="Acknowledge feedback addressed to you", request=None,
                   responses={200: FeedbackSerializer},
                   examples=[OpenApiExample("Acknowledged", response_only=True, value={
                       **FEEDBACK_EXAMPLE, "acknowledged_at": "2026-11-21T11:05:00Z"})],
                   tags=["feedback"])
    def post(self, request, slug, pk):
        feedback = access_own_feedback(request.user, pk)
        if feedback.project_id != self.project.pk:
            raise Http404("No such feedback")
        feedback = services.feedback_acknowledge(feedback=feedback, user=request.user)
        return Response(FeedbackSerializer(feedback).data)


QUALIFICATION_ATTEMPT_EXAMPLE = {
    "id": 12, "annotator": "ada", "attempt": 1, "correct": 17, "total": 20, "score": 0.85, "passed": True,
    "retry_allowed": False, "retry_allowed_by": None, "created_at": "2026-11-21T11:00:00Z",
}
QUALIFICATION_EXAMPLE = {
    "turns": [40, 41, 57], "pass_mark": 0.85,
    "results": [{"annotator": "ada", "attempts": [QUALIFICATION_ATTEMPT_EXAMPLE]}],
}


class QualificationView(ProjectScopedView):
    """The qualification set page of a lead: the set, its pass mark and every annotator's attempts."""

    method_roles = {"GET": LEADS, "PUT": LEADS}
    serializer_class = QualificationSerializer
    filter_backends = []

    def get_object(self):
        return self.project  # what a PUT changes (OPTIONS asks for it to describe PUT)

    def qualification(self):
        return {
            "turns": list(qualification_turns(self.project).values_list("pk", flat=True)),
            "pass_mark": self.project.qualification_pass_mark,
            "results": [{"annotator": annotator.get_username(), "attempts": attempts}
                        for annotator, attempts in qualification_results(self.project)],
        }

    @extend_schema(summary="The qualification set and results (leads)", tags=["qualification"],
                   examples=[OpenApiExample("Set and results", value=QUALIFICATION_EXAMPLE)])
    def get(self, request, slug):
        return Response(QualificationSerializer(self.qualification()).data)

    @extend_schema(
        summary="Choose the qualification set (leads)",
        description="Exactly these turns become the set (`[]` clears it). New annotators annotate them before "
                    "any real work and pass when their sentence accuracy against gold reaches `pass_mark`.",
        request=QualificationSetSerializer, responses={200: QualificationSerializer},
        examples=[OpenApiExample("Set", request_only=True, value={"turns": [40, 41, 57], "pass_mark": 0.85}),
                  OpenApiExample("Saved", response_only=True, value=QUALIFICATION_EXAMPLE)],
        tags=["qualification"],
    )
    def put(self, request, slug):
        serializer = QualificationSetSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        qualification_set(project=self.project, actor=request.user, turn_ids=serializer.validated_data["turns"],
                          pass_mark=serializer.validated_data["pass_mark"])
        return Response(QualificationSerializer(self.qualification()).data)


class QualificationRetryView(ProjectScopedView):
    method_roles = {"POST": LEADS}
    serializer_class = QualificationAttemptSerializer
    filter_backends = []

    @extend_schema(
        summary="Allow an annotator to take the qualification set again (leads)",
        description="Only for the latest attempt, when it failed; the annotator's qualification work is reset "
                    "(kept in the audit history).",
        request=None, responses={200: QualificationAttemptSerializer},
        examples=[OpenApiExample("Retry allowed", response_only=True, value={
            **QUALIFICATION_ATTEMPT_EXAMPLE, "correct": 12, "score": 0.6, "passed": False, "retry_allowed": True,
            "retry_allowed_by": "lea"})],
        tags=["qualification"],
    )
    def post(self, request, slug, pk):
        result = access_qualification_result(request.user, self.project, pk)
        result = qualification_allow_retry(result=result, actor=request.user)
        result = QualificationResult.objects.select_related("annotator", "retry_allowed_by").get(pk=result.pk)
        return Response(QualificationAttemptSerializer(result).data)
