"""Auto-label jobs (leads): start, watch progress, cancel, read predictions and the evaluation against gold.
The autolabel services run them."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.response import Response

from autolabel.models import AutoLabelJob, LLMProfile, Prediction
from autolabel.evaluation import selectors as calibration_selectors
from autolabel.jobs.services import job_cancel, job_create

from ..serializers import MAX_ID, JobEvaluationSerializer
from ..pagination import IdCursorPagination, PagePagination
from ..permissions import LEADS, ProjectScopedView


class JobSerializer(serializers.ModelSerializer):
    profile = serializers.CharField(source="profile.name", read_only=True, default=None, allow_null=True,
                                    help_text="The endpoint profile (null for a learned judge's job).")
    prompt_version = serializers.IntegerField(source="prompt_version.version", read_only=True)
    percent = serializers.FloatField(read_only=True, help_text="Turns done, in percent.")
    created_by = serializers.CharField(source="created_by.username", read_only=True, default=None, allow_null=True)
    cost = serializers.DecimalField(max_digits=12, decimal_places=6, coerce_to_string=False, read_only=True)

    class Meta:
        model = AutoLabelJob
        fields = [
            "id", "profile", "prompt_version", "model", "samples", "threshold", "use_n", "batch_mode", "status",
            "cancel_requested", "error", "total_turns", "done_turns", "percent", "requests", "retries", "faults",
            "abstentions", "problems", "prompt_tokens", "completion_tokens", "cost", "created_by", "created_at",
            "started_at", "finished_at",
        ]
        read_only_fields = fields


class JobStartSerializer(serializers.Serializer):
    profile = serializers.CharField(max_length=100,
                                    help_text="Name of an LLM endpoint profile (set up in the admin).")

    def validate_profile(self, name):
        # A CharField first: it refuses NUL characters, which PostgreSQL cannot compare.
        profile = LLMProfile.objects.filter(name=name).first()
        if profile is None:
            raise serializers.ValidationError(f"No LLM endpoint profile named {name!r}.")
        return profile
    model = serializers.CharField(required=False, allow_blank=True, max_length=200,
                                  help_text="Default: the profile's default model.")
    samples = serializers.IntegerField(required=False, default=5, min_value=1, max_value=100)
    threshold = serializers.IntegerField(required=False, default=3, min_value=1, max_value=100)
    turn_ids = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=MAX_ID), required=False,
                                     help_text="Default: every turn outside the qualification set.")
    use_n = serializers.BooleanField(required=False, default=True)
    batch_mode = serializers.BooleanField(required=False, default=False)


class PredictionSerializer(serializers.ModelSerializer):
    turn = serializers.IntegerField(source="sentence.turn_id", read_only=True)
    sentence_index = serializers.IntegerField(source="sentence.index", read_only=True)
    label = serializers.CharField(allow_blank=True, read_only=True,
                                  help_text="Project-defined: a label of the project's protocol "
                                            "(GET /api/v1/projects/{slug}/protocol/). Empty when the vote was "
                                            "inconclusive.")

    class Meta:
        model = Prediction
        fields = ["id", "sentence", "turn", "sentence_index", "label", "hallucinated", "hallucinated_votes",
                  "abstentions", "stage1_kind", "label_votes", "confidence"]
        read_only_fields = fields


JOB_EXAMPLE = {
    "id": 3, "profile": "baseline", "prompt_version": 1, "model": "baseline-lexical", "samples": 5, "threshold": 3,
    "use_n": True, "batch_mode": False, "status": "running", "cancel_requested": False, "error": "",
    "total_turns": 1200, "done_turns": 480, "percent": 40.0, "requests": 980, "retries": 12, "faults": 0,
    "abstentions": 3, "problems": {"missing marker": 2}, "prompt_tokens": 812000, "completion_tokens": 95000,
    "cost": 0.0, "created_by": "lea", "created_at": "2026-11-21T09:40:00Z", "started_at": "2026-11-21T09:40:01Z",
    "finished_at": None,
}
PREDICTION_EXAMPLE = {
    "id": 81, "sentence": 902, "turn": 40, "sentence_index": 1, "label": "speculative", "hallucinated": True,
    "hallucinated_votes": 4, "abstentions": 0, "stage1_kind": "cognitive",
    "label_votes": {"speculative": 4, "reliable": 1}, "confidence": None,
}


class JobQueryMixin:
    model = AutoLabelJob

    def project_queryset(self):
        return (
            AutoLabelJob.objects.filter(project=self.project)
            .select_related("profile", "prompt_version", "created_by").order_by("-id")
        )


@extend_schema_view(get=extend_schema(summary="Auto-label jobs (leads)", tags=["autolabel"],
                                      examples=[OpenApiExample("Job", value=JOB_EXAMPLE)]))
class JobListView(JobQueryMixin, ProjectScopedView, generics.ListAPIView):
    method_roles = {"GET": LEADS, "POST": LEADS}
    serializer_class = JobSerializer
    pagination_class = PagePagination
    filter_backends = []

    @extend_schema(
        summary="Start an auto-label job (leads)",
        description="Queues the job for a Celery worker: each turn's sentences are labelled in one prompt, "
                    "`samples` replies are drawn and a sentence is called hallucinated when at least "
                    "`threshold` of them say so.",
        request=JobStartSerializer, responses={201: JobSerializer},
        examples=[
            OpenApiExample("Start", request_only=True,
                           value={"profile": "baseline", "samples": 5, "threshold": 3}),
            OpenApiExample("Queued", response_only=True, status_codes=["201"],
                           value={**JOB_EXAMPLE, "status": "queued", "done_turns": 0, "percent": 0.0}),
        ],
        tags=["autolabel"],
    )
    def post(self, request, slug):
        serializer = JobStartSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        job = job_create(
            project=self.project, profile=data["profile"], model=data.get("model", ""), samples=data["samples"],
            threshold=data["threshold"], turn_ids=data.get("turn_ids"), use_n=data["use_n"],
            batch_mode=data["batch_mode"], created_by=request.user,
        )
        job = self.project_queryset().get(pk=job.pk)
        return Response(JobSerializer(job).data, status=status.HTTP_201_CREATED)


@extend_schema_view(get=extend_schema(summary="A job: status and progress (leads)", tags=["autolabel"],
                                      examples=[OpenApiExample("Job", value=JOB_EXAMPLE)]))
class JobDetailView(JobQueryMixin, ProjectScopedView, generics.RetrieveAPIView):
    method_roles = {"GET": LEADS}
    serializer_class = JobSerializer
    filter_backends = []


class JobCancelView(JobQueryMixin, ProjectScopedView):
    method_roles = {"POST": LEADS}
    serializer_class = JobSerializer
    filter_backends = []

    @extend_schema(
        summary="Cancel a job (leads)",
        description="A queued job stops at once, a running one at its next write; predictions made so far stay.",
        request=None, responses={200: JobSerializer},
        examples=[OpenApiExample("Cancelling", response_only=True,
                                 value={**JOB_EXAMPLE, "cancel_requested": True})],
        tags=["autolabel"],
    )
    def post(self, request, slug, pk):
        job = job_cancel(get_object_or_404(self.project_queryset(), pk=pk))
        return Response(JobSerializer(self.project_queryset().get(pk=job.pk)).data)


@extend_schema_view(get=extend_schema(summary="A job's predictions (leads; cursor-paginated)", tags=["autolabel"],
                                      examples=[OpenApiExample("Prediction", value=PREDICTION_EXAMPLE)]))
class PredictionListView(ProjectScopedView, generics.ListAPIView):
    model = Prediction
    method_roles = {"GET": LEADS}
    serializer_class = PredictionSerializer
    pagination_class = IdCursorPagination
    filter_backends = []

    def project_queryset(self):
        job = get_object_or_404(AutoLabelJob, pk=self.kwargs["pk"], project=self.project)
        # Not the pre-labels of the turns the lead holds an unsubmitted slot on.
        return Prediction.objects.filter(job=job).exclude(sentence__turn_id__in=self.blind_turns).select_related("sentence")


class EvaluationQuerySerializer(serializers.Serializer):
    compare = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID,
                                       help_text="Another finished job of the project to compare with.")


class JobEvaluationView(JobQueryMixin, ProjectScopedView):
    """The job's evaluation page as numbers: the same report, from the same function."""

    method_roles = {"GET": LEADS}
    serializer_class = JobEvaluationSerializer
    filter_backends = []

    @extend_schema(
        summary="A job's evaluation against gold (leads)",
        description="CogniBench's measure over the project's protocol: word-weighted detection scores at every "
                    "threshold from 1 to the job's samples, per evaluation view of the protocol (`views`: id and name "
                    "from its document; the view ids, the macro's id and the family ids are project-defined), and per "
                    "family a confusion matrix at the job's threshold (`confusion`, by family id; also at the top "
                    "level under the family's id, e.g. CogniBench's `cognitive` four-way matrix). Only sentences with "
                    "gold count. Per threshold, the macro (`macro.id`; CogniBench: `cognibench_overall`, the paper's "
                    "Table 3 'Overall', mean of the factual and cognitive F1) and each view (CogniBench: "
                    "`any_hallucination` the pooled F1 over all hallucinated words, `factual`, `cognitive`); "
                    "`overall` is kept as an alias of the pooled view (its former name) for existing clients. "
                    "`baselines`: flag every sentence / flag none, counted the same way. `calibration`: reliability "
                    "bins, ECE and Brier of the vote shares (binary over the protocol's hallucination group, n-way "
                    "over its labels); `rater`: the pre-labeler's kappa with gold and each annotator and the "
                    "annotators' alpha without and with it, per protocol step. With `?compare=<job id>`: "
                    "`comparison`, F1 per view (and the macro) of both jobs with 95 % turn-bootstrap intervals and "
                    "the paired difference.",
        parameters=[OpenApiParameter("compare", int, required=False,
                                     description="Another finished job of the project to compare with.")],
        examples=[OpenApiExample("Evaluation", value={
            "job": 3, "model": "baseline-lexical", "prompt_version": 1, "sentences": 5, "words": 48, "samples": 5,
            "threshold": 3, "gold_sentences_in_scope": 5,
            "thresholds": {"3": {
                "overall": {"precision": 1.0, "recall": 0.5, "f1": 0.6667, "correct_words": 12,
                            "predicted_words": 12, "gold_words": 24},
                "factual": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "correct_words": 12,
                            "predicted_words": 12, "gold_words": 12},
                "cognitive": {"precision": None, "recall": 0.0, "f1": None, "correct_words": 0,
                              "predicted_words": 0, "gold_words": 12}}},
            "cognitive": {"columns": ["misleading", "speculative", "reliable", "unequivocal", "not cognitive",
                                      "no label"],
                          "rows": ["misleading", "speculative", "reliable", "unequivocal"],
                          "matrix": {"speculative": {"misleading": 0, "speculative": 1, "reliable": 0,
                                                     "unequivocal": 0, "not cognitive": 0, "no label": 0}},
                          "total": 1, "correct": 1, "accuracy": 1.0, "accuracy_when_cognitive": 1.0},
        })],
        tags=["autolabel"],
    )
    def get(self, request, slug, pk):
        self.refuse_if_blind()  # scored against gold, the gold of the turns the lead is blind on included
        job = get_object_or_404(self.project_queryset(), pk=pk)
        query = EvaluationQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        other = None
        if query.validated_data.get("compare") is not None:
            other = calibration_selectors.comparable_jobs(job).filter(pk=query.validated_data["compare"]).first()
            if other is None:
                raise serializers.ValidationError({"compare": ["Not another finished job of this project."]})
        return Response(calibration_selectors.job_evaluation_report(job, other))
