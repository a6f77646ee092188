"""The learned judge (leads): train it on the project's gold (a worker does), read its cross-validated figures,
label the project with it. The services of ``autolabel.learned`` and ``autolabel.jobs`` do the work."""

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from annotator.access import BLIND_EXPORT_MESSAGE
from autolabel.learned.store import judge_predictions_open
from autolabel.learned.training import SHAPES, TrainingInProgress, judge_report, judge_train_create
from autolabel.models import AutoLabelJob, LearnedJudge

from ..exceptions import Conflict
from ..permissions import LEADS, ProjectScopedView
from ..schema import ErrorSerializer
from .autolabel import JOB_EXAMPLE, JobSerializer, learned_job_start


class JudgeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=LearnedJudge.Status.choices)
    error = serializers.CharField(allow_blank=True)
    protocol_version = serializers.IntegerField(allow_null=True, help_text="The project's protocol version it learned.")
    gold_version = serializers.IntegerField(allow_null=True)
    gold_sentences = serializers.IntegerField()
    votes_job = serializers.IntegerField(allow_null=True, help_text="The pre-labelling job whose votes it read.")
    options = serializers.JSONField()
    chosen = serializers.JSONField(allow_null=True, help_text=(
        "With options.strategy \"choose\": the model shape chosen on all the gold (strategy, regularization)."))
    candidates = serializers.JSONField(help_text=(
        "Each candidate shape with its macro F1 by grouped cross-validation on the gold (what the choice read)."))
    cross_validated = serializers.JSONField(allow_null=True, help_text=(
        "k-fold cross-validation grouped by turn: macro_f1, views (view id -> F1), folds, sentences, turns, and "
        "intervals ({macro_f1: [low, high], views: {view id: [low, high]}}: 95 % bootstrap intervals over the turns, "
        "of the first split), and splits (the headline: count, macro_f1 per split, mean, sd, views: {view id: "
        "{mean, sd}}: the figures over that many group splits)."))
    learning_curve = serializers.JSONField(help_text="Macro F1 against the gold sentences trained on.")
    seconds = serializers.JSONField(allow_null=True)
    out_of_fold = serializers.JSONField(allow_null=True, help_text=(
        "The out-of-fold predictions kept (rows, splits), downloaded from learned-judge/out-of-fold/; null for a "
        "judge not trained, or trained before they were kept."))


class JudgeTrainSerializer(serializers.Serializer):
    shape = serializers.ChoiceField(choices=list(SHAPES), default="choose", help_text=(
        "The model: `choose` (by grouped cross-validation on the gold, the default), `steps` (one classifier per "
        "step of the walk), `flat` (one over the labels) or `verdict` (hallucinated or not from all the gold, then the "
        "label within that side from that side's gold)."))
    learning_curve = serializers.BooleanField(default=False, help_text=(
        "Also the learning curve (macro F1 against a growing share of the gold): four more cross-validations, most "
        "of a training's time. Without it the judge's `learning_curve` is []."))


class JudgeLabelSerializer(serializers.Serializer):
    judge = serializers.IntegerField(min_value=1, max_value=2**63 - 1, help_text="A trained judge of the project.")


JUDGE_EXAMPLE = {
    "id": 2, "status": "done", "error": "", "protocol_version": None, "gold_version": 4, "gold_sentences": 253,
    "votes_job": None, "options": {"strategy": "choose"}, "chosen": {"strategy": "steps", "regularization": 1.0},
    "candidates": [{"strategy": "steps", "regularization": 1.0, "macro_f1": 0.4},
                   {"strategy": "flat", "regularization": 1.0, "macro_f1": 0.36},
                   {"strategy": "flat", "regularization": 0.3, "macro_f1": 0.33}],
    "cross_validated": {"macro_f1": 0.41, "views": {"any_hallucination": 0.69, "factual": 0.28, "cognitive": 0.55},
                        "folds": 5, "sentences": 253, "turns": 30,
                        "intervals": {"macro_f1": [0.33, 0.49], "views": {"any_hallucination": [0.62, 0.75],
                                                                         "factual": [0.15, 0.4], "cognitive": [0.46, 0.63]}}},
    "learning_curve": [{"share": 0.2, "sentences": 36, "macro_f1": 0.34}], "seconds": {"cross_validation": 8.1,
                                                                                       "fit": 0.4},
    "out_of_fold": {"rows": 759, "splits": 3},
}
# The headline over group splits (its own name: the protocol-words check reads constants assigned to *_EXAMPLE).
SPLITS_EXAMPLE = {"count": 3, "macro_f1": [0.41, 0.38, 0.4], "mean": 0.3967, "sd": 0.0153,
                  "views": {"any_hallucination": {"mean": 0.68, "sd": 0.01}, "factual": {"mean": 0.25, "sd": 0.03},
                            "cognitive": {"mean": 0.54, "sd": 0.02}}}
JUDGE_EXAMPLE["cross_validated"]["splits"] = SPLITS_EXAMPLE


class LearnedJudgeView(ProjectScopedView):
    method_roles = {"GET": LEADS}
    serializer_class = JudgeSerializer

    @extend_schema(summary="The project's latest learned judge (leads)", tags=["autolabel"],
                   examples=[OpenApiExample("Judge", value=JUDGE_EXAMPLE)])
    def get(self, request, slug):
        self.refuse_if_blind()  # trained and measured on all gold
        judge = LearnedJudge.objects.filter(project=self.project).select_related("protocol_version").first()
        if judge is None:
            raise NotFound("This project has no learned judge yet.")
        return Response(judge_report(judge))


class JudgeChoiceSerializer(serializers.Serializer):
    judge = serializers.IntegerField(min_value=1, max_value=2**63 - 1, required=False,
                                     help_text="A judge of the project (default: its latest).")


class LearnedJudgePredictionsView(ProjectScopedView):
    """The judge's out-of-fold predictions, as kept when it was trained (leads; refused to a blind lead, as every
    export)."""

    method_roles = {"GET": LEADS}
    serializer_class = JudgeChoiceSerializer

    @extend_schema(summary="A learned judge's out-of-fold predictions (leads)",
                   description="One JSON line per gold sentence and group split: split, fold, sentence_id, turn_id, "
                               "dialogue, record, sentence_index, words, gold, predicted, hallucinated, probabilities "
                               "(label -> probability). The judge's figures are recomputed from them alone "
                               "(docs/autolabel.md). 404 when the judge kept none.",
                   parameters=[OpenApiParameter("judge", int, required=False,
                                                description="A judge of the project (default: its latest).")],
                   responses={(200, "application/x-ndjson"): OpenApiResponse(OpenApiTypes.STR)}, tags=["autolabel"])
    def get(self, request, slug):
        self.refuse_if_blind(BLIND_EXPORT_MESSAGE)
        query = JudgeChoiceSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        judges = LearnedJudge.objects.filter(project=self.project)
        if "judge" in query.validated_data:
            judges = judges.filter(pk=query.validated_data["judge"])
        judge = judges.first()
        handle = judge_predictions_open(judge) if judge is not None else None
        if handle is None:
            raise NotFound("This learned judge kept no out-of-fold predictions (not trained, or trained before "
                           "they were kept: train it again).")
        response = FileResponse(handle, content_type="application/x-ndjson", as_attachment=True,
                                filename=f"{self.project.slug}-judge-{judge.pk}-out-of-fold.jsonl")
        response["Cache-Control"] = "no-store"
        return response


class LearnedJudgeTrainView(ProjectScopedView):
    method_roles = {"POST": LEADS}
    serializer_class = JudgeSerializer

    @extend_schema(summary="Train a learned judge on the project's gold (leads)",
                   description="Queues the training for a worker (202); poll GET learned-judge/ for its status and "
                               "figures. 409 while another judge of the project is being trained.",
                   request=JudgeTrainSerializer, tags=["autolabel"],
                   responses={202: JudgeSerializer, 409: OpenApiResponse(
                       ErrorSerializer, description="Another judge of the project is being trained (`judge_in_progress`).")},
                   examples=[OpenApiExample("Queued", response_only=True, status_codes=["202"],
                                            value={**JUDGE_EXAMPLE, "status": "queued", "cross_validated": None,
                                                   "learning_curve": [], "seconds": None})])
    def post(self, request, slug):
        self.refuse_if_blind()
        body = JudgeTrainSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            judge = judge_train_create(self.project, created_by=request.user, shape=body.validated_data["shape"],
                                       learning_curve=body.validated_data["learning_curve"])
        except TrainingInProgress as running:
            raise Conflict(str(running), code="judge_in_progress") from None
        return Response(judge_report(judge), status=status.HTTP_202_ACCEPTED)


class LearnedJudgeLabelView(ProjectScopedView):
    method_roles = {"POST": LEADS}
    serializer_class = JobSerializer

    @extend_schema(summary="Label the project with a learned judge (leads)",
                   description="A pre-labelling job whose labeller is the trained judge (no endpoint): every turn "
                               "outside the qualification set. Refused (400) for a judge of another protocol version.",
                   request=JudgeLabelSerializer, responses={201: JobSerializer}, tags=["autolabel"],
                   examples=[OpenApiExample("Queued", response_only=True, status_codes=["201"],
                                            value={**JOB_EXAMPLE, "profile": None, "model": "learned judge #2",
                                                   "samples": 20, "threshold": 10, "status": "queued"})])
    def post(self, request, slug):
        self.refuse_if_blind()
        body = JudgeLabelSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        job = learned_job_start(self.project, request.user, body.validated_data["judge"], field="judge")
        job = AutoLabelJob.objects.select_related("profile", "prompt_version", "created_by").get(pk=job.pk)
        return Response(JobSerializer(job).data, status=status.HTTP_201_CREATED)
