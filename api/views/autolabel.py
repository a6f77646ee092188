"""Auto-label jobs (leads): start, watch progress, cancel, read predictions and the evaluation against gold.
The autolabel services run them."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.response import Response

from django.db.models import F

from autolabel.endpoints.selectors import endpoints_usable_by
from autolabel.jobs import estimation, selectors as job_selectors
from autolabel.learned.store import JudgeRefused
from autolabel.models import AutoLabelJob, LearnedJudge, Prediction
from autolabel.evaluation import selectors as calibration_selectors
from autolabel.jobs.services import JobError, job_cancel, job_create, learned_job_create

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
    state = serializers.CharField(source="state.key", read_only=True,
                                  help_text="done, done_with_problems, failed, waiting_for_worker, queued, running or "
                                            "cancelled.")
    state_reason = serializers.CharField(source="state.reason", read_only=True,
                                         help_text="Failed: why; done with problems: the counts and the first reason.")
    estimate = serializers.JSONField(read_only=True, help_text="The estimate made when the job was created "
                                     "(requests, prompt and reply tokens, cost, seconds); prompt_tokens, "
                                     "completion_tokens and cost are what the API reported.")

    class Meta:
        model = AutoLabelJob
        fields = [
            "id", "profile", "prompt_version", "model", "samples", "threshold", "use_n", "batch_mode", "status",
            "cancel_requested", "error", "state", "state_reason", "first_fault", "total_turns", "done_turns", "percent", "requests", "retries", "faults",
            "abstentions", "problems", "prompt_tokens", "completion_tokens", "cost", "created_by", "created_at",
            "started_at", "finished_at", "estimate",
        ]
        read_only_fields = fields


class JobStartSerializer(serializers.Serializer):
    profile = serializers.CharField(max_length=100,
                                    help_text="Name of an LLM endpoint: the project's own (its endpoints page) or "
                                              "the site's (set up in the admin); the project's first.")

    def validate_profile(self, name):
        # A CharField first: it refuses NUL characters, which PostgreSQL cannot compare.
        project = self.context["project"]
        profile = (endpoints_usable_by(project).filter(name=name)
                   .order_by(F("project").desc(nulls_last=True)).first())
        if profile is None:
            raise serializers.ValidationError(f"No LLM endpoint named {name!r} for this project.")
        return profile
    model = serializers.CharField(required=False, allow_blank=True, max_length=200,
                                  help_text="Default: the profile's default model.")
    samples = serializers.IntegerField(required=False, default=5, min_value=1, max_value=100)
    threshold = serializers.IntegerField(required=False, default=3, min_value=1, max_value=100)
    turn_ids = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=MAX_ID), required=False,
                                     help_text="Default: every turn outside the qualification set.")
    use_n = serializers.BooleanField(required=False, default=True)
    batch_mode = serializers.BooleanField(required=False, default=False)


class JobCreateSerializer(JobStartSerializer):
    """Starting a job: an LLM endpoint (``profile``) or, as the job form offers it, the learned judge."""

    profile = serializers.CharField(max_length=100, required=False,
                                    help_text="Name of an LLM endpoint: the project's own (its endpoints page) or "
                                              "the site's (set up in the admin); the project's first. Required "
                                              "unless `learned_judge` is given.")
    learned_judge = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_ID,
        help_text="Instead of `profile`: the id of a trained learned judge of the project (GET learned-judge/). "
                  "No service is called; model, samples, threshold, use_n, batch_mode and turn_ids do not apply "
                  "(every turn outside the qualification set). Refused for another protocol version.")

    def validate(self, data):
        if ("profile" in data) == ("learned_judge" in data):
            raise serializers.ValidationError("Give either `profile` (an LLM endpoint) or `learned_judge`.")
        return data


class PredictionSerializer(serializers.ModelSerializer):
    turn = serializers.IntegerField(source="sentence.turn_id", read_only=True)
    sentence_index = serializers.IntegerField(source="sentence.index", read_only=True)
    label = serializers.CharField(allow_blank=True, read_only=True,
                                  help_text="Project-defined: a label of the project's protocol "
                                            "(GET /api/v1/projects/{slug}/protocol/). Empty when the vote was "
                                            "inconclusive.")

    values = serializers.SerializerMethodField(
        help_text="The voted values of the protocol's steps of other kinds than choice (multiple: a list of answer "
                  "values, scale: an integer, text: the first valid reply), by step id, at the job's threshold; "
                  "empty for a protocol of choice steps only or a label that passes none.")

    class Meta:
        model = Prediction
        fields = ["id", "sentence", "turn", "sentence_index", "label", "hallucinated", "hallucinated_votes",
                  "abstentions", "stage1_kind", "label_votes", "confidence", "values"]
        read_only_fields = fields
        # The model's help text names CogniBench's families (changing it is a migration).
        extra_kwargs = {"stage1_kind": {"help_text": "The family of the label (a family id of the project's "
                                                     "protocol), as the agreeing samples said."}}

    def get_values(self, prediction) -> dict:
        job = self.context.get("job")
        return {} if job is None else job_selectors.prediction_values(prediction, job)  # the gold export's, too


JOB_EXAMPLE = {
    "id": 3, "profile": "baseline", "prompt_version": 1, "model": "baseline-lexical", "samples": 5, "threshold": 3,
    "use_n": True, "batch_mode": False, "status": "running", "cancel_requested": False, "error": "",
    "state": "running", "state_reason": "", "first_fault": "",
    "total_turns": 1200, "done_turns": 480, "percent": 40.0, "requests": 980, "retries": 12, "faults": 0,
    "abstentions": 3, "problems": {"missing marker": 2}, "prompt_tokens": 812000, "completion_tokens": 95000,
    "cost": 0.0, "created_by": "lea", "created_at": "2026-11-21T09:40:00Z", "started_at": "2026-11-21T09:40:01Z",
    "finished_at": None,
    "estimate": {"turns": 1200, "sentences": 9800, "requests": 2400, "prompt_tokens": 2100000,
                 "completion_tokens": 240000, "cost": "7.650000", "seconds": 310.0},
}
PREDICTION_EXAMPLE = {
    "id": 81, "sentence": 902, "turn": 40, "sentence_index": 1, "label": "speculative", "hallucinated": True,
    "hallucinated_votes": 4, "abstentions": 0, "stage1_kind": "cognitive",
    "label_votes": {"speculative": 4, "reliable": 1}, "confidence": None, "values": {},
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
        request=JobCreateSerializer, responses={201: JobSerializer},
        examples=[
            OpenApiExample("Start", request_only=True,
                           value={"profile": "baseline", "samples": 5, "threshold": 3}),
            OpenApiExample("Start with the learned judge", request_only=True, value={"learned_judge": 2}),
            OpenApiExample("Queued", response_only=True, status_codes=["201"],
                           value={**JOB_EXAMPLE, "status": "queued", "done_turns": 0, "percent": 0.0}),
        ],
        tags=["autolabel"],
    )
    def post(self, request, slug):
        serializer = JobCreateSerializer(data=request.data, context={"project": self.project})
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if "learned_judge" in data:
            return self._learned(request, data["learned_judge"])
        job = job_create(
            project=self.project, profile=data["profile"], model=data.get("model", ""), samples=data["samples"],
            threshold=data["threshold"], turn_ids=data.get("turn_ids"), use_n=data["use_n"],
            batch_mode=data["batch_mode"], created_by=request.user,
        )
        job = self.project_queryset().get(pk=job.pk)
        return Response(JobSerializer(job).data, status=status.HTTP_201_CREATED)

    def _learned(self, request, judge_id):
        """The learned judge's job (refused to a lead blind in the project, as its own route is: it learned from
        all of the project's gold)."""
        self.refuse_if_blind()
        job = learned_job_start(self.project, request.user, judge_id, field="learned_judge")
        return Response(JobSerializer(self.project_queryset().get(pk=job.pk)).data, status=status.HTTP_201_CREATED)


def learned_job_start(project, user, judge_id, *, field):
    """A job of the project's learned judge ``judge_id`` through its one write path; a judge of another project,
    or one refused (another protocol version), is a 400 on ``field``. Used by the job list and the judge's route."""
    judge = LearnedJudge.objects.filter(project=project, pk=judge_id).first()
    if judge is None:
        raise serializers.ValidationError({field: ["No learned judge of this project has this id."]})
    try:
        return learned_job_create(project=project, judge=judge, created_by=user)
    except (JudgeRefused, JobError) as refusal:
        raise serializers.ValidationError({field: [str(refusal)]}) from None


class EstimateSerializer(serializers.Serializer):
    turns = serializers.IntegerField()
    sentences = serializers.IntegerField()
    requests = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost = serializers.DecimalField(max_digits=14, decimal_places=6, coerce_to_string=True,
                                    help_text="At the endpoint's prices per million tokens (half in batch mode).")
    seconds = serializers.FloatField(allow_null=True, help_text="At the endpoint's measured latency and "
                                     "concurrency; null when its latency was never measured (test it) or in batch.")
    counted_turns = serializers.IntegerField(help_text="Turns whose prompts were built; the rest scaled by sentences.")
    stage2_upper_bound = serializers.BooleanField(help_text="The second stage counted for every sentence.")


ESTIMATE_EXAMPLE = {"turns": 7, "sentences": 34, "requests": 14, "prompt_tokens": 12617, "completion_tokens": 2405,
                    "cost": "0.055632", "seconds": 8.4, "counted_turns": 7, "stage2_upper_bound": True}


class JobEstimateView(ProjectScopedView):
    method_roles = {"POST": LEADS}
    serializer_class = EstimateSerializer
    filter_backends = []

    @extend_schema(
        summary="Estimate a job before starting it (leads)",
        description="The same body as starting a job; nothing is sent to the endpoint and no job is created. The "
                    "real prompts are built and counted (about four characters a token); the cost is at the "
                    "endpoint's prices, the time at its measured latency and concurrency.",
        request=JobStartSerializer, responses={200: EstimateSerializer},
        examples=[OpenApiExample("Estimate", response_only=True, value=ESTIMATE_EXAMPLE)],
        tags=["autolabel"],
    )
    def post(self, request, slug):
        serializer = JobStartSerializer(data=request.data, context={"project": self.project})
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        turns, strangers = job_selectors.job_scope(self.project, data.get("turn_ids"))
        if strangers:
            raise serializers.ValidationError({"turn_ids": [f"Turns not in this project: {strangers[:10]}"]})
        estimate = estimation.estimate_for(self.project, data["profile"], turns=turns, samples=data["samples"],
                                           use_n=data["use_n"], batch_mode=data["batch_mode"])
        return Response(EstimateSerializer(estimate.as_dict()).data)


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
        job = self.job = get_object_or_404(AutoLabelJob, pk=self.kwargs["pk"], project=self.project)
        # Not the pre-labels of the turns the lead holds an unsubmitted slot on.
        return Prediction.objects.filter(job=job).exclude(sentence__turn_id__in=self.blind_turns).select_related("sentence")

    def get_serializer_context(self):
        # The values of non-choice steps are voted from the samples in the job's own protocol and threshold.
        job = getattr(self, "job", None)
        return {**super().get_serializer_context(), **({"job": job} if job is not None else {})}


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
                    "level under the family's id). Only sentences with "
                    "gold count. Per threshold, the macro (`macro.id`; CogniBench: `cognibench_overall`, the paper's "
                    "Table 3 'Overall', mean of its two families' F1) and each view (CogniBench: "
                    "`any_hallucination` the pooled F1 over all hallucinated words, and one view per family); "
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
