"""A job's LLM faithfulness report (leads): the page's numbers, the command's JSON (docs/autolabel.md)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from annotator.domain.protocol.document import default_protocol
from autolabel.faithfulness.report import faithfulness_report, measures
from autolabel.models import AutoLabelJob

from ..permissions import LEADS, ProjectScopedView


def _interval():
    return serializers.ListField(child=serializers.FloatField(), min_length=2, max_length=2, allow_null=True,
                                 help_text="[low, high], the 95 % interval; null without gold drawn at random.")


class FaithfulnessFiguresSerializer(serializers.Serializer):
    auto = serializers.FloatField(allow_null=True, help_text="The pre-labeler's estimate over all the job's turns "
                                                              "(null when no sentence is in the denominator).")
    gold_only = serializers.FloatField(allow_null=True, help_text="From the gold of the turns drawn at random alone.")
    gold_only_ci95 = _interval()
    corrected = serializers.FloatField(allow_null=True, help_text="Prediction-powered (PPI++): every pre-label, "
                                                                   "corrected by the gold of the drawn turns.")
    corrected_ci95 = _interval()


class FaithfulnessGroupSerializer(serializers.Serializer):
    sentences = serializers.IntegerField(help_text="Sentences of the job's finished turns.")
    gold_sentences = serializers.IntegerField(help_text="Gold sentences used: those of the turns drawn at random.")
    gold_turns = serializers.IntegerField(help_text="Turns drawn at random with gold on at least one sentence (used).")
    # The measures are the project's protocol's (``measures`` lists them): these are the built-in CogniBench
    # protocol's; another protocol's are hallucination_rate, <family>_share (every family but the first) and
    # <family>_hallucination_rate, named after its families.
    hallucination_rate = FaithfulnessFiguresSerializer(help_text="The protocol's hallucination group, all sentences.")
    cognitive_share = FaithfulnessFiguresSerializer(required=False, help_text="CogniBench's protocol: a family's "
                                                    "share of the sentences in some family (<family>_share).")
    factual_hallucination_rate = FaithfulnessFiguresSerializer(required=False, help_text="CogniBench's protocol: "
                                                               "the hallucinated share of a family's sentences "
                                                               "(<family>_hallucination_rate).")
    cognitive_hallucination_rate = FaithfulnessFiguresSerializer(required=False, help_text="As above.")


class FaithfulnessModelSerializer(FaithfulnessGroupSerializer):
    generator_model = serializers.CharField(allow_blank=True)


class FaithfulnessCalibrationSerializer(serializers.Serializer):
    drawn_turns = serializers.IntegerField(help_text="Finished turns drawn at random for this job.")
    used_turns = serializers.IntegerField(help_text="Drawn turns with gold on at least one sentence: used, on "
                                                    "their gold sentences.")
    gold_sentences = serializers.IntegerField()
    partial_turns = serializers.IntegerField(help_text="Used turns with sentences without gold (left unlabelled by "
                                                       "the source, or not decided yet).")
    sentences_without_gold = serializers.IntegerField()
    left_out_turns = serializers.IntegerField(help_text="Drawn turns without any gold yet: left out.")
    left_out_share = serializers.FloatField(help_text="left_out_turns / drawn_turns.")
    bias_warning = serializers.BooleanField(help_text="The share left out could bias the estimates (from 10 %).")
    other_turns = serializers.IntegerField(help_text="Turns with gold not drawn at random for this job: not used.")
    other_gold_sentences = serializers.IntegerField()
    statement = serializers.CharField(help_text="The same sentences as the page.")


class FaithfulnessMeasureSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="The measure's key in each group (from the project's protocol).")
    title = serializers.CharField(help_text="Its title, in the words of the protocol's document.")


class FaithfulnessSerializer(serializers.Serializer):
    job = serializers.IntegerField()
    overall = FaithfulnessGroupSerializer()
    models = FaithfulnessModelSerializer(many=True)
    calibration = FaithfulnessCalibrationSerializer()
    measures = FaithfulnessMeasureSerializer(many=True, help_text="The measures of the project's protocol, in order.")


FIGURES_EXAMPLE = {"auto": 0.3125, "gold_only": 0.25, "gold_only_ci95": [0.1931, 0.3069], "corrected": 0.2418,
                   "corrected_ci95": [0.1952, 0.2884]}
GROUP_EXAMPLE = {"sentences": 240000, "gold_sentences": 10000, "gold_turns": 400,
                 **{measure.id: FIGURES_EXAMPLE for measure in measures(default_protocol())}}
CALIBRATION_EXAMPLE = {"drawn_turns": 410, "used_turns": 400, "gold_sentences": 10000, "partial_turns": 85,
                       "sentences_without_gold": 90, "left_out_turns": 10, "left_out_share": 0.0244,
                       "bias_warning": False, "other_turns": 0, "other_gold_sentences": 0,
                       "statement": "10000 gold sentences on 400 turns drawn at random for this job correct the estimates. …"}


class JobFaithfulnessView(ProjectScopedView):
    """The faithfulness page as numbers: the same report, from the same function."""

    method_roles = {"GET": LEADS}
    serializer_class = FaithfulnessSerializer
    filter_backends = []

    @extend_schema(
        summary="A job's LLM faithfulness per generator model (leads)",
        description="Per generator model and overall: the measures of the project's protocol (`measures`: the "
                    "hallucination rate, each family's share and hallucination rate, named from the protocol's "
                    "document), each as the pre-labeler's estimate, the gold-only estimate "
                    "and the prediction-powered one with 95 % intervals (turns as clusters). Only gold of turns "
                    "drawn at random for this job corrects the estimates, on every drawn turn's gold sentences; "
                    "`calibration` says which drawn turns were left out and why. Floats rounded to 4 decimals.",
        examples=[OpenApiExample("Faithfulness", value={
            "job": 3, "overall": GROUP_EXAMPLE, "models": [{**GROUP_EXAMPLE, "generator_model": "model-a"}],
            "calibration": CALIBRATION_EXAMPLE,
            "measures": [{"id": m.id, "title": m.title} for m in measures(default_protocol())]})],
        tags=["autolabel"],
    )
    def get(self, request, slug, pk):
        self.refuse_if_blind()  # estimated with gold, the gold of the turns the lead is blind on included
        job = get_object_or_404(AutoLabelJob, pk=pk, project=self.project)
        report, _ = faithfulness_report(job)
        return Response(report)
